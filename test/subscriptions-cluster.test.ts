/**
 * Subscriptions against the server as `npm start` runs it: graphql-ws over a real WebSocket (the `ws` package as the
 * client's implementation), SSE over real HTTP, a shutdown with subscriptions open, the workers of `WORKERS=2`, and two
 * instances on one PostgreSQL database fanning events out through Redis.
 */
import { randomBytes } from "node:crypto";
import { inspect } from "node:util";
import type { FormattedExecutionResult, GraphQLFormattedError } from "graphql";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import pg from "pg";
import { createApiKey } from "../src/auth/accounts.ts";
import { openDatabase } from "../src/db/prisma.ts";
import { migrate } from "../src/db/migrate.ts";
import { setMaintenance } from "../src/http/maintenance.ts";
import { createEventBus } from "../src/events/bus.ts";
import type { CommittedEvents } from "../src/core/events.ts";
import { testPostgresUrl } from "./harness.ts";
import { requireRedis, requireService, testRedisUrl } from "./services.ts";
import { spawnServer, type ServerProcess } from "./support/spawn-server.ts";
import { readEventStream } from "./support/event-stream.ts";

const REDIS_URL = testRedisUrl;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function newKey(databaseUrl: string, account: string, scopes = "*") {
  const db = await openDatabase(databaseUrl);
  try {
    return (await createApiKey(db.store, { account, scopes })).key;
  } finally {
    await db.close();
  }
}

/** What the tests read of a record REST returns. */
interface Row {
  id: number;
}

/** A REST call on a connection of its own (with WORKERS=2 consecutive calls go to different workers). */
async function rest(base: string, key: string, method: string, path: string, body?: unknown): Promise<Row> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json",
      connection: "close",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json()) as { data: Row };
  if (response.status !== 200) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json.data;
}

/** A graphql-ws client; the key in `connectionParams`, or in the upgrade request's headers. */
function wsClient(base: string, auth: { params?: Record<string, unknown>; headers?: Record<string, string> }): Client {
  const headers = auth.headers;
  const Impl = headers
    ? class extends WebSocket {
        constructor(address: string, protocols?: string | string[]) {
          super(address, protocols, { headers });
        }
      }
    : WebSocket;
  return createClient({
    url: `${base.replace(/^http/, "ws")}/graphql`,
    webSocketImpl: Impl,
    connectionParams: auth.params,
    retryAttempts: 0,
    lazy: true,
  });
}

/** What the subscriptions below select of a change (each a part of it). */
interface Change {
  type?: string;
  action?: string;
  rowId: number;
  deletedId?: string | null;
  rankRecord?: {
    rowId: number;
    text: string;
    rank: { name: string };
    user: { name: string; rank: { name: string } | null };
  } | null;
  rank?: { name: string };
}

/** A result as graphql-ws delivers it: the fields these operations select. */
interface Data {
  rankRecordChanged: Change;
  rankChanged: Change;
  ranks: { nodes: { name: string }[] };
  createRank: { rank: { name: string } };
}
type Result = FormattedExecutionResult<Data, unknown>;

/** A result's data, or a failed expectation with its errors. */
function dataOf(result: Result) {
  expect(result.errors).toBeUndefined();
  expect(result.data).toBeDefined();
  return result.data!;
}

/** The code of a refusal's first error. */
const codeOf = (result: Result) => result.errors?.[0]?.extensions?.code;

/** The first result of `iterator`, or what refused it (graphql-ws rejects with the errors of a refused operation). */
async function first(iterator: AsyncIterator<Result>): Promise<Result> {
  try {
    return (await iterator.next()).value as Result;
  } catch (errors) {
    return { errors: errors as GraphQLFormattedError[] };
  }
}

/**
 * A subscription starts on the server a moment after the client sends it (the key is checked, Redis subscribed to):
 * writes with `write` until `iterator` yields, and returns the first result with every write made.
 */
async function firstAfterWrites<T, R = Result>(
  iterator: AsyncIterator<R>,
  write: () => Promise<T>,
  outputs: ServerProcess[] = [],
) {
  let received: { value: R } | null = null;
  let refused: unknown;
  const pending = iterator.next().then(
    (r) => (received = { value: r.value }),
    (error: unknown) => (refused = error ?? "closed"),
  );
  const written: T[] = [];
  // Writes go on until the subscription has one: on a loaded machine it can take seconds to be in place, and a write
  // before that is not its to see.
  const deadline = Date.now() + 45_000;
  while (!received && refused === undefined && Date.now() < deadline) {
    written.push(await write());
    await Promise.race([pending, sleep(250)]);
  }
  const servers = outputs.length ? `\n${outputs.map((s, i) => `server ${i}:\n${s.output()}`).join("\n")}` : "";
  expect(refused, `the subscription ended: ${inspect(refused)}${servers}`).toBeUndefined();
  expect(received, `no event arrived in 45 s of ${written.length} writes${servers}`).not.toBeNull();
  return { value: received!.value, written };
}

const RANK_RECORDS = `subscription { rankRecordChanged { type action rowId deletedId rankRecord { rowId text rank { name } user { name rank { name } } } } }`;

describe("one server of two workers: graphql-ws and SSE", () => {
  let server: ServerProcess;
  let key: string;
  let ids: { rank: number; user: number };
  const clients: Client[] = [];
  const open = (auth: Parameters<typeof wsClient>[1]) => {
    const c = wsClient(server.base, auth);
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    server = await spawnServer({ WORKERS: "2", SUBSCRIPTIONS_PER_KEY: "2" });
    key = await newKey(server.databaseUrl, "alpha");
    const rank = await rest(server.base, key, "POST", "/v2/ranks", { name: "Private", abbreviation: "PVT" });
    const user = await rest(server.base, key, "POST", "/v2/users", { name: "Ann Smith", email: "ann@example.com" });
    ids = { rank: rank.id, user: user.id };
  }, 120_000);
  afterAll(async () => {
    await Promise.all(clients.map(async (c) => c.dispose()));
    await server?.stop();
  });

  test("over WebSocket (key in connectionParams), a rank record created through REST arrives typed, with nested relations", async () => {
    const client = open({ params: { authorization: `Bearer ${key}` } });
    const changes = client.iterate<Data>({ query: RANK_RECORDS });
    const { value, written } = await firstAfterWrites(
      changes,
      () =>
        rest(server.base, key, "POST", "/v2/rank-records", {
          user_id: ids.user,
          rank_id: ids.rank,
          type: 0,
          text: "Enlisted",
        }),
      [server],
    );
    const change = dataOf(value).rankRecordChanged;
    expect(written.map((r) => r.id)).toContain(change.rowId);
    expect(change).toMatchObject({
      type: "rankrecord.created",
      action: "CREATED",
      deletedId: null,
      rankRecord: {
        rowId: change.rowId,
        text: "Enlisted",
        rank: { name: "Private" },
        user: { name: "Ann Smith", rank: { name: "Private" } },
      },
    });
    // Once started, every write arrives: a deletion with its id and no record.
    const last = written.at(-1)!.id;
    await rest(server.base, key, "DELETE", `/v2/rank-records/${last}`);
    let deleted: Change;
    do deleted = dataOf((await changes.next()).value as Result).rankRecordChanged;
    while (deleted.action !== "DELETED");
    expect(deleted).toMatchObject({ type: "rankrecord.deleted", rowId: last, rankRecord: null });
    expect(Buffer.from(deleted.deletedId ?? "", "base64").toString()).toBe(`RankRecord:${last}`);
    await changes.return?.();
  });

  test("over WebSocket with the key in the upgrade request's header; queries and mutations run over the socket too", async () => {
    const client = open({ headers: { authorization: `Bearer ${key}` } });
    const ranks = await first(client.iterate<Data>({ query: "{ ranks { nodes { name } } }" }));
    expect(ranks).toEqual({ data: { ranks: { nodes: [{ name: "Private" }] } } });
    const created = await first(
      client.iterate<Data>({
        query: 'mutation { createRank(input: { name: "Socket", abbreviation: "SKT" }) { rank { name } } }',
      }),
    );
    expect(created).toEqual({ data: { createRank: { rank: { name: "Socket" } } } });
    const changes = client.iterate<Data>({
      query: "subscription { rankChanged(where: { actions: [UPDATED] }) { action rank { name } } }",
    });
    const { value } = await firstAfterWrites(changes, async () => {
      const rank = await rest(server.base, key, "POST", "/v2/ranks", { name: "Temp", abbreviation: "TMP" });
      return rest(server.base, key, "PATCH", `/v2/ranks/${rank.id}`, { name: "Temp, renamed" });
    }, [server]);
    expect(dataOf(value).rankChanged).toEqual({ action: "UPDATED", rank: { name: "Temp, renamed" } });
    await changes.return?.();
  });

  test("over WebSocket, refusals carry their code: no key, a missing view scope, nesting, maintenance, the per-key cap", async () => {
    const keyless = await first(open({}).iterate<Data>({ query: "subscription { rankChanged { rowId } }" }));
    expect(codeOf(keyless)).toBe("UNAUTHENTICATED");

    const usersOnly = await newKey(server.databaseUrl, "alpha", "view:user");
    const forbidden = await first(
      open({ params: { authorization: `Bearer ${usersOnly}` } }).iterate<Data>({
        query: "subscription { rankRecordChanged { rowId } }",
      }),
    );
    expect(codeOf(forbidden)).toBe("FORBIDDEN");
    expect(forbidden.errors?.[0]?.message).toContain("view:rankrecord");

    const deep = `subscription { rankChanged { ${"rank { users { nodes { ".repeat(20)}rowId${" } } }".repeat(20)} } }`;
    const tooDeep = await first(open({ params: { authorization: `Bearer ${key}` } }).iterate<Data>({ query: deep }));
    expect(codeOf(tooDeep)).toBe("VALIDATION");

    const db = await openDatabase(server.databaseUrl);
    await setMaintenance(db.prisma, true);
    try {
      const down = await first(
        open({ params: { authorization: `Bearer ${key}` } }).iterate<Data>({
          query: "subscription { rankChanged { rowId } }",
        }),
      );
      expect(codeOf(down)).toBe("MAINTENANCE");
    } finally {
      await setMaintenance(db.prisma, false);
      await db.close();
    }

    const capped = await newKey(server.databaseUrl, "alpha");
    const client = open({ params: { authorization: `Bearer ${capped}` } });
    const held = [
      client.iterate<Data>({ query: "subscription { rankChanged { rowId } }" }),
      client.iterate<Data>({ query: "subscription { userChanged { rowId } }" }),
    ];
    const results = held.map((it) => it.next());
    // Both are open once each has received an event.
    await firstAfterWrites(
      { next: async () => ({ value: await Promise.all(results) }) },
      async () => {
        const rank = await rest(server.base, key, "POST", "/v2/ranks", { name: "Cap", abbreviation: "CAP" });
        await rest(server.base, key, "PATCH", `/v2/users/${ids.user}`, { name: `Ann ${rank.id}` });
      },
      [server],
    );
    const refused = await first(client.iterate<Data>({ query: "subscription { rankChanged { rowId } }" }));
    expect(codeOf(refused)).toBe("RATE_LIMITED");
    expect(refused.errors?.[0]?.message).toContain("SUBSCRIPTIONS_PER_KEY=2");
    await Promise.all(held.map(async (it) => it.return?.()));
    // Closing gives the places back (the server sees the client's `complete` a moment later).
    let reopened: Result | "open" | undefined;
    for (let attempt = 0; attempt < 40; attempt++) {
      const again = client.iterate<Data>({ query: "subscription { rankChanged { rowId } }" });
      const result = await Promise.race([
        again.next().then(
          (r) => r.value,
          (errors) => ({ errors }),
        ),
        sleep(300).then(() => "open"),
      ]);
      await again.return?.();
      if (result === "open" || !result.errors) {
        reopened = result;
        break;
      }
      await sleep(100);
    }
    expect(reopened).toBe("open");
  });

  test("a subscription receives the writes of both workers (they pass their events on through the primary)", async () => {
    const client = open({ params: { authorization: `Bearer ${key}` } });
    const changes = client.iterate<Data>({ query: "subscription { rankChanged { rowId } }" });
    await firstAfterWrites(
      changes,
      () => rest(server.base, key, "POST", "/v2/ranks", { name: "Warm", abbreviation: "W" }),
      [server],
    );
    // One connection per write: the primary hands them to the workers in turn, so half are written by the other worker.
    const made: number[] = [];
    for (let i = 0; i < 6; i++)
      made.push((await rest(server.base, key, "POST", "/v2/ranks", { name: `Rank ${i}`, abbreviation: `R${i}` })).id);
    const seen: number[] = [];
    while (!made.every((id) => seen.includes(id)))
      seen.push(dataOf((await changes.next()).value as Result).rankChanged.rowId);
    await changes.return?.();
  });

  test("SIGTERM with a WebSocket and an SSE subscription open: both end and the server exits 0", async () => {
    const client = open({ params: { authorization: `Bearer ${key}` } });
    const socketChanges = client.iterate<Data>({ query: "subscription { rankChanged { rowId } }" });
    await firstAfterWrites(
      socketChanges,
      () => rest(server.base, key, "POST", "/v2/ranks", { name: "R", abbreviation: "R" }),
      [server],
    );
    const sse = readEventStream(
      await fetch(`${server.base}/graphql`, {
        method: "POST",
        headers: { accept: "text/event-stream", "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ query: "subscription { rankChanged { rowId } }" }),
      }),
    );
    expect(sse.status).toBe(200);
    const socketEnded = (async () => {
      try {
        for (;;) if ((await socketChanges.next()).done) return "completed";
      } catch {
        return "closed";
      }
    })();
    const exited = new Promise<number | null>((resolve) => server.child.on("exit", (code) => resolve(code)));
    server.child.kill("SIGTERM");
    await sse.completed();
    expect(["completed", "closed"]).toContain(await socketEnded);
    expect(await exited).toBe(0);
  });
});

const services = await Promise.all([
  requireRedis(),
  requireService(`PostgreSQL at ${testPostgresUrl}`, async () => {
    const probe = new pg.Client({ connectionString: testPostgresUrl, connectionTimeoutMillis: 2000 });
    await probe.connect();
    await probe.end();
  }),
]);
const redisAndPostgres = services.find((s) => !s.available) ?? services[0];

redisAndPostgres.describe("two instances on one PostgreSQL database, fanned out through Redis", () => {
  const name = `muster_t_${randomBytes(6).toString("hex")}`;
  const databaseUrl = Object.assign(new URL(testPostgresUrl), { pathname: `/${name}` }).toString();
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: testPostgresUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  let a: ServerProcess;
  let b: ServerProcess;

  beforeAll(async () => {
    await admin(`CREATE DATABASE "${name}"`);
    await migrate(databaseUrl);
    const env = { DATABASE_URL: databaseUrl, REDIS_URL, REDIS_PREFIX: `muster-test:${name}` };
    // One after the other: both would seed the new database on their first start.
    a = await spawnServer(env);
    b = await spawnServer(env);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });

  test("a subscription on instance B receives an event written through instance A, and account B's never sees it", async () => {
    const key = await newKey(databaseUrl, "alpha");
    const bravo = await newKey(databaseUrl, "bravo");
    const onB = wsClient(b.base, { params: { authorization: `Bearer ${key}` } });
    const bravoOnB = wsClient(b.base, { params: { authorization: `Bearer ${bravo}` } });
    const rank = await rest(a.base, key, "POST", "/v2/ranks", { name: "Private", abbreviation: "PVT" });
    const user = await rest(a.base, key, "POST", "/v2/users", { name: "Ann Smith", email: "ann@example.com" });
    const changes = onB.iterate<Data>({ query: RANK_RECORDS });
    const bravoChanges = bravoOnB.iterate<Data>({ query: RANK_RECORDS });
    const { value, written } = await firstAfterWrites(
      changes,
      () =>
        rest(a.base, key, "POST", "/v2/rank-records", {
          user_id: user.id,
          rank_id: rank.id,
          type: 0,
          text: "Through A",
        }),
      [a, b],
    );
    expect(written.map((r) => r.id)).toContain(dataOf(value).rankRecordChanged.rowId);
    expect(dataOf(value).rankRecordChanged).toMatchObject({
      action: "CREATED",
      rankRecord: { text: "Through A", rank: { name: "Private" }, user: { name: "Ann Smith" } },
    });

    // Bravo's subscription on B: the first event it receives is bravo's own, written through A after alpha's.
    const bravoRank = await rest(a.base, bravo, "POST", "/v2/ranks", { name: "Bravo", abbreviation: "B" });
    const bravoUser = await rest(a.base, bravo, "POST", "/v2/users", { name: "Bo Bravo", email: "bo@example.com" });
    const mine = await firstAfterWrites(
      bravoChanges,
      () =>
        rest(a.base, bravo, "POST", "/v2/rank-records", {
          user_id: bravoUser.id,
          rank_id: bravoRank.id,
          type: 0,
          text: "Bravo's own",
        }),
      [a, b],
    );
    expect(dataOf(mine.value).rankRecordChanged.rankRecord?.text).toBe("Bravo's own");
    await Promise.all([changes.return?.(), bravoChanges.return?.()]);
    await Promise.all([onB.dispose(), bravoOnB.dispose()]);
  });
});

services[0].describe("the event bus over Redis", () => {
  test("a subscription made while the subscriber's connection is still being set up hears every batch published", async () => {
    // Instance B above once heard nothing for 45 s: the webhook dispatcher subscribes as the server starts, and a
    // SUBSCRIBE sent during ioredis's ready check left the connection unsubscribed for good (src/events/bus.ts).
    // Each of these buses subscribes one turn of the event loop later than the one before, from the turn it is made on,
    // so that some subscribe while their connection is being set up.
    const config = { redisUrl: REDIS_URL, redisPrefix: `muster-test:bus-${randomBytes(6).toString("hex")}` };
    const publisher = createEventBus(config);
    const buses = Array.from({ length: 60 }, () => createEventBus(config));
    try {
      const heard = await Promise.all(
        buses.map(async (bus, i) => {
          for (let turn = 0; turn < i; turn++) await new Promise((resolve) => setImmediate(resolve));
          const batches = bus.subscribe();
          const listening = { batches, first: null as CommittedEvents | null };
          void batches.next().then((r) => (listening.first = r.value as CommittedEvents));
          return listening;
        }),
      );
      const batch: CommittedEvents = { accountId: 1, events: [] };
      const deadline = Date.now() + 20_000;
      while (heard.some((h) => !h.first) && Date.now() < deadline) {
        publisher.publish(batch);
        await sleep(100);
      }
      expect(heard.map((h, i) => (h.first ? "heard" : `bus ${i} heard nothing`))).toEqual(heard.map(() => "heard"));
      expect(heard[0].first).toEqual(batch);
      await Promise.all(heard.map(async (h) => h.batches.return?.()));
    } finally {
      await Promise.all([publisher, ...buses].map((bus) => bus.close()));
    }
  });
});
