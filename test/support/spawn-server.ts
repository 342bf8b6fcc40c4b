import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createTestDatabase } from "../harness.ts";
import { serverArgs } from "./built.ts";

const root = path.resolve(import.meta.dirname, "../..");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The server as `npm start` runs it: its own process, on a fresh database (SQLite file or PostgreSQL database). */
export interface ServerProcess {
  child: ChildProcess;
  /** `http://127.0.0.1:<port>`, from the "listening on" line. */
  base: string;
  databaseUrl: string;
  /** Standard output and standard error, in the order their chunks arrived. */
  output(): string;
  /** Standard output alone. */
  stdout(): string;
  /** Resolves once the process has exited and its output has all been read. */
  closed: Promise<void>;
  stop(): Promise<void>;
}

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * Starts the built server (dist/server.mjs, as `npm start` does) on a new database; `prepare` runs on the database
 * URL first (after which the server migrates it, so `prepare` may migrate and write too). Resolves once it listens.
 */
export async function spawnServer(
  env: Record<string, string> = {},
  prepare?: (databaseUrl: string) => Promise<void>,
): Promise<ServerProcess> {
  const dir = mkdtempSync(path.join(tmpdir(), "muster-proc-"));
  const database = await createTestDatabase(dir);
  await prepare?.(database.url);
  const child = spawn(process.execPath, serverArgs, {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(await freePort()),
      HOST: "127.0.0.1",
      DATABASE_URL: database.url,
      STORAGE_DIR: path.join(dir, "files"),
      LOG_LEVEL: "warn",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let stdout = "";
  child.stdout.on("data", (chunk) => {
    out += chunk;
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => (out += chunk));
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const closed = new Promise<void>((resolve) => child.on("close", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    const listening = /listening on (http:\/\/\S+)/.exec(out);
    if (listening)
      return {
        child,
        base: listening[1],
        databaseUrl: database.url,
        output: () => out,
        stdout: () => stdout,
        closed,
        stop,
      };
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the server did not start:\n${out}`);
    }
    await sleep(50);
  }
}
