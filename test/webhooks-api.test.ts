import { afterAll, beforeAll, expect, test } from "vitest";
import { createHmac } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { client, startHarness, type Client, type Harness } from "./harness.ts";
import { cliArgs } from "./support/built.ts";
import { createApp } from "../src/server/app.ts";
import { eventById } from "../src/events/feed.ts";
import { eventPayload } from "../src/core/events.ts";

/*
 * The webhooks API: CRUD, the secret shown once, its rotation, bad input, accounts apart, and the deliveries a client
 * asks for (a test event, a redelivery) against a real HTTP receiver, through REST, GraphQL and the CLI. The dispatcher
 * is off here: every POST the receiver gets is one these tests asked for.
 */

interface Received {
  headers: IncomingHttpHeaders;
  raw: string;
}

let h: Harness;
let api: Client;
let receiver: Server;
let receiverUrl: string;
const received: Received[] = [];
/** What the receiver answers next. */
let answer = 200;

beforeAll(async () => {
  h = await startHarness({ webhooksAllowPrivate: true, webhookDispatch: false, webhookTimeoutMs: 2000 });
  api = client(h, await h.key("alpha"));
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      received.push({ headers: req.headers, raw: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(answer).end("ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
});
afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
  await h.close();
});

const hidden = [
  "secret_hash",
  "cursor_txid",
  "cursor_id",
  "attempts",
  "next_attempt_at",
  "claimed_by",
  "claimed_until",
  "account_id",
];

async function createWebhook(body: Record<string, unknown> = {}) {
  const r = await api.post("/v2/webhooks", { url: receiverUrl, events: ["rankrecord.created"], ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data;
}

test("REST CRUD: the create answer shows the secret once; reads and updates never do, nor the delivery state", async () => {
  const created = await createWebhook({ description: "Roster sync", events: ["rankrecord.created", "user.updated"] });
  expect(created).toMatchObject({
    url: receiverUrl,
    description: "Roster sync",
    events: ["rankrecord.created", "user.updated"],
    enabled: true,
    disabled_reason: null,
    failing_since: null,
  });
  expect(created.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
  for (const key of hidden) expect(created).not.toHaveProperty(key);
  const stored = await h.db.prisma.webhook.findUniqueOrThrow({ where: { id: created.id } });
  expect(stored.secret).toBe(created.secret);

  const shown = await api.get(`/v2/webhooks/${created.id}`);
  expect(shown.status).toBe(200);
  expect(shown.body.data.secret).toBeNull();
  const listed = await api.get("/v2/webhooks");
  expect(listed.body.data.find((w: { id: number }) => w.id === created.id).secret).toBeNull();
  expect(JSON.stringify(listed.body)).not.toContain(created.secret);
  const searched = await api.post("/v2/webhooks/search", {
    filters: [{ field: "url", operator: "like", value: "%hooks" }],
  });
  expect(searched.status).toBe(200);
  expect(JSON.stringify(searched.body)).not.toContain(created.secret);

  const updated = await api.patch(`/v2/webhooks/${created.id}`, {
    description: "Roster",
    events: ["*"],
    enabled: false,
  });
  expect(updated.status).toBe(200);
  expect(updated.body.data).toMatchObject({ description: "Roster", events: ["*"], enabled: false, secret: null });
  // What the service records is not the client's to write: disabled_reason and the secret are ignored.
  await api.patch(`/v2/webhooks/${created.id}`, { disabled_reason: "mine", secret: "whsec_chosen" });
  expect(await h.db.prisma.webhook.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({
    disabledReason: null,
    secret: created.secret,
  });

  expect((await api.delete(`/v2/webhooks/${created.id}`)).status).toBe(200);
  expect((await api.get(`/v2/webhooks/${created.id}`)).status).toBe(404);
  expect(await h.db.prisma.webhook.count({ where: { id: created.id } })).toBe(0);
});

test("a batch create shows each new webhook's secret once, in request order; a bad item stores none", async () => {
  const made = await api.post("/v2/webhooks/batch", {
    resources: [
      { url: `${receiverUrl}/a`, events: ["*"] },
      { url: `${receiverUrl}/b`, events: ["user.created"] },
    ],
  });
  expect(made.status, JSON.stringify(made.body)).toBe(200);
  const [a, b] = made.body.data;
  expect([a.url, b.url]).toEqual([`${receiverUrl}/a`, `${receiverUrl}/b`]);
  expect(a.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
  expect(b.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
  expect(a.secret).not.toBe(b.secret);
  const updated = await api.patch("/v2/webhooks/batch", {
    resources: { [a.id]: { description: "a" }, [b.id]: { description: "b" } },
  });
  expect(updated.body.data.map((w: { secret: string | null }) => w.secret)).toEqual([null, null]);
  const before = await h.db.prisma.webhook.count();
  const refused = await api.post("/v2/webhooks/batch", {
    resources: [
      { url: `${receiverUrl}/c`, events: ["*"] },
      { url: "gopher://x", events: ["*"] },
    ],
  });
  expect(refused.status).toBe(422);
  expect(Object.keys(refused.body.error.errors)).toEqual(["resources.1.url"]);
  expect(await h.db.prisma.webhook.count()).toBe(before);
});

test("a new webhook starts after the account's latest event: only what is written after it exists is for it", async () => {
  const user = (await api.post("/v2/users", { name: "Cursor Check", email: "cursor@example.com" })).body.data;
  const written = await h.db.prisma.changeEvent.findFirst({
    where: { recordId: user.id, type: "user.created" },
    orderBy: { id: "desc" },
  });
  expect(written, "the write recorded an event").not.toBeNull();
  // The same write linked the person to the default roles (a userrole.created event): the account's latest is the last.
  const latest = await h.db.prisma.changeEvent.findFirst({
    where: { accountId: written!.accountId },
    orderBy: [{ txid: "desc" }, { id: "desc" }],
  });
  expect(latest!.id).toBeGreaterThan(written!.id);
  const created = await createWebhook();
  const stored = await h.db.prisma.webhook.findUniqueOrThrow({ where: { id: created.id } });
  expect({ txid: String(stored.cursorTxid), id: stored.cursorId }).toEqual({
    txid: String(latest!.txid),
    id: latest!.id,
  });
});

test("GraphQL CRUD: createWebhook answers the secret once; the connection, the lookup and updates show null", async () => {
  const made = await api.graphql(
    `mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { webhook { id rowId url events enabled secret disabledReason } } }`,
    {
      input: { url: receiverUrl, events: ["user.created"], description: "from GraphQL" },
    },
  );
  expect(made.body.errors).toBeUndefined();
  const webhook = made.body.data.createWebhook.webhook;
  expect(webhook).toMatchObject({ url: receiverUrl, events: ["user.created"], enabled: true, disabledReason: null });
  expect(webhook.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
  expect((await h.db.prisma.webhook.findUniqueOrThrow({ where: { id: webhook.rowId } })).secret).toBe(webhook.secret);

  const read = await api.graphql(
    `query($id: Int!) { webhook(rowId: $id) { secret description } webhooks(where: { description: { equals: "from GraphQL" } }) { totalCount nodes { rowId secret } } }`,
    { id: webhook.rowId },
  );
  expect(read.body.data).toEqual({
    webhook: { secret: null, description: "from GraphQL" },
    webhooks: { totalCount: 1, nodes: [{ rowId: webhook.rowId, secret: null }] },
  });

  const updated = await api.graphql(
    `mutation($id: Int!) { updateWebhook(rowId: $id, input: { enabled: false, events: ["*"] }) { webhook { enabled events secret } } }`,
    { id: webhook.rowId },
  );
  expect(updated.body.data.updateWebhook.webhook).toEqual({ enabled: false, events: ["*"], secret: null });
  const deleted = await api.graphql(`mutation($id: Int!) { deleteWebhook(rowId: $id) { webhook { rowId } } }`, {
    id: webhook.rowId,
  });
  expect(deleted.body.data.deleteWebhook.webhook.rowId).toBe(webhook.rowId);
  expect(await h.db.prisma.webhook.count({ where: { id: webhook.rowId } })).toBe(0);
});

test("rotating the secret answers the new one once (REST and GraphQL) and stores it", async () => {
  const created = await createWebhook();
  const rotated = await api.post(`/v2/webhooks/${created.id}/secret`);
  expect(rotated.status).toBe(200);
  expect(rotated.body.data.id).toBe(created.id);
  expect(rotated.body.data.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
  expect(rotated.body.data.secret).not.toBe(created.secret);
  expect((await h.db.prisma.webhook.findUniqueOrThrow({ where: { id: created.id } })).secret).toBe(
    rotated.body.data.secret,
  );
  expect((await api.get(`/v2/webhooks/${created.id}`)).body.data.secret).toBeNull();

  const again = await api.graphql(
    `mutation($id: Int!) { rotateWebhookSecret(rowId: $id) { webhook { rowId secret } } }`,
    { id: created.id },
  );
  const secret = again.body.data.rotateWebhookSecret.webhook.secret;
  expect(secret).toMatch(/^whsec_[0-9a-f]{64}$/);
  expect(secret).not.toBe(rotated.body.data.secret);
  expect((await h.db.prisma.webhook.findUniqueOrThrow({ where: { id: created.id } })).secret).toBe(secret);
  expect((await api.post("/v2/webhooks/999999/secret")).status).toBe(404);
});

test("bad input is a 422 naming the field, and nothing is stored", async () => {
  const before = await h.db.prisma.webhook.count();
  const refused = async (body: Record<string, unknown>, field: string, request = api) => {
    const r = await request.post("/v2/webhooks", body);
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(Object.keys(r.body.error.errors), JSON.stringify(r.body)).toEqual([field]);
  };
  await refused({ url: "ftp://example.com/hook", events: ["*"] }, "url");
  await refused({ url: "not a url", events: ["*"] }, "url");
  await refused({ url: `https://example.com/${"x".repeat(2048)}`, events: ["*"] }, "url");
  await refused({ events: ["*"] }, "url");
  await refused({ url: receiverUrl, events: ["rankrecord.created", "rank.exploded"] }, "events.1");
  await refused({ url: receiverUrl, events: [] }, "events");
  await refused({ url: receiverUrl, events: "rankrecord.created" }, "events");
  await refused({ url: receiverUrl }, "events");
  await refused({ url: receiverUrl, events: ["webhook.created"] }, "events.0");

  // Where private targets are refused (the default), an address or a name that resolves to one is refused.
  const guarded = createApp({ db: h.db, config: { ...h.config, webhooksAllowPrivate: false } });
  const strict = client({ ...h, app: guarded }, await h.key("alpha"));
  for (const url of [
    "http://127.0.0.1:9/x",
    "http://localhost/x",
    "http://10.1.2.3/",
    "http://169.254.169.254/latest",
    "http://[::1]/",
    "http://[::ffff:192.168.0.1]/",
  ]) {
    await refused({ url, events: ["*"] }, "url", strict);
  }
  const created = await createWebhook();
  const patched = await strict.patch(`/v2/webhooks/${created.id}`, { url: "http://192.168.1.10/hook" });
  expect(patched.status).toBe(422);
  expect(patched.body.error.errors).toHaveProperty("url");
  expect((await h.db.prisma.webhook.findUniqueOrThrow({ where: { id: created.id } })).url).toBe(receiverUrl);
  await guarded.events.close();

  const graph = await api.graphql(
    `mutation { createWebhook(input: { url: "${receiverUrl}", events: ["user.created", "nope"] }) { webhook { rowId } } }`,
  );
  expect(graph.body.data.createWebhook).toBeNull();
  expect(graph.body.errors[0].extensions).toMatchObject({
    code: "VALIDATION",
    errors: { "input.events.1": [expect.any(String)] },
  });
  expect(await h.db.prisma.webhook.count()).toBe(before + 1);
});

test("re-enabling a webhook the service disabled clears why, when it began failing and the retry state", async () => {
  const created = await createWebhook();
  await h.db.prisma.webhook.update({
    where: { id: created.id },
    data: {
      enabled: false,
      disabledReason: "Deliveries failed for 24 hours",
      failingSince: new Date(Date.now() - 86_400_000),
      attempts: 5,
      nextAttemptAt: new Date(),
    },
  });
  const shown = (await api.get(`/v2/webhooks/${created.id}`)).body.data;
  expect(shown).toMatchObject({ enabled: false, disabled_reason: "Deliveries failed for 24 hours" });
  expect(shown.failing_since).not.toBeNull();
  const enabled = await api.patch(`/v2/webhooks/${created.id}`, { enabled: true });
  expect(enabled.status).toBe(200);
  expect(enabled.body.data).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
  expect(await h.db.prisma.webhook.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({
    attempts: 0,
    nextAttemptAt: null,
    disabledReason: null,
    failingSince: null,
  });
});

test("another account's webhooks do not exist for a key: lists, reads, writes and actions", async () => {
  const mine = await createWebhook();
  const other = client(h, await h.key("bravo"));
  expect((await other.get("/v2/webhooks")).body.data).toEqual([]);
  for (const [method, path] of [
    ["GET", `/v2/webhooks/${mine.id}`],
    ["PATCH", `/v2/webhooks/${mine.id}`],
    ["DELETE", `/v2/webhooks/${mine.id}`],
    ["POST", `/v2/webhooks/${mine.id}/secret`],
    ["POST", `/v2/webhooks/${mine.id}/test`],
    ["GET", `/v2/webhooks/${mine.id}/deliveries`],
  ] as const) {
    expect((await other.send(method, path, method === "GET" ? undefined : {})).status, `${method} ${path}`).toBe(404);
  }
  const graph = await other.graphql(
    `query($id: Int!, $global: ID!) { webhook(rowId: $id) { rowId } webhooks { totalCount } node(id: $global) { id } }`,
    {
      id: mine.id,
      global: Buffer.from(`Webhook:${mine.id}`).toString("base64"),
    },
  );
  expect(graph.body.data).toEqual({ webhook: null, webhooks: { totalCount: 0 }, node: null });
  expect(received).toHaveLength(0);
  expect((await h.db.prisma.webhook.findUniqueOrThrow({ where: { id: mine.id } })).secret).toBe(mine.secret);
});

test("scopes: view:webhook reads but cannot create, rotate or test", async () => {
  const created = await createWebhook();
  const reader = client(h, await h.key("alpha", "view:webhook"));
  expect((await reader.get(`/v2/webhooks/${created.id}`)).status).toBe(200);
  expect((await reader.get(`/v2/webhooks/${created.id}/deliveries`)).status).toBe(200);
  expect((await reader.post("/v2/webhooks", { url: receiverUrl, events: ["*"] })).status).toBe(403);
  expect((await reader.post(`/v2/webhooks/${created.id}/secret`)).status).toBe(403);
  expect((await reader.post(`/v2/webhooks/${created.id}/test`)).status).toBe(403);
  const writer = client(h, await h.key("alpha", "update:webhook"));
  expect((await writer.post(`/v2/webhooks/${created.id}/secret`)).status).toBe(200);
});

const hmac = (secret: string, raw: string) => createHmac("sha256", secret).update(raw).digest("hex");

test("webhook.test and a redelivery reach a real receiver, signed as documented; the delivery log shows both", async () => {
  received.length = 0;
  answer = 200;
  const created = await createWebhook();
  const rank = (await api.post("/v2/ranks", { name: "Sergeant" })).body.data;
  const user = (await api.post("/v2/users", { name: "Dee Webb", email: "dee@example.com" })).body.data;
  const record = (await api.post(`/v2/users/${user.id}/rank-records`, { rank_id: rank.id, type: 0, text: "Promoted" }))
    .body.data;
  const event = await h.db.prisma.changeEvent.findFirst({ where: { type: "rankrecord.created", recordId: record.id } });
  expect(event, "the rank record's write recorded an event").not.toBeNull();

  const tested = await api.post(`/v2/webhooks/${created.id}/test`);
  expect(tested.status, JSON.stringify(tested.body)).toBe(200);
  expect(tested.body.data).toMatchObject({
    webhook_id: created.id,
    event_id: null,
    event_type: "webhook.test",
    attempt: 1,
    status_code: 200,
    succeeded: true,
    error: null,
  });
  expect(received).toHaveLength(1);
  const test1 = received[0];
  expect(test1.headers.signature).toBe(hmac(created.secret, test1.raw));
  expect(test1.headers["x-muster-event"]).toBe("webhook.test");
  expect(test1.headers["x-muster-delivery"]).toBe(tested.body.data.delivery_id);
  expect(test1.headers["content-type"]).toBe("application/json");
  expect(Math.abs(Number(test1.headers["x-muster-timestamp"]) - Date.now() / 1000)).toBeLessThan(600);
  expect(JSON.parse(test1.raw)).toMatchObject({
    id: null,
    event: "webhook.test",
    resource: "webhook",
    record_id: created.id,
    data: { id: created.id, url: receiverUrl },
  });

  const redelivered = await api.post(`/v2/webhooks/${created.id}/redeliver`, { event_id: event!.id });
  expect(redelivered.status, JSON.stringify(redelivered.body)).toBe(200);
  const deliveryId = `wh${created.id}-ev${event!.id}`;
  expect(redelivered.body.data).toMatchObject({
    event_id: event!.id,
    event_type: "rankrecord.created",
    delivery_id: deliveryId,
    attempt: 1,
    status_code: 200,
    succeeded: true,
  });
  expect(received).toHaveLength(2);
  const again = received[1];
  // The body the dispatcher sends, byte for byte, signed with the webhook's secret.
  expect(again.raw).toBe(JSON.stringify(eventPayload((await eventById(h.db, event!.accountId, event!.id))!)));
  expect(again.headers.signature).toBe(hmac(created.secret, again.raw));
  expect(again.headers["x-muster-event"]).toBe("rankrecord.created");
  expect(again.headers["x-muster-delivery"]).toBe(deliveryId);
  expect(JSON.parse(again.raw)).toMatchObject({
    id: event!.id,
    event: "rankrecord.created",
    data: { id: record.id, rank_id: rank.id },
  });

  // A receiver that fails: logged with its status, and a second attempt at the event counts on.
  answer = 500;
  const failed = await api.post(`/v2/webhooks/${created.id}/redeliver`, { event_id: event!.id });
  expect(failed.body.data).toMatchObject({
    attempt: 2,
    status_code: 500,
    succeeded: false,
    error: "HTTP 500",
    delivery_id: deliveryId,
  });
  answer = 200;

  const log = await api.get(`/v2/webhooks/${created.id}/deliveries?limit=2`);
  expect(log.status).toBe(200);
  expect(log.body.meta).toMatchObject({ total: 3, per_page: 2, last_page: 2 });
  expect(
    log.body.data.map((d: { event_type: string; attempt: number; succeeded: boolean }) => [
      d.event_type,
      d.attempt,
      d.succeeded,
    ]),
  ).toEqual([
    ["rankrecord.created", 2, false],
    ["rankrecord.created", 1, true],
  ]);
  for (const key of [
    "attempt",
    "status_code",
    "duration_ms",
    "error",
    "succeeded",
    "event_id",
    "event_type",
    "delivery_id",
    "created_at",
  ])
    expect(log.body.data[0]).toHaveProperty(key);
  expect(
    (await api.get(`/v2/webhooks/${created.id}/deliveries?page=2&limit=2`)).body.data.map(
      (d: { event_type: string }) => d.event_type,
    ),
  ).toEqual(["webhook.test"]);
  const one = await api.get(`/v2/webhooks/${created.id}/deliveries/${tested.body.data.id}`);
  expect(one.body.data.delivery_id).toBe(tested.body.data.delivery_id);

  const graph = await api.graphql(
    `query($id: Int!) { webhook(rowId: $id) { deliveries(first: 5) { totalCount nodes { attempt statusCode durationMs error succeeded eventId eventType deliveryId createdAt } } } }`,
    { id: created.id },
  );
  expect(graph.body.errors).toBeUndefined();
  const nodes = graph.body.data.webhook.deliveries.nodes;
  expect(graph.body.data.webhook.deliveries.totalCount).toBe(3);
  expect(
    nodes.map((n: { eventType: string; statusCode: number; eventId: number | null }) => [
      n.eventType,
      n.statusCode,
      n.eventId,
    ]),
  ).toEqual([
    ["rankrecord.created", 500, event!.id],
    ["rankrecord.created", 200, event!.id],
    ["webhook.test", 200, null],
  ]);
});

test("GraphQL testWebhook and redeliverWebhookEvent answer the delivery; a foreign or unknown event is a 422 on the event id, and nothing is sent", async () => {
  received.length = 0;
  const created = await createWebhook();
  const other = client(h, await h.key("charlie"));
  await other.post("/v2/ranks", { name: "Foreign" });
  const charlie = await h.db.prisma.account.findUniqueOrThrow({ where: { name: "charlie" } });
  const foreign = await h.db.prisma.changeEvent.findFirst({ where: { accountId: charlie.id, type: "rank.created" } });
  expect(foreign).toBeTruthy();

  const tested = await api.graphql(
    `mutation($id: Int!) { testWebhook(rowId: $id) { webhookDelivery { eventType statusCode succeeded deliveryId webhook { rowId } } } }`,
    { id: created.id },
  );
  expect(tested.body.errors).toBeUndefined();
  expect(tested.body.data.testWebhook.webhookDelivery).toMatchObject({
    eventType: "webhook.test",
    statusCode: 200,
    succeeded: true,
    webhook: { rowId: created.id },
  });
  expect(received).toHaveLength(1);

  for (const eventId of [foreign!.id, 99_999_999]) {
    const rest = await api.post(`/v2/webhooks/${created.id}/redeliver`, { event_id: eventId });
    expect(rest.status).toBe(422);
    expect(Object.keys(rest.body.error.errors)).toEqual(["event_id"]);
    const graph = await api.graphql(
      `mutation($id: Int!, $event: Int!) { redeliverWebhookEvent(rowId: $id, input: { eventId: $event }) { webhookDelivery { rowId } } }`,
      { id: created.id, event: eventId },
    );
    expect(graph.body.data.redeliverWebhookEvent).toBeNull();
    expect(graph.body.errors[0].extensions).toMatchObject({
      code: "VALIDATION",
      errors: { "input.eventId": [expect.any(String)] },
    });
  }
  const missing = await api.post(`/v2/webhooks/${created.id}/redeliver`, {});
  expect(missing.status).toBe(422);
  expect(Object.keys(missing.body.error.errors)).toEqual(["event_id"]);
  expect(received).toHaveLength(1);
  expect(await h.db.prisma.webhookDelivery.count({ where: { webhookId: created.id } })).toBe(1);
});

test("CLI: webhooks:create, list, rotate-secret, test, deliveries and delete; bad input is one line and exit 1", async () => {
  received.length = 0;
  const run = promisify(execFile);
  const env = {
    ...process.env,
    DATABASE_URL: h.config.databaseUrl,
    WEBHOOKS_ALLOW_PRIVATE: "true",
    LOG_LEVEL: "silent",
  };
  const cli = (...args: string[]) => run(process.execPath, [...cliArgs, ...args], { env });
  const made = await cli(
    "webhooks:create",
    "--account",
    "alpha",
    "--url",
    receiverUrl,
    "--events",
    "rankrecord.created,user.created",
    "--description",
    "from the CLI",
  );
  const lines = made.stdout.trim().split("\n");
  const secret = lines.at(-1)!;
  expect(secret).toMatch(/^whsec_[0-9a-f]{64}$/);
  const id = Number(/webhook (\d+)/.exec(lines[0])![1]);
  expect(await h.db.prisma.webhook.findUniqueOrThrow({ where: { id } })).toMatchObject({
    secret,
    events: ["rankrecord.created", "user.created"],
    description: "from the CLI",
  });

  const listed = (await cli("webhooks:list", "--account", "alpha")).stdout
    .trim()
    .split("\n")
    .map((l) => l.split("\t"));
  expect(listed[0]).toEqual(["id", "url", "events", "enabled", "disabled reason"]);
  expect(listed.find((row) => row[0] === String(id))).toEqual([
    String(id),
    receiverUrl,
    "rankrecord.created,user.created",
    "yes",
    "-",
  ]);
  expect(made.stdout + listed.flat().join(" ")).not.toContain("cursor");

  const rotated = (await cli("webhooks:rotate-secret", String(id))).stdout.trim().split("\n").at(-1)!;
  expect(rotated).toMatch(/^whsec_[0-9a-f]{64}$/);
  expect((await h.db.prisma.webhook.findUniqueOrThrow({ where: { id } })).secret).toBe(rotated);

  const tested = (await cli("webhooks:test", String(id))).stdout.trim();
  expect(tested).toMatch(/HTTP 200/);
  expect(received).toHaveLength(1);
  expect(received[0].headers.signature).toBe(hmac(rotated, received[0].raw));

  const log = (await cli("webhooks:deliveries", String(id))).stdout
    .trim()
    .split("\n")
    .map((l) => l.split("\t"));
  expect(log[0]).toEqual(["id", "created", "event", "event id", "attempt", "status", "ms", "error"]);
  expect(log.slice(1).map((row) => [row[2], row[4], row[5]])).toEqual([["webhook.test", "1", "200"]]);

  const bad = await cli(
    "webhooks:create",
    "--account",
    "alpha",
    "--url",
    "ftp://example.com",
    "--events",
    "user.created,nope",
  ).then(
    () => null,
    (e) => e,
  );
  expect(bad.code).toBe(1);
  expect(bad.stderr.trim().split("\n")).toHaveLength(1);
  expect(bad.stderr).toMatch(/^error: url: The url field format is invalid/);
  expect(
    (
      await cli("webhooks:test", "999999").then(
        () => null,
        (e) => e,
      )
    ).stderr.trim(),
  ).toBe("error: No webhook 999999");

  expect((await cli("webhooks:delete", String(id))).stdout.trim()).toBe(`Deleted webhook ${id} (${receiverUrl})`);
  expect(await h.db.prisma.webhook.count({ where: { id } })).toBe(0);
});

test("the README's signature test vector is what the service signs, and its receiver snippet accepts it", async () => {
  const { readFileSync } = await import("node:fs");
  const { sign } = await import("../src/events/webhooks/send.ts");
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const section = /\n### Webhooks\n([\s\S]*?)\n## /.exec(readme)![1];
  const vector = /```text\nsecret: +(\S+)\nbody: +(.+)\nSignature: +([0-9a-f]{64})\n```/.exec(section)!;
  expect(vector, "the test vector").not.toBeNull();
  const [, secret, body, signature] = vector;
  expect(sign(secret, body)).toBe(signature);
  expect(hmac(secret, body)).toBe(signature);
  // The snippet's verify(), as written, with the vector's secret: the vector passes, a changed body or signature does not.
  const snippet = /```js\n([\s\S]*?)```/.exec(section)![1];
  const verifySource = /function verify\(raw, signature\) \{[\s\S]*?\n\}/.exec(snippet)![0];
  const { createHmac, timingSafeEqual } = await import("node:crypto");
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- runs the README's verify() exactly as written
  const verify = new Function("createHmac", "timingSafeEqual", "secret", `${verifySource}; return verify;`)(
    createHmac,
    timingSafeEqual,
    secret,
  ) as (raw: Buffer, signature: unknown) => boolean;
  expect(verify(Buffer.from(body), signature)).toBe(true);
  expect(verify(Buffer.from(body.replace("Sergeant", "Sergeant ")), signature)).toBe(false);
  expect(
    verify(
      Buffer.from(body),
      signature.replace(/^./, (c) => (c === "0" ? "1" : "0")),
    ),
  ).toBe(false);
  expect(verify(Buffer.from(body), undefined)).toBe(false);
});
