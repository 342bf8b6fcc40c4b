import { afterEach, expect, test } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createTestDatabase } from "./harness.ts";
import { freePort } from "./support/spawn-server.ts";

/**
 * `npm start` itself, as the README runs it: its prestart builds dist/ when stale and plain `node` serves the bundle, which
 * finds the migrations and answers; SIGTERM to the process group (what a process manager sends) stops it cleanly.
 * The other process tests run dist/server.mjs directly (test/support/built.ts).
 */
const root = path.resolve(import.meta.dirname, "..");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

/** The pid of the node process in `group` running dist/server.mjs (npm → sh → node). */
function serverProcessOf(group: number): number {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Fields after the command's closing parenthesis: state, ppid, pgrp.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const pgrp = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
      const [command, ...args] = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (pgrp === group && path.basename(command) === "node" && args.includes("dist/server.mjs")) return Number(entry);
    } catch {
      // the process ended while we looked
    }
  }
  throw new Error(`no dist/server.mjs process in group ${group}`);
}

const environmentOf = (pid: number) => readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");

test("npm start builds dist/, serves it with plain node, and stops on SIGTERM", { timeout: 90_000 }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "muster-start-"));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const database = await createTestDatabase(dir);
  cleanup.push(() => database.drop());
  // Its own process group (npm → sh → node), so that one signal reaches the server as it would under a supervisor.
  const child: ChildProcess = spawn("npm", ["start"], {
    cwd: root,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      PORT: String(await freePort()),
      HOST: "127.0.0.1",
      DATABASE_URL: database.url,
      STORAGE_DIR: path.join(dir, "files"),
      NODE_ENV: "production",
      LOG_LEVEL: "warn",
    },
  });
  let out = "";
  child.stdout!.on("data", (chunk) => (out += chunk));
  child.stderr!.on("data", (chunk) => (out += chunk));
  // Closed once every process of the group holding the pipes (the server included) has exited.
  const closed = new Promise<void>((resolve) => child.stdout!.on("close", () => resolve()));
  cleanup.push(async () => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // already gone
    }
  });

  const deadline = Date.now() + 60_000;
  let listening: RegExpExecArray | null = null;
  while (!(listening = /listening on (http:\/\/\S+)/.exec(out))) {
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`npm start did not start the server:\n${out}`);
    await sleep(50);
  }
  // Built at the start of the test run, so prestart normally finds it current; test/read-only-start.test.ts pins that.
  expect(out).toMatch(/dist\/ is current|Built dist\/server\.mjs/);
  expect(out).toMatch(
    /node --enable-source-maps --max-old-space-size=\S+ --max-semi-space-size=\d+ --heap-growing-percent=\S+ dist\/server\.mjs/,
  );
  expect(out).toMatch(/Applied migrations: \d+_init/);
  // glibc reads MALLOC_ARENA_MAX once, when the process starts, so npm start must hand it to node's own environment.
  expect(environmentOf(serverProcessOf(child.pid!))).toContain("MALLOC_ARENA_MAX=2");
  const health = await fetch(`${listening[1]}/health`);
  expect(health.status).toBe(200);
  expect(await health.json()).toEqual({ status: "ok" });

  process.kill(-child.pid!, "SIGTERM");
  await closed;
  expect(out).toMatch(/SIGTERM: shutting down/);
  expect(out).toMatch(/"msg":"Stopped"/);
});
