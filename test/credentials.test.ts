import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { SignJWT } from "jose";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createApp, type App } from "../src/server/app.ts";
import { serveWebSocket } from "../src/server/websocket.ts";
import { startDispatcher } from "../src/events/webhooks/dispatcher.ts";
import { createApiKey } from "../src/auth/accounts.ts";
import { client, startHarness, type Harness, type Reply } from "./harness.ts";
import { readEventStream, writeUntilArrives } from "./support/event-stream.ts";
import { DELIVERY_BODY_KEYS, startReceiver, type Receiver } from "./support/webhook-receiver.ts";

/*
 * Every credential everywhere (issue 42, item 6), shown with SSO tokens: REST, GraphQL, subscriptions over SSE and
 * WebSocket, the change feed and the webhooks API; who made each change (the actor) on the stored event, the feed,
 * a webhook delivery, a change stream and the request log; author fields defaulting to the signed-in person; the rate
 * limit per credential; a role's change taking effect on the next request; and the SSO secret rotated through the API
 * by `*` keys alone.
 */

let h: Harness;
let app: App;
let appConfig: Harness["config"];
let accountId: number;
let secret: string;
let adminKey: { key: string; id: number };
/** Every log line of `app`, parsed. */
const logLines: Record<string, unknown>[] = [];
const people: { clerk: number; other: number; chief: number } = { clerk: 0, other: 0, chief: 0 };
let clerkRole: number;
let ids: { rank: number; corporal: number };

const as = (credential: string, target: App = app) => client({ ...h, app: target }, credential);

const ok = async (reply: Promise<Reply> | Reply) => {
  const r = await reply;
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data;
};

/** An SSO token for `sub`, signed as the forum would, with the account's current secret. */
const mint = (sub: number, scopes: string[], key = secret) =>
  new SignJWT({ tenant: String(accountId), scopes })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(String(sub))
    .setIssuedAt()
    .setExpirationTime("5m")
    .sign(new TextEncoder().encode(key));

const CLERK = [
  "view:user",
  "view:rank",
  "view:rankrecord",
  "create:rankrecord",
  "update:rankrecord",
  "view:webhook",
  "create:webhook",
  "update:webhook",
  "delete:webhook",
];

beforeAll(async () => {
  h = await startHarness({ webhooksAllowPrivate: true, webhookTimeoutMs: 5000 });
  const log = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean))
        logLines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  appConfig = { ...h.config, logLevel: "info" };
  app = createApp({ db: h.db, config: appConfig, logStream: log });
  const created = await createApiKey(h.db.store, { account: "alpha", scopes: "*" });
  adminKey = { key: created.key, id: created.id };
  accountId = created.accountId;
  const admin = as(adminKey.key);
  ids = {
    rank: (await ok(admin.post("/v2/ranks", { name: "Private" }))).id,
    corporal: (await ok(admin.post("/v2/ranks", { name: "Corporal" }))).id,
  };
  people.clerk = (await ok(admin.post("/v2/users", { name: "Records Clerk", email: "clerk@example.com" }))).id;
  people.other = (await ok(admin.post("/v2/users", { name: "Other Person", email: "other@example.com" }))).id;
  people.chief = (await ok(admin.post("/v2/users", { name: "Chief Admin", email: "chief@example.com" }))).id;
  clerkRole = (await ok(admin.post("/v2/roles", { name: "Clerk", permissions: CLERK }))).id;
  const roles = (await ok(admin.get("/v2/roles"))) as Array<{ id: number; name: string }>;
  const adminRole = roles.find((r) => r.name === "Admin")!.id;
  await ok(admin.post(`/v2/users/${people.clerk}/roles/attach`, { resources: [clerkRole] }));
  await ok(admin.post(`/v2/users/${people.other}/roles/attach`, { resources: [clerkRole] }));
  await ok(admin.post(`/v2/users/${people.chief}/roles/attach`, { resources: [adminRole] }));
  // The account's first SSO secret, through the API.
  secret = (await ok(admin.post("/v2/sso/rotate"))).secret;
});
afterAll(async () => {
  await app?.events.close();
  await h?.close();
});

describe("the SSO secret through the API", () => {
  test("POST /v2/sso/rotate and the rotateSsoSecret mutation, with a * key: a new secret, shown once; old tokens stop working", async () => {
    const admin = as(adminKey.key);
    const before = await mint(people.clerk, ["view:user"]);
    expect((await as(before).get("/v2/me")).status).toBe(200);
    const rotated = await admin.post("/v2/sso/rotate");
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expect(rotated.body).toEqual({ data: { secret: expect.stringMatching(/^sso_[A-Za-z0-9_-]{43}$/) } });
    expect(rotated.body.data.secret).not.toBe(secret);
    expect((await as(before).get("/v2/me")).status).toBe(401);
    secret = rotated.body.data.secret;
    expect((await as(await mint(people.clerk, ["view:user"])).get("/v2/me")).status).toBe(200);

    const graph = await admin.graphql("mutation { rotateSsoSecret { secret } }");
    expect(graph.body.errors).toBeUndefined();
    const next = graph.body.data.rotateSsoSecret.secret as string;
    expect(next).toMatch(/^sso_/);
    expect(next).not.toBe(secret);
    expect((await as(await mint(people.clerk, ["view:user"])).get("/v2/me")).status).toBe(401);
    secret = next;
    expect((await as(await mint(people.clerk, ["view:user"])).get("/v2/me")).status).toBe(200);

    // Neither secret is in a log line, nor in the change feed (no event records a rotation).
    const logged = JSON.stringify(logLines);
    for (const s of [rotated.body.data.secret, next]) expect(logged).not.toContain(s);
    const feed = await admin.get("/v2/changes?limit=100");
    expect(feed.status).toBe(200);
    for (const s of [rotated.body.data.secret, next]) expect(JSON.stringify(feed.body)).not.toContain(s);
    expect(logLines.filter((l) => l.path === "/v2/sso/rotate").map((l) => [l.route, l.status])).toContainEqual([
      "POST /v2/sso/rotate",
      200,
    ]);
  });

  test("403 for a key without *, and for an SSO token even with * (a token must not mint its successors); the secret stays", async () => {
    const narrow = as((await createApiKey(h.db.store, { account: "alpha", scopes: "view:user create:rank" })).key);
    const refusedKey = await narrow.post("/v2/sso/rotate");
    expect(refusedKey.status).toBe(403);
    const chief = as(await mint(people.chief, ["*"]));
    // The chief's token holds every scope...
    expect((await chief.post("/v2/ranks", { name: "Sergeant" })).status).toBe(200);
    // ...but is not an API key.
    const refusedToken = await chief.post("/v2/sso/rotate");
    expect(refusedToken.status).toBe(403);
    expect(refusedToken.body.error.message).toMatch(/Only an API key with the \* scope.*mint its successors/);
    const graph = await chief.graphql("mutation { rotateSsoSecret { secret } }");
    expect(graph.body.data.rotateSsoSecret).toBeNull();
    expect(graph.body.errors[0].extensions).toMatchObject({ code: "FORBIDDEN", status: 403 });
    const narrowGraph = await narrow.graphql("mutation { rotateSsoSecret { secret } }");
    expect(narrowGraph.body.errors[0].extensions).toMatchObject({ code: "FORBIDDEN" });
    // The secret did not change: tokens signed with it still work.
    expect((await as(await mint(people.clerk, ["view:user"])).get("/v2/me")).status).toBe(200);
  });
});

describe("REST, GraphQL and the actor of each change", () => {
  test("a person's token writes through REST and GraphQL: author_id is them, the event's actor is the person, a key's is the key", async () => {
    const token = await mint(people.clerk, CLERK);
    const clerk = as(token);
    const restReply = await clerk.post("/v2/rank-records", { user_id: people.other, rank_id: ids.corporal, type: 0 });
    const rest = await ok(restReply);
    expect(rest.author_id).toBe(people.clerk);
    const graph = await clerk.graphql(
      `mutation($input: CreateRankRecordInput!) { createRankRecord(input: $input) { rankRecord { rowId authorId } } }`,
      { input: { userId: people.other, rankId: ids.rank, type: "PROMOTION" } },
    );
    expect(graph.body.errors, JSON.stringify(graph.body.errors)).toBeUndefined();
    expect(graph.body.data.createRankRecord.rankRecord.authorId).toBe(people.clerk);
    const byKeyReply = await as(adminKey.key).post("/v2/rank-records", {
      user_id: people.other,
      rank_id: ids.rank,
      type: 0,
    });
    const byKey = await ok(byKeyReply);

    const person = { type: "person", user_id: people.clerk, client_id: null, via: "sso" };
    const stored = await h.db.prisma.changeEvent.findMany({
      where: { resource: "rankRecord", recordId: { in: [rest.id, byKey.id] } },
      orderBy: { id: "asc" },
    });
    expect(stored.map((e) => [e.recordId, e.actor])).toEqual([
      [rest.id, person],
      [byKey.id, { type: "key", key_id: adminKey.id }],
    ]);

    // The change feed, over REST (with the clerk's own token) and GraphQL (typed fields).
    const feed = await ok(clerk.get("/v2/changes?types=rankrecord.created&limit=100"));
    const ofRecord = (id: number) =>
      (feed as Array<{ record_id: number; actor: unknown }>).find((e) => e.record_id === id);
    expect(ofRecord(rest.id)?.actor).toEqual(person);
    expect(ofRecord(byKey.id)?.actor).toEqual({ type: "key", key_id: adminKey.id });
    const typed = await clerk.graphql(
      `{ changes(first: 100, where: { types: ["rankrecord.created"] }) { nodes { recordId actor { type keyId userId clientId via } } } }`,
    );
    expect(typed.body.errors).toBeUndefined();
    const nodes = typed.body.data.changes.nodes as Array<{ recordId: number; actor: unknown }>;
    expect(nodes.find((n) => n.recordId === rest.id)?.actor).toEqual({
      type: "PERSON",
      keyId: null,
      userId: people.clerk,
      clientId: null,
      via: "SSO",
    });
    expect(nodes.find((n) => n.recordId === byKey.id)?.actor).toEqual({
      type: "KEY",
      keyId: adminKey.id,
      userId: null,
      clientId: null,
      via: null,
    });

    // The request log: the person (never the token) on the clerk's lines, the key on the key's.
    const logged = (reply: Reply) =>
      logLines.find((l) => l.request_id === reply.headers.get("x-perscom-request-id"))?.actor;
    expect(logged(restReply)).toEqual(person);
    expect(logged(graph)).toEqual(person);
    expect(logged(byKeyReply)).toEqual({ type: "key", key_id: adminKey.id });
    expect(JSON.stringify(logLines)).not.toContain(token);
    expect(JSON.stringify(logLines)).not.toContain(secret);
  });

  test("`me` is the signed-in person, over REST and GraphQL", async () => {
    const clerk = as(await mint(people.clerk, ["view:user"]));
    expect((await ok(clerk.get("/v2/me")))[0]).toMatchObject({ id: people.clerk, name: "Records Clerk" });
    const graph = await clerk.graphql("{ me { rowId name } }");
    expect(graph.body.data.me).toEqual({ rowId: people.clerk, name: "Records Clerk" });
  });

  test("author_id naming someone else: refused for a person's token without *, kept for * and for API keys", async () => {
    const clerk = as(await mint(people.clerk, CLERK));
    const before = await h.db.prisma.rankRecord.count();
    const refused = await clerk.post("/v2/rank-records", {
      user_id: people.other,
      rank_id: ids.rank,
      type: 0,
      author_id: people.other,
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toMatch(/author_id may only be your own user id/);
    expect(await h.db.prisma.rankRecord.count()).toBe(before);
    // Their own id is what leaving it out gives.
    const own = await ok(
      clerk.post("/v2/rank-records", { user_id: people.other, rank_id: ids.rank, type: 0, author_id: people.clerk }),
    );
    expect(own.author_id).toBe(people.clerk);
    // An update may not move it to someone else either, but may send back the value the row has.
    const moved = await clerk.patch(`/v2/rank-records/${own.id}`, { author_id: people.other });
    expect(moved.status).toBe(403);
    expect((await ok(clerk.patch(`/v2/rank-records/${own.id}`, { author_id: people.clerk, text: "Ok" }))).text).toBe(
      "Ok",
    );
    const byKey = await ok(
      as(adminKey.key).post("/v2/rank-records", {
        user_id: people.other,
        rank_id: ids.rank,
        type: 0,
        author_id: people.chief,
      }),
    );
    expect(byKey.author_id).toBe(people.chief);
    const byKeyUpdate = await ok(as(adminKey.key).patch(`/v2/rank-records/${own.id}`, { author_id: people.chief }));
    expect(byKeyUpdate.author_id).toBe(people.chief);
    // The clerk may send back the value the row now has, though it is not theirs.
    expect((await clerk.patch(`/v2/rank-records/${own.id}`, { author_id: people.chief, text: "Back" })).status).toBe(
      200,
    );
    const chief = as(await mint(people.chief, ["*"]));
    const forOther = await ok(
      chief.post("/v2/rank-records", { user_id: people.other, rank_id: ids.rank, type: 0, author_id: people.other }),
    );
    expect(forOther.author_id).toBe(people.other);
    const defaulted = await ok(chief.post("/v2/rank-records", { user_id: people.other, rank_id: ids.rank, type: 0 }));
    expect(defaulted.author_id).toBe(people.chief);
  });

  test("removing a permission from the role, then the role, takes effect on the next request", async () => {
    // Scopes no self-service right covers: what the role gives is all the person has of them.
    const admin = as(adminKey.key);
    const token = await mint(people.other, CLERK);
    const record = { user_id: people.other, rank_id: ids.rank, type: 0 };
    expect((await as(token).get("/v2/webhooks")).status).toBe(200);
    await ok(admin.patch(`/v2/roles/${clerkRole}`, { permissions: CLERK.filter((p) => p !== "view:webhook") }));
    try {
      expect((await as(token).get("/v2/webhooks")).status).toBe(403);
      expect((await as(token).graphql("{ webhooks { totalCount } }")).body.errors[0].extensions.code).toBe("FORBIDDEN");
      expect((await as(token).post("/v2/rank-records", record)).status).toBe(200);
      await ok(admin.delete(`/v2/users/${people.other}/roles/detach`, { resources: [clerkRole] }));
      expect((await as(token).post("/v2/rank-records", record)).status).toBe(403);
    } finally {
      await ok(admin.patch(`/v2/roles/${clerkRole}`, { permissions: CLERK }));
      await ok(admin.post(`/v2/users/${people.other}/roles/attach`, { resources: [clerkRole] }));
    }
    expect((await as(token).get("/v2/webhooks")).status).toBe(200);
    expect((await as(token).post("/v2/rank-records", record)).status).toBe(200);
  });
});

describe("subscriptions", () => {
  const SUBSCRIPTION = `subscription { rankRecordChanged { rowId type actor { type userId keyId via } rankRecord { authorId } } }`;

  test("over SSE with an SSO token: the change arrives with its actor", async () => {
    const token = await mint(people.clerk, CLERK);
    const response = await app.yoga.fetch("http://muster.test/graphql", {
      method: "POST",
      headers: { accept: "text/event-stream", "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: SUBSCRIPTION }),
    });
    const stream = readEventStream(response);
    try {
      expect(stream.status).toBe(200);
      const written = await ok(
        as(token).post("/v2/rank-records", { user_id: people.other, rank_id: ids.rank, type: 0 }),
      );
      const { data, errors } = await stream.next();
      expect(errors).toBeUndefined();
      expect(data.rankRecordChanged).toEqual({
        rowId: written.id,
        type: "rankrecord.created",
        actor: { type: "PERSON", userId: people.clerk, keyId: null, via: "SSO" },
        rankRecord: { authorId: people.clerk },
      });
    } finally {
      await stream.close();
    }
  });

  test("over WebSocket, the SSO token in connection_init: the change arrives with its actor; a token beyond the roles is refused", async () => {
    const server: Server = createServer((req, res) => void app.yoga(req, res));
    const ws = serveWebSocket(server, app, h.db, appConfig);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
    const token = await mint(people.clerk, CLERK);
    const socket = createClient({
      url,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${token}` },
    });
    try {
      const changes = socket.iterate<{ rankRecordChanged: Record<string, unknown> }>({ query: SUBSCRIPTION });
      const {
        first: { value },
        written,
      } = await writeUntilArrives(
        changes.next(),
        async () =>
          (await ok(as(token).post("/v2/rank-records", { user_id: people.other, rank_id: ids.rank, type: 0 }))).id,
      );
      const change = value!.data!.rankRecordChanged;
      expect(written).toContain(change.rowId);
      expect(change.actor).toEqual({ type: "PERSON", userId: people.clerk, keyId: null, via: "SSO" });
      await changes.return?.();

      // A query over the same kind of socket runs as the person.
      const me = await new Promise<unknown>((resolve, reject) => {
        socket.subscribe({ query: "{ me { rowId } }" }, { next: resolve, error: reject, complete: () => {} });
      });
      expect(me).toEqual({ data: { me: { rowId: people.clerk } } });

      const beyond = createClient({
        url,
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${await mint(people.clerk, ["view:announcement"])}` },
      });
      try {
        const refused = await new Promise<unknown>((resolve) => {
          beyond.subscribe(
            { query: "subscription { announcementChanged { rowId } }" },
            { next: resolve, error: resolve, complete: () => resolve(null) },
          );
        });
        expect(JSON.stringify(refused)).toContain("FORBIDDEN");
      } finally {
        await beyond.dispose();
      }
    } finally {
      await socket.dispose();
      await ws.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("webhooks", () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver?.close());

  test("managed with an SSO token; the delivery of a person's change carries the actor beside PERSCOM's fields", async () => {
    const clerk = as(await mint(people.clerk, CLERK));
    const hook = await ok(clerk.post("/v2/webhooks", { url: `${receiver.url}/hooks`, events: ["rankrecord.created"] }));
    expect(hook.secret).toEqual(expect.any(String));
    expect((await ok(clerk.get(`/v2/webhooks/${hook.id}`))).id).toBe(hook.id);
    expect((await ok(clerk.patch(`/v2/webhooks/${hook.id}`, { description: "Forum sync" }))).description).toBe(
      "Forum sync",
    );
    const dispatcher = startDispatcher({
      db: h.db,
      config: appConfig,
      bus: app.events,
      logger: { info: () => {}, warn: () => {}, error: () => {} },
    });
    try {
      const written = await ok(clerk.post("/v2/rank-records", { user_id: people.other, rank_id: ids.rank, type: 0 }));
      const [delivery] = (await receiver.until((r) => r.some((d) => d.body.record_id === written.id))).filter(
        (d) => d.body.record_id === written.id,
      );
      expect(Object.keys(delivery.body).sort()).toEqual(DELIVERY_BODY_KEYS);
      expect(delivery.body).toMatchObject({
        event: "rankrecord.created",
        resource: "rankRecord",
        actor: { type: "person", user_id: people.clerk, client_id: null, via: "sso" },
        data: { id: written.id, author_id: people.clerk },
      });
      // The test event the person asks for names them too.
      await ok(clerk.post(`/v2/webhooks/${hook.id}/test`));
      const [test] = await receiver.until((r) => r.some((d) => d.body.event === "webhook.test"));
      expect(receiver.received.find((d) => d.body.event === "webhook.test")?.body.actor).toEqual({
        type: "person",
        user_id: people.clerk,
        client_id: null,
        via: "sso",
      });
      expect(test).toBeDefined();
    } finally {
      await dispatcher.stop();
      expect((await clerk.delete(`/v2/webhooks/${hook.id}`)).status).toBe(200);
    }
  });
});

describe("rate limit per credential", () => {
  test("two people's SSO tokens have separate allowances; a person's second token shares theirs", async () => {
    const limited = createApp({ db: h.db, config: { ...h.config, rateLimitPerMinute: 3 } });
    try {
      const clerk = as(await mint(people.clerk, ["view:user"]), limited);
      for (let i = 0; i < 3; i++) expect((await clerk.get("/v2/me")).status).toBe(200);
      expect((await clerk.get("/v2/me")).status).toBe(429);
      const other = as(await mint(people.other, ["view:user"]), limited);
      const first = await other.get("/v2/me");
      expect(first.status).toBe(200);
      expect(first.headers.get("x-ratelimit-remaining")).toBe("2");
      // Another token of the clerk's is the same person's credential: still limited.
      expect((await as(await mint(people.clerk, ["view:rank"]), limited).get("/v2/me")).status).toBe(429);
      expect((await as(adminKey.key, limited).get("/v2/me")).status).toBe(200);
    } finally {
      await limited.events.close();
    }
  });
});
