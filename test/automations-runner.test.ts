import { createHmac } from "node:crypto";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { afterAll, afterEach, beforeAll, expect, test } from "vitest";
import { createApiKey } from "../src/auth/accounts.ts";
import { pruneRuns, startRunner, DEPTH_GUARD_ERROR, type Runner } from "../src/events/automations/runner.ts";
import type { AutomationAction } from "../src/resources/automation-actions.ts";
import { client, seed, startHarness, type Client, type Harness, type Reply } from "./harness.ts";
import { startReceiver, type Receiver } from "./support/webhook-receiver.ts";

/*
 * The automations runner (issue 44) in this process, against a real HTTP receiver and a real SMTP server, with events
 * from real writes through the API and automations created through it (REST).
 */

interface Mail {
  to: string[];
  raw: string;
}

async function startSmtp() {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, done) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString("utf8") });
        done();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { mails, url: `smtp://127.0.0.1:${port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

let h: Harness;
let smtp: Awaited<ReturnType<typeof startSmtp>>;
let runner: Runner | null = null;
let errors: object[] = [];
const cleanup: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  smtp = await startSmtp();
  h = await startHarness({
    webhooksAllowPrivate: true,
    webhookDispatch: false,
    webhookTimeoutMs: 1000,
    automationPollMs: 50,
    automationRetryBaseMs: 20,
    automationMaxAttempts: 3,
    smtpUrl: smtp.url,
    mailFrom: "Muster <muster@example.org>",
  });
});

afterEach(async () => {
  await runner?.stop();
  runner = null;
  for (const done of cleanup.splice(0)) await done();
  expect(errors).toEqual([]);
  errors = [];
});

afterAll(async () => {
  await smtp.close();
  await h.close();
});

function run() {
  runner = startRunner({
    db: h.db,
    config: h.config,
    bus: h.app.events,
    logger: { info: () => {}, warn: () => {}, error: (fields) => void errors.push(fields) },
  });
}

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  cleanup.push(() => r.close());
  return r;
}

const ok = async (reply: Promise<Reply>) => {
  const r = await reply;
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data;
};

let accounts = 0;
/** A new account with a `*` key, a client for it, and two ranks and a person. */
async function account() {
  const key = await createApiKey(h.db.store, { account: `auto${++accounts}`, scopes: "*" });
  const api = client(h, key.key);
  const private_ = await ok(api.post("/v2/ranks", { name: "Private", abbreviation: "PVT" }));
  const corporal = await ok(api.post("/v2/ranks", { name: "Corporal", abbreviation: "CPL" }));
  const user = await ok(api.post("/v2/users", { name: "Ann Smith", email: `ann${accounts}@example.com` }));
  return { key, api, private_, corporal, user };
}

interface AutomationRow {
  triggers?: string[];
  schedule?: string | null;
  condition?: string | null;
  priority?: number;
  actions: AutomationAction[];
  nextRunAt?: Date | null;
}

/** An automation created through the API with the account's `*` key: it sees the events written after it. */
async function automation(api: Client, row: AutomationRow): Promise<{ id: number; secret: string }> {
  const { nextRunAt, ...body } = row;
  const created = await ok(api.post("/v2/automations", { name: "test", ...body }));
  // A due time in the past: the runner takes it as a due time missed while no instance ran.
  if (nextRunAt) await h.db.prisma.automation.update({ where: { id: created.id }, data: { nextRunAt } });
  return created;
}

const runsOf = (automationId: number) =>
  h.db.prisma.automationRun.findMany({ where: { automationId }, orderBy: { id: "asc" } });

/** Waits until the automation's runs, or what `read` makes of them, satisfy `done`. */
async function finishedRuns(automationId: number, count: number) {
  await expect
    .poll(async () => (await runsOf(automationId)).filter((r) => r.status !== "running").length, { timeout: 15_000 })
    .toBeGreaterThanOrEqual(count);
  return runsOf(automationId);
}

const jsonOf = (value: unknown) => (typeof value === "string" ? JSON.parse(value) : value);

test("a rank record posts a Discord-shaped body with the rendered text, signed, its delivery id the idempotency key", async () => {
  const { key, api, corporal, user } = await account();
  const r = await receiver();
  const a = await automation(api, {
    triggers: ["rankrecord.created"],
    condition: "changes == null and data.type == 0",
    actions: [
      {
        type: "webhook",
        url: `${r.url}/discord`,
        preset: "discord",
        headers: { "X-Unit": "{{ account.name }}" },
        body: {
          content: "{{ user.name }} was promoted (record {{ data.id }}, {{ user.rank_records_count }} so far)",
          embeds: [{ title: "Promotion", description: "{{ data.text | default: 'none' }}" }],
        },
      },
    ],
  });
  run();
  const record = await ok(api.post("/v2/rank-records", { user_id: user.id, rank_id: corporal.id, type: 0 }));
  const [got] = await r.until((list) => list.length === 1);
  const event = await h.db.prisma.changeEvent.findFirstOrThrow({
    where: { type: "rankrecord.created", recordId: record.id },
  });
  expect(got.path).toBe("/discord");
  expect(JSON.parse(got.raw)).toEqual({
    content: `Ann Smith was promoted (record ${record.id}, 1 so far)`,
    embeds: [{ title: "Promotion", description: expect.any(String) }],
  });
  expect(got.headers["x-unit"]).toBe(`auto${accounts}`);
  expect(got.headers["x-muster-delivery"]).toBe(`a${a.id}-e${event.id}-0`);
  expect(got.headers.signature).toBe(createHmac("sha256", a.secret).update(got.raw).digest("hex"));
  const [logged] = await finishedRuns(a.id, 1);
  expect(logged).toMatchObject({ status: "succeeded", conditionValue: true, eventId: event.id, depth: 0, error: null });
  expect(jsonOf(logged.outcomes)).toEqual([
    {
      type: "webhook",
      status: "succeeded",
      idempotency_key: `a${a.id}-e${event.id}-0`,
      detail: { status_code: 200 },
      error: null,
      duration_ms: expect.any(Number),
    },
  ]);
  // Past the event, and past the events of the write it does not trigger on (the person's new rank).
  const last = await h.db.prisma.changeEvent.findFirstOrThrow({
    where: { accountId: key.accountId },
    orderBy: { id: "desc" },
  });
  await expect
    .poll(() => h.db.prisma.automation.findUniqueOrThrow({ where: { id: a.id } }).then((x) => x.cursorId))
    .toBe(last.id);
});

test("user.created sends the welcome mail to the person, its Message-ID derived from the idempotency key", async () => {
  const { api } = await account();
  const a = await automation(api, {
    triggers: ["user.created"],
    actions: [
      {
        type: "email",
        to: { kind: "person" },
        subject: "Welcome to {{ account.name }}, {{ user.name }}",
        body: "Hello {{ user.name }}, report to the barracks.",
      },
    ],
  });
  run();
  const before = smtp.mails.length;
  const recruit = await ok(api.post("/v2/users", { name: "Rex Recruit", email: `rex${accounts}@example.com` }));
  const [logged] = await finishedRuns(a.id, 1);
  expect(logged.status, logged.error ?? "").toBe("succeeded");
  const mails = smtp.mails.slice(before);
  expect(mails).toHaveLength(1);
  expect(mails[0].to).toEqual([recruit.email]);
  expect(mails[0].raw).toContain(`Subject: Welcome to auto${accounts}, Rex Recruit`);
  expect(mails[0].raw).toContain("Hello Rex Recruit, report to the barracks.");
  expect(mails[0].raw).toMatch(new RegExp(`Message-ID: <a${a.id}-e${logged.eventId}-0@`, "i"));
});

test("a false condition does nothing but logs the run: skipped, condition value false", async () => {
  const { key, api, corporal, user } = await account();
  const r = await receiver();
  const a = await automation(api, {
    triggers: ["rankrecord.created"],
    condition: "data.type == 1",
    actions: [
      { type: "webhook", url: r.url, body: { text: "demoted" } },
      { type: "message", to: { kind: "person" }, text: "demoted" },
    ],
  });
  run();
  await ok(api.post("/v2/rank-records", { user_id: user.id, rank_id: corporal.id, type: 0 }));
  const [logged] = await finishedRuns(a.id, 1);
  expect(logged).toMatchObject({ status: "skipped", conditionValue: false, error: null });
  expect(jsonOf(logged.outcomes)).toEqual([]);
  expect(r.received).toEqual([]);
  expect(await h.db.prisma.message.count({ where: { accountId: key.accountId } })).toBe(0);
});

test("a message goes to the holders of a role, once; its event is the automation's, at depth 1", async () => {
  const { key, api, user } = await account();
  const other = await ok(api.post("/v2/users", { name: "Bob Jones", email: `bob${accounts}@example.com` }));
  const role = await ok(api.post("/v2/roles", { name: "Officers", permissions: ["view:user"] }));
  for (const id of [user.id, other.id]) await ok(api.post(`/v2/users/${id}/roles/attach`, { resources: [role.id] }));
  const a = await automation(api, {
    triggers: ["rank.created"],
    actions: [{ type: "message", to: { kind: "role", role_id: role.id }, text: "New rank: {{ data.name }}" }],
  });
  run();
  const rank = await ok(api.post("/v2/ranks", { name: "Sergeant", abbreviation: "SGT" }));
  const [logged] = await finishedRuns(a.id, 1);
  expect(logged.status, logged.error ?? "").toBe("succeeded");
  const messages = await h.db.prisma.message.findMany({ where: { accountId: key.accountId } });
  expect(messages.map((m) => [m.message, jsonOf(m.recipients)])).toEqual([
    [`New rank: ${rank.name}`, [user.id, other.id].sort((x, y) => x - y)],
  ]);
  expect(jsonOf(logged.outcomes)[0].detail).toEqual({ message_id: messages[0].id, recipients: expect.any(Array) });
  const event = await h.db.prisma.changeEvent.findFirstOrThrow({
    where: { type: "message.created", accountId: key.accountId },
  });
  expect(event).toMatchObject({ automationRunId: logged.id, depth: 1, actor: expect.anything() });
  expect(jsonOf(event.actor)).toEqual({ type: "key", key_id: key.id });
});

test("update increments a field once; its event shows in the change feed with depth 1 and the run's id", async () => {
  const { api } = await account();
  const a = await automation(api, {
    triggers: ["rank.created"],
    actions: [{ type: "update", target: "record", increment: { order: 10 } }],
  });
  run();
  const rank = await ok(api.post("/v2/ranks", { name: "Major", abbreviation: "MAJ" }));
  const [logged] = await finishedRuns(a.id, 1);
  expect(logged.status, logged.error ?? "").toBe("succeeded");
  expect((await ok(api.get(`/v2/ranks/${rank.id}`))).order).toBe(rank.order + 10);
  const feed = await ok(api.get("/v2/changes?limit=100"));
  const updated = feed.filter((i: { event: string }) => i.event === "rank.updated");
  expect(updated).toEqual([
    expect.objectContaining({
      record_id: rank.id,
      depth: 1,
      automation_run_id: logged.id,
      changes: { order: { old: rank.order, new: rank.order + 10 } },
    }),
  ]);
  expect(feed.find((i: { event: string }) => i.event === "rank.created")).toMatchObject({
    depth: 0,
    automation_run_id: null,
  });
});

test("update sets a custom field value of the event's record (fields.<key>), keeping the others", async () => {
  const { api } = await account();
  const ids = await seed(api);
  const a = await automation(api, {
    triggers: ["submission.created"],
    actions: [{ type: "update", target: "record", set: { "fields.callsign": "{{ data.callsign | upcase }}-1" } }],
  });
  run();
  const submission = await ok(
    api.post("/v2/submissions", { form_id: ids.form.id, user_id: ids.user.id, callsign: "eagle", age: 30 }),
  );
  const [logged] = await finishedRuns(a.id, 1);
  expect(logged.status, logged.error ?? "").toBe("succeeded");
  expect(await ok(api.get(`/v2/submissions/${submission.id}`))).toMatchObject({ callsign: "EAGLE-1", age: 30 });
});

test("a chain stops at depth 3: the run of the event at that depth is stopped and says so", async () => {
  const { api, private_ } = await account();
  const a = await automation(api, {
    triggers: ["rank.updated"],
    actions: [{ type: "update", target: "record", increment: { order: 1 } }],
  });
  run();
  await ok(api.patch(`/v2/ranks/${private_.id}`, { order: 100 }));
  const runs = await finishedRuns(a.id, 4);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect((await runsOf(a.id)).map((r) => [r.depth, r.status])).toEqual([
    [0, "succeeded"],
    [1, "succeeded"],
    [2, "succeeded"],
    [3, "stopped"],
  ]);
  expect(runs[3].error).toBe(DEPTH_GUARD_ERROR);
  expect(runs[3].error).toMatch(/depth guard stopped the chain/);
  expect((await ok(api.get(`/v2/ranks/${private_.id}`))).order).toBe(103);
});

test("a failed action is retried with backoff; actions already done are not done again; the run succeeds", async () => {
  const { api } = await account();
  const r = await receiver();
  r.answer = (_req, n) => (n < 2 ? 503 : 200);
  const a = await automation(api, {
    triggers: ["rank.created"],
    actions: [
      { type: "update", target: "record", increment: { order: 5 } },
      { type: "webhook", url: r.url, body: { rank: "{{ data.name }}" } },
    ],
  });
  run();
  const rank = await ok(api.post("/v2/ranks", { name: "Colonel", abbreviation: "COL" }));
  const [logged] = await finishedRuns(a.id, 1);
  expect(logged).toMatchObject({ status: "succeeded", attempts: 3 });
  expect(r.received).toHaveLength(3);
  expect(new Set(r.received.map((x) => x.headers["x-muster-delivery"])).size).toBe(1);
  expect((await ok(api.get(`/v2/ranks/${rank.id}`))).order).toBe(rank.order + 5);
  expect(jsonOf(logged.outcomes).map((o: { status: string }) => o.status)).toEqual(["done", "succeeded"]);
  expect(await h.db.prisma.automationEffect.count({ where: { runId: logged.id } })).toBe(2);
});

test("after the last attempt the run is failed and the cursor moves on to the next event", async () => {
  const { api } = await account();
  const r = await receiver();
  r.answer = (req) => (JSON.parse(req.raw).name === "Doomed" ? 500 : 200);
  const a = await automation(api, {
    triggers: ["rank.created"],
    actions: [{ type: "webhook", url: r.url, body: { name: "{{ data.name }}" } }],
  });
  run();
  await ok(api.post("/v2/ranks", { name: "Doomed", abbreviation: "DOO" }));
  await ok(api.post("/v2/ranks", { name: "Fine", abbreviation: "FIN" }));
  const runs = await finishedRuns(a.id, 2);
  expect(runs.map((x) => [x.status, x.attempts])).toEqual([
    ["failed", 3],
    ["succeeded", 1],
  ]);
  expect(runs[0].error).toBe("HTTP 500");
  expect(jsonOf(runs[0].outcomes)[0]).toMatchObject({ status: "failed", detail: { status_code: 500 } });
});

test("an action beyond the owner's scopes fails at once, without retrying, and nothing is written", async () => {
  const { key, api, user } = await account();
  const a = await automation(api, {
    triggers: ["rank.created"],
    actions: [{ type: "message", to: { kind: "users", user_ids: [user.id] }, text: "x" }],
  });
  await h.db.prisma.automation.update({ where: { id: a.id }, data: { ownerScopes: ["view:rank"] } });
  run();
  await ok(api.post("/v2/ranks", { name: "Captain", abbreviation: "CPT" }));
  const [logged] = await finishedRuns(a.id, 1);
  expect(logged).toMatchObject({ status: "failed", attempts: 1 });
  expect(logged.error).toMatch(/forbidden|scope|permission/i);
  expect(await h.db.prisma.message.count({ where: { accountId: key.accountId } })).toBe(0);
});

test("an update of a record deleted meanwhile fails at once, saying so; notifications off still trigger", async () => {
  const { key, api } = await account();
  const a = await automation(api, {
    triggers: ["rank.created"],
    actions: [{ type: "update", target: "record", increment: { order: 1 } }],
  });
  const quiet = client(h, key.key, { "x-perscom-notifications": "false" });
  const rank = await ok(quiet.post("/v2/ranks", { name: "Fleeting", abbreviation: "FLE" }));
  await ok(api.delete(`/v2/ranks/${rank.id}`));
  run();
  const [logged] = await finishedRuns(a.id, 1);
  expect(logged).toMatchObject({ status: "failed", attempts: 1 });
  expect(logged.error).toMatch(/not found/i);
});

test("an automation whose owner key was revoked acts no more: the run fails saying why", async () => {
  const { key, api } = await account();
  const r = await receiver();
  const a = await automation(api, {
    triggers: ["rank.created"],
    actions: [{ type: "webhook", url: r.url, body: { text: "x" } }],
  });
  const other = await createApiKey(h.db.store, { account: `auto${accounts}`, scopes: "*" });
  await h.db.prisma.apiKey.update({ where: { id: key.id }, data: { revokedAt: new Date() } });
  run();
  await ok(client(h, other.key).post("/v2/ranks", { name: "Ghost", abbreviation: "GHO" }));
  const [logged] = await finishedRuns(a.id, 1);
  expect(logged).toMatchObject({
    status: "failed",
    attempts: 1,
    error: `The automation's owner, key ${key.id}, was revoked.`,
  });
  expect(r.received).toEqual([]);
});

test("a key's scopes narrowed since it saved the automation narrow the automation's", async () => {
  const { key, api, user } = await account();
  const a = await automation(api, {
    triggers: ["rank.created"],
    actions: [{ type: "message", to: { kind: "users", user_ids: [user.id] }, text: "x" }],
  });
  await h.db.prisma.apiKey.update({
    where: { id: key.id },
    data: { scopes: JSON.stringify(["view:rank", "create:rank"]) },
  });
  const other = await createApiKey(h.db.store, { account: `auto${accounts}`, scopes: "*" });
  run();
  await ok(client(h, other.key).post("/v2/ranks", { name: "Cadet", abbreviation: "CDT" }));
  const [logged] = await finishedRuns(a.id, 1);
  expect(logged).toMatchObject({ status: "failed", attempts: 1 });
  expect(await h.db.prisma.message.count({ where: { accountId: key.accountId } })).toBe(0);
});

test("among the automations one event triggers, higher priority runs first", async () => {
  const { api } = await account();
  const r = await receiver();
  const low = await automation(api, {
    triggers: ["rank.created"],
    priority: 1,
    actions: [{ type: "webhook", url: r.url, body: { who: "low" } }],
  });
  const high = await automation(api, {
    triggers: ["rank.created"],
    priority: 5,
    actions: [{ type: "webhook", url: r.url, body: { who: "high" } }],
  });
  run();
  await ok(api.post("/v2/ranks", { name: "General", abbreviation: "GEN" }));
  await ok(api.post("/v2/ranks", { name: "Admiral", abbreviation: "ADM" }));
  const got = await r.until((list) => list.length === 4);
  // Per event, high before low.
  const order = got.map((x) => [x.headers["x-muster-delivery"]!.toString().split("-")[1], JSON.parse(x.raw).who]);
  for (const event of new Set(order.map(([e]) => e))) {
    expect(order.filter(([e]) => e === event).map(([, who]) => who)).toEqual(["high", "low"]);
  }
  expect((await finishedRuns(low.id, 2)).length + (await finishedRuns(high.id, 2)).length).toBe(4);
});

test("a schedule runs once per due time: a missed hour runs once, the same due time never twice", async () => {
  const { api } = await account();
  const r = await receiver();
  const missed = new Date(Math.floor((Date.now() - 60 * 60 * 1000) / 60_000) * 60_000);
  const a = await automation(api, {
    triggers: [],
    schedule: "* * * * *",
    nextRunAt: missed,
    actions: [
      {
        type: "webhook",
        url: r.url,
        body: { due: "{{ schedule.due_at }}", people: "{{ users_count }}", unit: "{{ account.name }}" },
      },
    ],
  });
  run();
  await r.until((list) => list.length === 1);
  const [first] = await finishedRuns(a.id, 1);
  expect(JSON.parse(r.received[0].raw)).toEqual({ due: missed.toISOString(), people: "1", unit: `auto${accounts}` });
  expect(first).toMatchObject({ status: "succeeded", scheduledFor: missed, eventId: null, conditionValue: null });
  // The next due time is the first after now, not the minute after the missed one.
  const next = (await h.db.prisma.automation.findUniqueOrThrow({ where: { id: a.id } })).nextRunAt!;
  expect(next.getTime()).toBeGreaterThan(Date.now());
  expect(next.getTime() - Date.now()).toBeLessThanOrEqual(60_000);
  expect(next.getUTCSeconds()).toBe(0);

  // Due again at a time it already ran for (another instance's stale view): nothing is sent again.
  await h.db.prisma.automation.update({ where: { id: a.id }, data: { nextRunAt: missed } });
  await expect
    .poll(async () => (await h.db.prisma.automation.findUniqueOrThrow({ where: { id: a.id } })).nextRunAt!.getTime())
    .toBeGreaterThan(Date.now());
  // And at a later one: it runs once for it.
  const later = new Date(missed.getTime() + 60_000);
  await h.db.prisma.automation.update({ where: { id: a.id }, data: { nextRunAt: later } });
  await r.until((list) => list.length === 2);
  await finishedRuns(a.id, 2);
  await runner!.stop();
  runner = null;
  expect(r.received.map((x) => JSON.parse(x.raw).due)).toEqual([missed.toISOString(), later.toISOString()]);
  expect((await runsOf(a.id)).map((x) => x.scheduledFor?.toISOString())).toEqual([
    missed.toISOString(),
    later.toISOString(),
  ]);
  const logged = await ok(api.get(`/v2/automations/${a.id}/runs`));
  expect(logged.map((x: { status: string }) => x.status)).toEqual(["succeeded", "succeeded"]);
});

test("a schedule is read in the account's time zone", async () => {
  const { key, api } = await account();
  const r = await receiver();
  const zone = { accountId: key.accountId, group: "organization", name: "timezone" };
  const setting = await h.db.prisma.setting.findFirst({ where: zone });
  if (setting) await h.db.prisma.setting.update({ where: { id: setting.id }, data: { payload: "Europe/Berlin" } });
  else await h.db.prisma.setting.create({ data: { ...zone, payload: "Europe/Berlin" } });
  const due = new Date("2026-11-30T07:00:00Z");
  const a = await automation(api, {
    triggers: [],
    schedule: "0 8 * * 1",
    nextRunAt: due,
    actions: [{ type: "webhook", url: r.url, body: { due: "{{ schedule.due_at }}" } }],
  });
  run();
  await r.until((list) => list.length === 1);
  await finishedRuns(a.id, 1);
  const next = (await h.db.prisma.automation.findUniqueOrThrow({ where: { id: a.id } })).nextRunAt!;
  // Mondays 08:00 in Berlin: 07:00 UTC in winter, 06:00 in summer.
  expect(next.getUTCDay()).toBe(1);
  expect([6, 7]).toContain(next.getUTCHours());
  expect(next.getTime()).toBeGreaterThan(Date.now());
});

test("runs and their effects older than the retention period are pruned; newer ones kept", async () => {
  const { key, api } = await account();
  const a = await automation(api, {
    triggers: ["rank.created"],
    actions: [{ type: "update", target: "record", increment: { order: 1 } }],
  });
  const day = 86_400_000;
  const made = [];
  for (const [n, age] of [40, 35, 1].entries()) {
    const createdAt = new Date(Date.now() - age * day);
    const row = await h.db.prisma.automationRun.create({
      data: { accountId: key.accountId, automationId: a.id, eventId: 10_000 + n, status: "succeeded", createdAt },
    });
    await h.db.prisma.automationEffect.create({
      data: { key: `a${a.id}-e${10_000 + n}-0`, accountId: key.accountId, runId: row.id, createdAt },
    });
    made.push(row.id);
  }
  expect(await pruneRuns(h.db, new Date(Date.now() - 30 * day))).toBe(2);
  expect((await runsOf(a.id)).map((r) => r.id)).toEqual([made[2]]);
  expect((await h.db.prisma.automationEffect.findMany({ where: { runId: { in: made } } })).map((e) => e.runId)).toEqual(
    [made[2]],
  );
});
