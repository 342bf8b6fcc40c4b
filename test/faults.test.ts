import { afterAll, afterEach, beforeEach, describe, expect, test } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient } from "@libsql/client";
import { migrate } from "../src/db/migrate.ts";
import { openDatabase } from "../src/db/prisma.ts";
import { isBusyError } from "../src/db/sqlite.ts";
import { createApiKey } from "../src/auth/accounts.ts";
import { serverArgs } from "./support/built.ts";
import { freePort } from "./support/spawn-server.ts";

/**
 * The server as it runs in production: a separate `node` process running the built dist/server.mjs on a
 * database file, stopped with SIGTERM or killed with SIGKILL.
 */
const root = path.resolve(import.meta.dirname, "..");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Server {
  child: ChildProcess;
  base: URL;
  output: () => string;
  /** Resolves with the first stdout line matching `pattern`. */
  line(pattern: RegExp, timeoutMs?: number): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** These tests are about the SQLite file and the process; the PostgreSQL pass of the suite has nothing to add. */
const onSqlite = process.env.MUSTER_TEST_DATABASE !== "postgresql";

const started: Server[] = [];
let dir: string;
let databaseUrl: string;
let key: string;

beforeEach(async () => {
  if (!onSqlite) return;
  dir = mkdtempSync(path.join(tmpdir(), "muster-faults-"));
  databaseUrl = `file:${path.join(dir, "muster.db")}`;
  await migrate(databaseUrl);
  const db = await openDatabase(databaseUrl);
  key = (await createApiKey(db.store, { account: "faults", scopes: "*" })).key;
  await db.close();
});
afterEach(async () => {
  for (const server of started.splice(0)) {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill("SIGKILL");
    await server.exited;
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});
const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
afterAll(() => agent.destroy());

async function startServer(env: Record<string, string> = {}): Promise<Server> {
  const child = spawn(process.execPath, serverArgs, {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(await freePort()),
      HOST: "127.0.0.1",
      DATABASE_URL: databaseUrl,
      STORAGE_DIR: path.join(dir, "files"),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const waiters: Array<() => void> = [];
  child.stdout.on("data", (chunk) => {
    out += chunk;
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr.on("data", (chunk) => (out += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => {
      for (const wake of waiters.splice(0)) wake();
      resolve({ code, signal });
    }),
  );
  const line = async (pattern: RegExp, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = out.split("\n").find((l) => pattern.test(l));
      if (found) return found;
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`server exited before printing ${pattern}:\n${out}`);
      if (Date.now() > deadline) throw new Error(`no line ${pattern} in:\n${out}`);
      await Promise.race([new Promise<void>((wake) => waiters.push(wake)), sleep(100)]);
    }
  };
  const server: Server = { child, base: new URL("http://x"), output: () => out, line, exited };
  started.push(server);
  server.base = new URL(/listening on (http:\/\/\S+)/.exec(await line(/listening on/))![1]);
  return server;
}

interface Reply {
  status: number;
  /** The members the tests read: a created row, or a list (its rows and `meta`), or an attach's `attached`. */
  body: { data: { id: number } | unknown[]; meta: { total: number }; attached: number[] };
}

/** A request whose body is sent only when `send` is called; `accepted` resolves once the server has taken it (100 Continue). */
function held(server: Server, method: string, url: string, body: unknown, newConnection = false) {
  const payload = JSON.stringify(body);
  let resolveAccepted!: () => void;
  const accepted = new Promise<void>((resolve) => (resolveAccepted = resolve));
  const req = http.request(new URL(url, server.base), {
    method,
    agent: newConnection ? false : agent,
    headers: {
      authorization: `Bearer ${key}`,
      accept: "application/json",
      "content-type": "application/json",
      "content-length": Buffer.byteLength(payload),
      expect: "100-continue",
    },
  });
  req.on("continue", resolveAccepted);
  const reply = new Promise<Reply>((resolve, reject) => {
    req.on("error", reject);
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null }));
      res.on("error", reject);
    });
  });
  reply.catch(() => undefined);
  req.flushHeaders();
  return {
    accepted,
    reply,
    send() {
      req.end(payload);
      return reply;
    },
  };
}

function call(server: Server, method: string, url: string, body?: unknown, newConnection = false): Promise<Reply> {
  const request = held(server, method, url, body ?? {}, newConnection);
  return request.send();
}

/** True when a connection of ours cannot take the write lock now: a write transaction is open elsewhere. */
async function writeLockHeld(): Promise<boolean> {
  const probe = createClient({ url: databaseUrl });
  try {
    await probe.execute("PRAGMA busy_timeout = 0");
    await probe.execute("BEGIN IMMEDIATE");
    await probe.execute("ROLLBACK");
    return false;
  } catch (error) {
    if (isBusyError(error)) return true;
    throw error;
  } finally {
    probe.close();
  }
}

/** Waits until a write transaction has held the lock for `times` probes in a row. */
async function untilWriting(times = 3, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (let seen = 0; seen < times; ) {
    if (Date.now() > deadline) throw new Error("no write transaction started");
    seen = (await writeLockHeld()) ? seen + 1 : 0;
    await sleep(5);
  }
}

const bigBatch = (count: number, tag: string) => ({
  resources: Array.from({ length: count }, (_, i) => ({ name: `${tag} ${i}`, description: "x".repeat(2000) })),
});

const rankCount = async (server: Server) => {
  const r = await call(server, "GET", "/v2/ranks?limit=1");
  expect(r.status).toBe(200);
  return r.body.meta.total;
};

describe.runIf(onSqlite)("SIGTERM", () => {
  test("requests in flight are finished with 2xx, new connections are refused, the process exits 0", async () => {
    const server = await startServer();
    expect(await rankCount(server)).toBe(0); // the key's first use is recorded now, not mid-test

    const batch = call(server, "POST", "/v2/ranks/batch", bigBatch(1000, "Batch"));
    await untilWriting();
    const pending = Array.from({ length: 5 }, (_, i) => held(server, "POST", "/v2/ranks", { name: `Late ${i}` }));
    await Promise.all(pending.map((p) => p.accepted));

    server.child.kill("SIGTERM");
    expect(await server.line(/SIGTERM: shutting down/)).toMatch(/6 request\(s\) in flight/);
    const refused = await call(server, "GET", "/v2/ranks", undefined, true).then(
      (r) => `answered ${r.status}`,
      (e: NodeJS.ErrnoException) => e.code,
    );
    expect(refused).toBe("ECONNREFUSED");

    const replies = await Promise.all([batch, ...pending.map((p) => p.send())]);
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(replies[0].body.data).toHaveLength(1000);
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.output()).toMatch(/Stopped/);

    const db = await openDatabase(databaseUrl);
    try {
      expect(await db.prisma.rank.count()).toBe(1005);
    } finally {
      await db.close();
    }
  });

  test("a request that never finishes does not keep the process: it exits 1 once SHUTDOWN_GRACE_MS is over", async () => {
    const server = await startServer({ SHUTDOWN_GRACE_MS: "1500" });
    const stuck = held(server, "POST", "/v2/ranks", { name: "Never sent" });
    await stuck.accepted;
    const t0 = Date.now();
    server.child.kill("SIGTERM");
    expect(await server.line(/SIGTERM: shutting down/)).toMatch(/1 request\(s\) in flight/);
    expect(await server.exited).toEqual({ code: 1, signal: null });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1500);
    expect(server.output()).toMatch(/Shutdown grace period \(1500 ms\) over with 1 request\(s\) in flight/);
    await expect(stuck.reply).rejects.toThrow();
  });

  test("an idle server with idle keep-alive connections exits at once", async () => {
    const server = await startServer();
    await Promise.all(Array.from({ length: 4 }, () => call(server, "GET", "/v2/ranks")));
    const t0 = Date.now();
    server.child.kill("SIGTERM");
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(Date.now() - t0, "not held open by the keep-alive timeout (5 s)").toBeLessThan(4000);
  });
});

describe.runIf(onSqlite)("SIGKILL", () => {
  test("killed in the middle of a batch: after a restart the batch is entirely absent, and the database is sound", async () => {
    const first = await startServer();
    expect(await rankCount(first)).toBe(0);
    const batch = call(first, "POST", "/v2/ranks/batch", bigBatch(1000, "Killed"));
    await untilWriting();
    first.child.kill("SIGKILL");
    await expect(batch).rejects.toThrow();
    expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });

    const second = await startServer();
    // Never a part: the kill came while the batch's transaction held the write lock, so none of it.
    expect(await rankCount(second)).toBe(0);
    expect((await call(second, "POST", "/v2/ranks", { name: "After" })).status).toBe(200);
    expect((await call(second, "POST", "/v2/ranks/batch", bigBatch(50, "Again"))).status).toBe(200);
    expect(await rankCount(second)).toBe(51);
    const check = createClient({ url: databaseUrl });
    try {
      expect((await check.execute("PRAGMA integrity_check")).rows[0][0]).toBe("ok");
    } finally {
      check.close();
    }
    second.child.kill("SIGTERM");
    expect(await second.exited).toEqual({ code: 0, signal: null });
  });
});

describe.runIf(onSqlite)("two server processes on one database file", () => {
  test("the same ids attached through both at once: one link row per id, no server error", async () => {
    const [a, b] = await Promise.all([startServer(), startServer()]);
    const units: number[] = [];
    for (let i = 0; i < 5; i++)
      units.push(((await call(a, "POST", "/v2/units", { name: `Unit ${i}` })).body.data as { id: number }).id);
    const group = ((await call(a, "POST", "/v2/groups", { name: "Group" })).body.data as { id: number }).id;
    await call(b, "GET", "/v2/ranks");
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        call(i % 2 ? a : b, "POST", `/v2/groups/${group}/units/attach`, { resources: units }),
      ),
    );
    expect(replies.filter((r) => r.status !== 200)).toEqual([]);
    expect(replies.flatMap((r) => r.body.attached).sort()).toEqual([...units].sort());
    const batches = await Promise.all(
      Array.from({ length: 6 }, (_, i) => call(i % 2 ? a : b, "POST", "/v2/ranks/batch", bigBatch(50, `P${i}`))),
    );
    expect(batches.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const db = await openDatabase(databaseUrl);
    try {
      const rows = await db.prisma.groupUnit.findMany({ where: { groupId: group } });
      expect(rows.map((r) => r.unitId).sort()).toEqual([...units].sort());
      const orders = (await db.prisma.rank.findMany({ select: { order: true } })).map((r) => r.order);
      expect(orders).toHaveLength(300);
      expect(new Set(orders).size).toBe(300);
    } finally {
      await db.close();
    }
    a.child.kill("SIGTERM");
    b.child.kill("SIGTERM");
    expect(await a.exited).toEqual({ code: 0, signal: null });
    expect(await b.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(path.join(dir, "muster.db"))).toBe(true);
  });
});
