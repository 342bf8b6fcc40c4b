import { afterAll, beforeAll, expect, test } from "vitest";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createTestDatabase, testPostgresUrl } from "./harness.ts";
import { serverArgs } from "./support/built.ts";
import { freePort } from "./support/spawn-server.ts";

/**
 * A service that cannot start says why in one line (JSON under NODE_ENV=production), names the setting, masks the
 * database password, prints no stack unless LOG_LEVEL=debug, and exits non-zero.
 */
let dir: string;
let occupied: Server;
let occupiedPort: number;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "muster-startup-"));
  occupied = createServer();
  await new Promise<void>((resolve) => occupied.listen(0, "127.0.0.1", resolve));
  occupiedPort = (occupied.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((resolve) => occupied.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

async function start(env: Record<string, string>): Promise<{ code: number | null; lines: string[]; output: string }> {
  const child = spawn(process.execPath, serverArgs, {
    env: {
      ...process.env,
      HOST: "127.0.0.1",
      PORT: String(await freePort()),
      DATABASE_URL: `file:${path.join(dir, `${Math.random()}.db`)}`,
      STORAGE_DIR: path.join(dir, "files"),
      LOG_LEVEL: "info",
      NODE_ENV: "development",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const timer = setTimeout(() => child.kill("SIGKILL"), 45_000);
  const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
  clearTimeout(timer);
  return { code, lines: output.split("\n").filter(Boolean), output };
}

/** The process's last line: the reason it stopped. */
const last = (r: { lines: string[] }) => r.lines.at(-1) ?? "";
const noStack = (r: { output: string }) => expect(r.output).not.toMatch(/\n\s+at /);

test("malformed numbers and unknown values name their variable", async () => {
  for (const [env, line] of [
    [{ PORT: "abc" }, 'PORT must be a positive integer up to 65535, got "abc"'],
    [{ PORT: "70000" }, 'PORT must be a positive integer up to 65535, got "70000"'],
    [{ WORKERS: "-2" }, 'WORKERS must be a positive integer, got "-2"'],
    [{ BODY_MAX_BYTES: "2MB" }, 'BODY_MAX_BYTES must be a positive integer, got "2MB"'],
    [{ LOG_LEVEL: "loud" }, 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"'],
  ] as const) {
    const r = await start(env);
    expect([env, r.code, r.lines]).toEqual([env, 1, [line]]);
  }
});

test("an unsupported database URL scheme is one line, the password masked", async () => {
  const r = await start({ DATABASE_URL: "mysql://admin:hunter2@db.example/muster" });
  expect(r.code).toBe(1);
  expect(r.lines).toEqual([
    'DATABASE_URL must be a file: URL (SQLite) or a postgresql:// URL (PostgreSQL), got "mysql://admin:***@db.example/muster"',
  ]);
  expect(r.output).not.toContain("hunter2");
});

test("a PostgreSQL database that does not exist, or a server that cannot be reached: one line, password masked, no stack", async () => {
  const missing = new URL(testPostgresUrl);
  missing.password = "s3cret";
  missing.pathname = "/muster_no_such_database";
  const r = await start({ DATABASE_URL: missing.toString() });
  expect(r.code).toBe(1);
  expect(r.lines).toHaveLength(1);
  expect(last(r)).toMatch(
    /^The database in DATABASE_URL does not exist \(postgresql:\/\/[^:]*:\*\*\*@.*\/muster_no_such_database\)/,
  );
  expect(r.output).not.toContain("s3cret");
  noStack(r);

  const port = await freePort();
  const unreachable = await start({ DATABASE_URL: `postgresql://muster:pw@127.0.0.1:${port}/muster` });
  expect(unreachable.code).toBe(1);
  expect(unreachable.lines).toEqual([
    `Cannot reach the database server in DATABASE_URL (postgresql://muster:***@127.0.0.1:${port}/muster): connect ECONNREFUSED 127.0.0.1:${port}`,
  ]);
  noStack(unreachable);
});

test("a port in use is one line naming PORT; with LOG_LEVEL=debug the stack follows", async () => {
  const r = await start({ PORT: String(occupiedPort), NODE_ENV: "production" });
  expect(r.code).toBe(1);
  expect(JSON.parse(last(r))).toMatchObject({
    level: "error",
    msg: `Port ${occupiedPort} is already in use (127.0.0.1:${occupiedPort}): stop the other server or set PORT to a free port`,
  });
  noStack(r);
  const debug = await start({ PORT: String(occupiedPort), LOG_LEVEL: "debug" });
  expect(debug.code).toBe(1);
  expect(debug.output).toContain(`Port ${occupiedPort} is already in use`);
  expect(debug.output).toMatch(/EADDRINUSE[^\n]*\n\s+at /);
});

test("in production, standard output is JSON lines only, and an empty database says how to create the first key", async () => {
  const database = await createTestDatabase(dir);
  try {
    const child = spawn(process.execPath, serverArgs, {
      env: {
        ...process.env,
        HOST: "127.0.0.1",
        PORT: String(await freePort()),
        DATABASE_URL: database.url,
        STORAGE_DIR: path.join(dir, "files"),
        NODE_ENV: "production",
        LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    const deadline = Date.now() + 45_000;
    while (!/listening on/.test(stdout) && Date.now() < deadline && child.exitCode === null)
      await new Promise((r) => setTimeout(r, 50));
    const base = /listening on (http:\/\/[\d.:]+)/.exec(stdout)![1];
    await (await fetch(`${base}/v2/ranks`)).arrayBuffer();
    child.kill("SIGTERM");
    await new Promise((resolve) => child.on("close", resolve));
    const lines = stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { msg: string; level: string; pid: number });
    expect(lines.map((l) => l.msg)).toEqual(
      expect.arrayContaining([
        'No account yet: create one and its first key with: npm run cli -- keys:create --account "My Unit" --scopes "*"',
        "request",
        "Stopped",
      ]),
    );
    expect(lines.every((l) => l.pid === child.pid)).toBe(true);
  } finally {
    await database.drop();
  }
});
