import { Agent, request, type ClientRequest } from "node:http";
import { connect } from "node:net";
import { afterEach, describe, expect, test } from "vitest";
import { spawnServer, type ServerProcess } from "./support/spawn-server.ts";

// SIGTERM under load, on the built server as `npm start` runs it: every request written before the signal is answered
// in full, later ones may be refused, and the process exits 0 once the last one is answered.

/** What happened to one request. */
interface Outcome {
  /** Its bytes were in the kernel (the request's `finish`) before the signal was sent. */
  sentBeforeSignal: boolean;
  kind: "keep-alive" | "per-request";
  /** Response headers arrived. */
  started: boolean;
  status?: number;
  /** The body arrived in full and parsed. */
  complete: boolean;
  error?: string;
  reusedSocket: boolean;
}

let server: ServerProcess | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

async function apiKey(databaseUrl: string): Promise<string> {
  const { createApiKey } = await import("../src/auth/accounts.ts");
  const { openDatabase } = await import("../src/db/prisma.ts");
  const db = await openDatabase(databaseUrl);
  const { key } = await createApiKey(db.store, { account: "shutdown", scopes: "*" });
  await db.close();
  return key;
}

/**
 * `clients` keep-alive clients (one socket each) and as many that open a connection per request, each sending
 * `GET /v2/ranks` again as soon as the last one is answered, until `stop()`.
 */
function load(base: string, key: string, clients: number) {
  const url = new URL("/v2/ranks?limit=5", base);
  const outcomes: Outcome[] = [];
  let signalled = false;
  let stopped = false;
  const agents: Agent[] = [];

  function send(kind: Outcome["kind"], agent: Agent | false): Promise<Outcome> {
    return new Promise((resolve) => {
      const outcome: Outcome = { sentBeforeSignal: false, kind, started: false, complete: false, reusedSocket: false };
      const headers: Record<string, string> = {
        authorization: `Bearer ${key}`,
        ...(agent ? {} : { connection: "close" }),
      };
      const req: ClientRequest = request(url, { agent, headers }, (res) => {
        outcome.started = true;
        outcome.status = res.statusCode;
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => {
          try {
            JSON.parse(body);
            outcome.complete = res.complete;
          } catch {
            outcome.error = "incomplete body";
          }
          resolve(outcome);
        });
        res.on("error", (error) => {
          outcome.error = (error as NodeJS.ErrnoException).code ?? error.message;
          resolve(outcome);
        });
      });
      req.on("finish", () => (outcome.sentBeforeSignal = !signalled));
      req.on("error", (error) => {
        outcome.error = (error as NodeJS.ErrnoException).code ?? error.message;
        outcome.reusedSocket = req.reusedSocket;
        resolve(outcome);
      });
      req.end();
    });
  }

  async function loop(kind: Outcome["kind"], agent: Agent | false) {
    while (!stopped) {
      const outcome = await send(kind, agent);
      outcomes.push(outcome);
      // Refused: the listener is closed, there is nothing more to learn from this client.
      if (outcome.error === "ECONNREFUSED") return;
    }
  }

  const running = [
    ...Array.from({ length: clients }, () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      agents.push(agent);
      return loop("keep-alive", agent);
    }),
    ...Array.from({ length: clients }, () => loop("per-request", false)),
  ];
  return {
    outcomes,
    signalled: () => (signalled = true),
    async stop() {
      stopped = true;
      await Promise.all(running);
      for (const agent of agents) agent.destroy();
    },
  };
}

async function until(condition: () => boolean, what: string) {
  const deadline = Date.now() + 60_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.each([1, 2])("SIGTERM with WORKERS=%i", (workers) => {
  test("every request written before the signal is answered in full; later ones are refused, never cut; exit 0", async () => {
    server = await spawnServer({
      WORKERS: String(workers),
      NODE_ENV: "production",
      RATE_LIMIT_PER_MINUTE: "1000000",
      SHUTDOWN_GRACE_MS: "30000",
      LOG_LEVEL: "info",
    });
    const { child } = server;
    const key = await apiKey(server.databaseUrl);
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const traffic = load(server.base, key, 15);
    // Every client has been answered a few times: connections are open, busy and idle, when the signal comes.
    await until(() => traffic.outcomes.filter((o) => o.complete).length >= 150, "traffic");
    child.kill("SIGTERM");
    traffic.signalled();
    const code = await exited;
    await traffic.stop();

    const before = traffic.outcomes.filter((o) => o.sentBeforeSignal);
    const after = traffic.outcomes.filter((o) => !o.sentBeforeSignal);
    const failed = (list: Outcome[]) => list.filter((o) => !o.complete || o.status !== 200);
    const summary = (list: Outcome[]) =>
      list.map((o) => `${o.kind} ${o.status ?? "-"} ${o.error ?? ""}${o.reusedSocket ? " (reused)" : ""}`);
    expect(code, server.output()).toBe(0);
    expect(before.filter((o) => o.kind === "keep-alive").length).toBeGreaterThan(0);
    expect(before.filter((o) => o.kind === "per-request").length).toBeGreaterThan(0);
    expect(summary(failed(before)), "requests written before SIGTERM that were not answered in full").toEqual([]);
    // A response, once begun, is finished. Later requests may fail only before any answer, and so before the server
    // read them: refused at connect, or reset by the kernel (a connection it queued in the instant between the last
    // accept and the listening socket's close, or a kept-alive socket the server closed as idle as the request left).
    expect(summary(after.filter((o) => o.started && !o.complete)), "responses cut").toEqual([]);
    const unanswered = after.filter((o) => !o.started);
    expect(summary(unanswered.filter((o) => !["ECONNREFUSED", "ECONNRESET", "EPIPE"].includes(o.error ?? "")))).toEqual(
      [],
    );
    expect(server.output()).not.toMatch(/grace period/);

    // The log is written asynchronously: every answered request is in it by the time the process has exited, and
    // every line is whole (the workers share standard output with the primary).
    await server.closed;
    const lines = server
      .stdout()
      .trimEnd()
      .split("\n")
      .map((line) => {
        try {
          return JSON.parse(line) as Record<string, unknown>;
        } catch {
          return line;
        }
      });
    expect(
      lines.filter((line) => typeof line === "string"),
      "lines that are not whole JSON objects",
    ).toEqual([]);
    const logged = lines.filter(
      (line) => typeof line === "object" && line.msg === "request" && line.path === "/v2/ranks" && line.status === 200,
    );
    expect(logged.length).toBeGreaterThanOrEqual(traffic.outcomes.filter((o) => o.complete && o.status === 200).length);
  }, 120_000);
});

test("SHUTDOWN_GRACE_MS: 30 s by default, a positive integer", async () => {
  const { loadConfig } = await import("../src/core/config.ts");
  expect(loadConfig({}).shutdownGraceMs).toBe(30_000);
  expect(loadConfig({ SHUTDOWN_GRACE_MS: "5000" }).shutdownGraceMs).toBe(5000);
  expect(() => loadConfig({ SHUTDOWN_GRACE_MS: "-1" })).toThrow();
});

test("SHUTDOWN_GRACE_MS: a request still unfinished when the grace period ends does not hold the process (exit 1, logged)", async () => {
  server = await spawnServer({ SHUTDOWN_GRACE_MS: "500", NODE_ENV: "production" });
  const { child } = server;
  const url = new URL(server.base);
  // Headers begun, never finished: the server must wait for this request, up to the grace period.
  const socket = connect(Number(url.port), url.hostname);
  await new Promise<void>((resolve) => socket.on("connect", () => resolve()));
  socket.on("error", () => {});
  socket.write("GET /v2/ranks HTTP/1.1\r\nHost: x\r\n");
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  child.kill("SIGTERM");
  expect(await exited).toBe(1);
  expect(server.output()).toMatch(/grace period/);
  socket.destroy();
}, 60_000);

describe.each([1, 2])("SIGTERM with WORKERS=%i, requests held open across it", (workers) => {
  test("30 requests on keep-alive connections, each known received (100 Continue) before the signal, all answered 200; exit 0", async () => {
    server = await spawnServer({
      WORKERS: String(workers),
      NODE_ENV: "production",
      RATE_LIMIT_PER_MINUTE: "1000000",
      LOG_LEVEL: "info",
    });
    const { child, base } = server;
    const key = await apiKey(server.databaseUrl);
    const agents = Array.from({ length: 30 }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
    const body = JSON.stringify({ query: "{ ranks(first: 5) { totalCount } }" });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    /** Resolves with the status, or the error's code; `received` once the server has read the request's headers. */
    function send(agent: Agent, held: boolean) {
      let received!: () => void;
      const read = new Promise<void>((resolve) => (received = resolve));
      const answered = new Promise<string>((resolve) => {
        const req = request(
          new URL(held ? "/graphql" : "/v2/ranks", base),
          {
            agent,
            method: held ? "POST" : "GET",
            headers: {
              authorization: `Bearer ${key}`,
              ...(held
                ? { "content-type": "application/json", "content-length": String(body.length), expect: "100-continue" }
                : {}),
            },
          },
          (res) => {
            if (!held) received();
            let text = "";
            res.setEncoding("utf8");
            res.on("data", (chunk: string) => (text += chunk));
            res.on("end", () => resolve(`${res.statusCode}${held && !text.includes("totalCount") ? " " + text : ""}`));
          },
        );
        req.on("error", (error) => {
          received();
          resolve(`${(error as NodeJS.ErrnoException).code ?? error.message}${req.reusedSocket ? " (reused)" : ""}`);
        });
        // node:http answers 100 Continue once it has parsed the headers: the request is in the server's hands.
        if (held) req.on("continue", () => (received(), void released.then(() => req.end(body))));
        else req.end();
      });
      return { read, answered };
    }
    // Every agent's connection is open and idle (kept alive) on one of the workers before the held requests use it.
    expect(await Promise.all(agents.map((agent) => send(agent, false).answered))).toEqual(agents.map(() => "200"));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const held = agents.map((agent, i) => send(agent, i % 3 !== 2));
    await Promise.all(held.map((h) => h.read));
    child.kill("SIGTERM");
    // Every serving process has begun its shutdown (it logs that line) before the held bodies are sent.
    await until(() => (server!.output().match(/shutting down/g) ?? []).length === workers, "shutdown begun");
    release();
    const answers = await Promise.all(held.map((h) => h.answered));
    for (const agent of agents) agent.destroy();
    expect(answers, server.output()).toEqual(held.map(() => "200"));
    expect(await exited, server.output()).toBe(0);
    expect(server.output()).not.toMatch(/grace period/);
  }, 120_000);
});

test("HEADERS_TIMEOUT_MS 15 s and REQUEST_TIMEOUT_MS 60 s by default; positive integers, headers no longer than the request", async () => {
  const { loadConfig } = await import("../src/core/config.ts");
  expect(loadConfig({})).toMatchObject({ headersTimeoutMs: 15_000, requestTimeoutMs: 60_000 });
  expect(loadConfig({ HEADERS_TIMEOUT_MS: "1000", REQUEST_TIMEOUT_MS: "2000" })).toMatchObject({
    headersTimeoutMs: 1000,
    requestTimeoutMs: 2000,
  });
  expect(() => loadConfig({ HEADERS_TIMEOUT_MS: "0" })).toThrow(
    'HEADERS_TIMEOUT_MS must be a positive integer, got "0"',
  );
  expect(() => loadConfig({ REQUEST_TIMEOUT_MS: "soon" })).toThrow("REQUEST_TIMEOUT_MS must be a positive integer");
  expect(() => loadConfig({ HEADERS_TIMEOUT_MS: "70000" })).toThrow(
    "HEADERS_TIMEOUT_MS (70000) must not be longer than REQUEST_TIMEOUT_MS (60000)",
  );
});

test("a bad HEADERS_TIMEOUT_MS stops the start with one line naming it (exit 1)", async () => {
  await expect(spawnServer({ HEADERS_TIMEOUT_MS: "-5" })).rejects.toThrow(
    'HEADERS_TIMEOUT_MS must be a positive integer, got "-5"',
  );
});

describe.each([1, 2])("HEADERS_TIMEOUT_MS with WORKERS=%i", (workers) => {
  test("a client sending its headers a byte a second is cut off (408, connection closed) at about the setting", async () => {
    server = await spawnServer({
      WORKERS: String(workers),
      NODE_ENV: "production",
      HEADERS_TIMEOUT_MS: "1000",
      REQUEST_TIMEOUT_MS: "2000",
    });
    const url = new URL(server.base);
    const socket = connect(Number(url.port), url.hostname);
    socket.on("error", () => {});
    let answer = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (answer += chunk));
    const closed = new Promise<"closed">((resolve) => socket.on("close", () => resolve("closed")));
    const head = "GET /v2/ranks HTTP/1.1\r\nHost: x\r\nX-Slow: " + "a".repeat(60);
    let at = 0;
    const drip = setInterval(() => {
      if (!socket.destroyed) socket.write(head[at++ % head.length]);
    }, 1000);
    const outcome = await Promise.race([
      closed,
      new Promise<"still open">((resolve) => setTimeout(() => resolve("still open"), 10_000)),
    ]);
    clearInterval(drip);
    socket.destroy();
    expect(outcome).toBe("closed");
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  }, 60_000);
});
