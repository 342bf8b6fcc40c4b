import { afterAll, beforeAll, expect, test } from "vitest";
import { client, seed, startHarness, type Client, type Harness } from "./harness.ts";
import { readEventsBefore } from "../src/events/feed.ts";
import { automationVariables } from "../src/events/automations/variables.ts";
import { createApiKey } from "../src/auth/accounts.ts";
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { cliArgs } from "./support/built.ts";
import { AUTOMATION_STARTERS, starterAutomation } from "../src/resources/automation-starters.ts";

/*
 * The automations API: saving, checking and testing an automation, its runs, the starters and the CLI. The runner is
 * another module's; here nothing is performed.
 */

let h: Harness;
let api: Client;
let accountId: number;
let ids: Awaited<ReturnType<typeof seed>>;

beforeAll(async () => {
  h = await startHarness({ webhooksAllowPrivate: true, webhookDispatch: false });
  api = client(h, await h.key("alpha"));
  ids = await seed(api);
  accountId = (await h.db.store.findFirstOrThrow("Account", { where: { name: "alpha" } })).id;
});
afterAll(() => h?.close());

const latestEvent = async (type: string) => {
  const events = await readEventsBefore(h.db.store, { accountId, limit: 50, types: [type] });
  return events[events.length - 1];
};

test("variables: a record's event carries its person as REST shows them, with record counts, and the account", async () => {
  await api.post("/v2/qualification-records", { user_id: ids.user.id, qualification_id: ids.qualification.id });
  const r = await api.post("/v2/rank-records", { user_id: ids.user.id, rank_id: ids.corporal.id, type: 0 });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const event = await latestEvent("rankrecord.created");
  const variables = await automationVariables(h.db.store, accountId, event);
  expect(variables).toMatchObject({
    type: "rankrecord.created",
    data: { id: r.body.data.id, user_id: ids.user.id, rank_id: ids.corporal.id, type: 0 },
    changes: null,
    actor: { type: "key" },
    account: { id: accountId, name: "alpha" },
    event: { id: event.id, created_at: event.createdAt.toISOString() },
    user: {
      id: ids.user.id,
      name: "Ann Smith",
      email: "ann@example.com",
      rank_records_count: 1,
      qualification_records_count: 1,
      award_records_count: 0,
      assignment_records_count: 0,
      combat_records_count: 0,
      service_records_count: 0,
      rank: { id: ids.corporal.id, name: "Corporal", abbreviation: "CPL" },
    },
  });
  expect(Object.getPrototypeOf(variables.user)).toBe(Object.prototype);
  expect(JSON.parse(JSON.stringify(variables))).toEqual(variables);
});

test("variables: a user event's person is the record itself; an update's changes are as stored; no event: no person", async () => {
  expect((await api.patch(`/v2/users/${ids.other.id}`, { name: "Bob Brown" })).status).toBe(200);
  const event = await latestEvent("user.updated");
  const variables = await automationVariables(h.db.store, accountId, event);
  expect(variables.user).toMatchObject({ id: ids.other.id, name: "Bob Brown", rank_records_count: 0 });
  expect(variables.changes).toMatchObject({ name: { old: "Bob Jones", new: "Bob Brown" } });
  const scheduled = await automationVariables(h.db.store, accountId, null);
  expect(scheduled).toMatchObject({ data: null, changes: null, type: null, user: null, event: null });
  expect(scheduled.account).toMatchObject({ id: accountId, name: "alpha" });
});

const discordAction = (content = "{{ user.name }} was promoted to rank {{ data.rank_id }}") => ({
  type: "webhook",
  url: "http://127.0.0.1:9/discord",
  preset: "discord",
  body: { content },
});

async function createAutomation(body: Record<string, unknown> = {}) {
  const r = await api.post("/v2/automations", {
    name: "Promotion",
    triggers: ["rankrecord.created"],
    condition: "data.type == 0",
    actions: [discordAction()],
    ...body,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data;
}

test("REST CRUD: the secret is shown once; the owner, the cursor and the schedule's next run are the service's", async () => {
  const created = await createAutomation({ description: "Announce promotions", priority: 5 });
  expect(created).toMatchObject({
    name: "Promotion",
    description: "Announce promotions",
    enabled: true,
    triggers: ["rankrecord.created"],
    schedule: null,
    condition: "data.type == 0",
    priority: 5,
    actions: [discordAction()],
    owner_user_id: null,
    next_run_at: null,
    test_result: null,
  });
  expect(created.owner_key_id).toEqual(expect.any(Number));
  expect(created.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
  for (const key of ["owner_scopes", "cursor_txid", "cursor_id", "attempts", "claimed_by", "account_id"])
    expect(created).not.toHaveProperty(key);
  const stored = await h.db.prisma.automation.findUniqueOrThrow({ where: { id: created.id } });
  expect(stored.secret).toBe(created.secret);
  expect(stored.ownerScopes).toEqual(["*"]);
  const latest = await h.db.prisma.changeEvent.findFirst({
    where: { accountId },
    orderBy: [{ txid: "desc" }, { id: "desc" }],
  });
  expect({ txid: String(stored.cursorTxid), id: stored.cursorId }).toEqual({
    txid: String(latest!.txid),
    id: latest!.id,
  });

  const shown = await api.get(`/v2/automations/${created.id}`);
  expect(shown.body.data).toMatchObject({ id: created.id, secret: null });
  const listed = await api.get("/v2/automations");
  expect(JSON.stringify(listed.body)).not.toContain(created.secret);
  const searched = await api.post("/v2/automations/search", {
    filters: [{ field: "name", operator: "=", value: "Promotion" }],
  });
  expect(searched.status, JSON.stringify(searched.body)).toBe(200);

  const updated = await api.patch(`/v2/automations/${created.id}`, {
    triggers: [],
    schedule: "0 8 * * 1",
    enabled: true,
    condition: null,
  });
  expect(updated.status, JSON.stringify(updated.body)).toBe(200);
  expect(updated.body.data).toMatchObject({ triggers: [], schedule: "0 8 * * 1", condition: null, secret: null });
  const next = new Date(updated.body.data.next_run_at);
  // Mondays 08:00 in the account's time zone (UTC by default), within the coming week.
  expect([next.getUTCDay(), next.getUTCHours(), next.getUTCMinutes()]).toEqual([1, 8, 0]);
  expect(next.getTime() - Date.now()).toBeLessThanOrEqual(7 * 24 * 3600 * 1000);
  const disabled = await api.patch(`/v2/automations/${created.id}`, { enabled: false });
  expect(disabled.body.data.next_run_at).toBeNull();

  expect((await api.delete(`/v2/automations/${created.id}`)).status).toBe(200);
  expect((await api.get(`/v2/automations/${created.id}`)).status).toBe(404);
});

test("the schedule is read in the account's time zone setting", async () => {
  await h.db.prisma.setting.updateMany({
    where: { accountId, group: "organization", name: "timezone" },
    data: { payload: "America/New_York" },
  });
  try {
    const created = await createAutomation({ triggers: [], schedule: "30 9 * * *", condition: null });
    const hour = Number(
      new Intl.DateTimeFormat("en-US", { timeZone: "America/New_York", hour: "numeric", hour12: false }).format(
        new Date(created.next_run_at),
      ),
    );
    expect([hour, new Date(created.next_run_at).getUTCMinutes()]).toEqual([9, 30]);
  } finally {
    await h.db.prisma.setting.updateMany({
      where: { accountId, group: "organization", name: "timezone" },
      data: { payload: "UTC" },
    });
  }
});

/** Each body is refused with a 422 whose errors name exactly `fields`, and nothing is stored. */
const badInput: Array<[string, Record<string, unknown>, string[], RegExp?]> = [
  ["no name", { name: undefined }, ["name"]],
  ["no triggers", { triggers: undefined }, ["triggers"]],
  ["unknown trigger", { triggers: ["rank.promoted"] }, ["triggers.0"]],
  ["no trigger nor schedule", { triggers: [] }, ["triggers"]],
  ["cron of four fields", { schedule: "0 8 * *" }, ["schedule"], /five fields/],
  ["cron out of range", { schedule: "61 8 * * 1" }, ["schedule"], /minute/],
  ["cron nonsense", { schedule: "every monday please" }, ["schedule"]],
  ["condition syntax", { condition: "data.type ==" }, ["condition"], /at position \d+/],
  ["condition into prototypes", { condition: "data.constructor == 1" }, ["condition"], /at position \d+/],
  ["condition with an unclosed bracket", { condition: "(data.type == 0" }, ["condition"], /not closed at position 0/],
  ["condition with an unclosed list", { condition: "data.form_id in [3, 4" }, ["condition"], /at position 21/],
  ["no actions", { actions: [] }, ["actions"]],
  ["actions not a list", { actions: { type: "webhook" } }, ["actions"]],
  ["too many actions", { actions: Array.from({ length: 11 }, () => discordAction()) }, ["actions"]],
  ["unknown action type", { actions: [{ type: "sms" }] }, ["actions.0.type"]],
  ["unknown action key", { actions: [{ ...discordAction(), colour: "red" }] }, ["actions.0.colour"]],
  ["webhook url scheme", { actions: [{ ...discordAction(), url: "ftp://example.com" }] }, ["actions.0.url"]],
  ["discord without content", { actions: [{ ...discordAction(), body: { text: "x" } }] }, ["actions.0.body"]],
  ["discord content too long", { actions: [discordAction("x".repeat(2001))] }, ["actions.0.body.content"]],
  [
    "discord too many embeds",
    { actions: [{ ...discordAction(), body: { embeds: Array.from({ length: 11 }, () => ({})) } }] },
    ["actions.0.body.embeds"],
  ],
  ["slack without text", { actions: [{ ...discordAction(), preset: "slack", body: {} }] }, ["actions.0.body"]],
  ["template syntax", { actions: [discordAction("{{ user.name ")] }, ["actions.0.body.content"], /line 1, column \d+/],
  [
    "header template",
    { actions: [{ ...discordAction(), headers: { "X-Rank": "{% if %}" } }] },
    ["actions.0.headers.X-Rank"],
    /line \d+, column \d+/,
  ],
  [
    "reserved header",
    { actions: [{ ...discordAction(), headers: { Signature: "x" } }] },
    ["actions.0.headers.Signature"],
  ],
  [
    "email to a bad address",
    { actions: [{ type: "email", to: { kind: "address", addresses: ["nobody"] }, subject: "Hi", body: "Hi" }] },
    ["actions.0.to.addresses.0"],
  ],
  [
    "email subject template",
    { actions: [{ type: "email", to: { kind: "person" }, subject: "{% endif %}", body: "Hi" }] },
    ["actions.0.subject"],
  ],
  [
    "email to users (a message's kind)",
    { actions: [{ type: "email", to: { kind: "users", user_ids: [1] }, subject: "Hi", body: "Hi" }] },
    ["actions.0.to.kind"],
  ],
  [
    "message to an unknown role",
    { actions: [{ type: "message", to: { kind: "role", role_id: 999999 }, text: "Hi" }] },
    ["actions.0.to.role_id"],
  ],
  [
    "message to an unknown user",
    { actions: [{ type: "message", to: { kind: "users", user_ids: [999999] }, text: "Hi" }] },
    ["actions.0.to.user_ids.0"],
  ],
  ["message without text", { actions: [{ type: "message", to: { kind: "person" } }] }, ["actions.0.text"]],
  ["update target", { actions: [{ type: "update", target: "rank", set: { name: "x" } }] }, ["actions.0.target"]],
  [
    "update of an unknown field",
    { actions: [{ type: "update", target: "person", set: { rank: 3 } }] },
    ["actions.0.set.rank"],
  ],
  [
    "update of a read-only field",
    { actions: [{ type: "update", target: "record", set: { created_at: "x" } }] },
    ["actions.0.set.created_at"],
  ],
  [
    "increment of a text field",
    { actions: [{ type: "update", target: "record", increment: { text: 1 } }] },
    ["actions.0.increment.text"],
  ],
  [
    "a custom field where there are none",
    { actions: [{ type: "update", target: "person", set: { "fields.callsign": "x" } }] },
    ["actions.0.set.fields.callsign"],
  ],
  [
    "update of the record on a schedule",
    { triggers: [], schedule: "0 8 * * 1", actions: [{ type: "update", target: "record", set: { text: "x" } }] },
    ["actions.0.target"],
  ],
  [
    "create of an unknown resource",
    { actions: [{ type: "update", create: "medals", values: {} }] },
    ["actions.0.create"],
  ],
  [
    "create of a configuration resource",
    { actions: [{ type: "update", create: "webhooks", values: { url: "http://x" } }] },
    ["actions.0.create"],
  ],
  [
    "create without a required value",
    { actions: [{ type: "update", create: "award-records", values: { user_id: "{{ user.id }}" } }] },
    ["actions.0.values.award_id"],
  ],
  [
    "create with a value template",
    {
      actions: [{ type: "update", create: "award-records", values: { user_id: "{{ user.id", award_id: 1 } }],
    },
    ["actions.0.values.user_id"],
  ],
];

test.each(badInput)(
  "bad input (%s) is a 422 naming the field, and nothing is stored",
  async (_, body, fields, message) => {
    const before = await h.db.prisma.automation.count();
    const r = await api.post("/v2/automations", {
      name: "Bad",
      triggers: ["rankrecord.created"],
      actions: [discordAction()],
      ...body,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(Object.keys(r.body.error.errors)).toEqual(fields);
    if (message) expect(r.body.error.errors[fields[0]].join(" ")).toMatch(message);
    expect(await h.db.prisma.automation.count()).toBe(before);
  },
);

test("an update is checked against what is stored: a bad patch is a 422 and changes nothing", async () => {
  const created = await createAutomation();
  const r = await api.patch(`/v2/automations/${created.id}`, { condition: "data.type == (1" });
  expect(r.status).toBe(422);
  expect(Object.keys(r.body.error.errors)).toEqual(["condition"]);
  const cleared = await api.patch(`/v2/automations/${created.id}`, { triggers: [] });
  expect(Object.keys(cleared.body.error.errors)).toEqual(["triggers"]);
  expect((await h.db.prisma.automation.findUniqueOrThrow({ where: { id: created.id } })).condition).toBe(
    "data.type == 0",
  );
});

test("scopes: create:automation is needed; the saving key's scopes limit the actions; publishable keys reach nothing", async () => {
  const viewer = client(h, await h.key("alpha", "view:automation"));
  expect((await viewer.get("/v2/automations")).status).toBe(200);
  expect((await viewer.post("/v2/automations", { name: "x", triggers: ["user.created"], actions: [] })).status).toBe(
    403,
  );
  const limited = client(
    h,
    await h.key("alpha", "create:automation,update:automation,view:automation,view:rankrecord,view:user"),
  );
  const refused = await limited.post("/v2/automations", {
    name: "Bump",
    triggers: ["rankrecord.created"],
    actions: [
      discordAction(),
      { type: "update", target: "person", set: { notes: "promoted" } },
      { type: "message", to: { kind: "person" }, text: "Well done" },
    ],
  });
  expect(refused.status).toBe(422);
  expect(Object.keys(refused.body.error.errors).sort()).toEqual(["actions.1", "actions.2"]);
  expect(refused.body.error.errors["actions.1"][0]).toMatch(/update:user/);
  expect(refused.body.error.errors["actions.2"][0]).toMatch(/create:message/);
  const ok = await limited.post("/v2/automations", {
    name: "Announce",
    triggers: ["rankrecord.created"],
    actions: [discordAction()],
  });
  expect(ok.status).toBe(200);
  const stored = await h.db.prisma.automation.findUniqueOrThrow({ where: { id: ok.body.data.id } });
  expect(stored.ownerScopes).toEqual([
    "create:automation",
    "update:automation",
    "view:automation",
    "view:rankrecord",
    "view:user",
  ]);
  // Saving makes the credential the owner: a key that could not do an automation's actions cannot save it, even to rename it.
  const owned = await createAutomation({ actions: [{ type: "update", target: "person", set: { notes: "promoted" } }] });
  const renamed = await limited.patch(`/v2/automations/${owned.id}`, { name: "Mine now" });
  expect(renamed.status).toBe(422);
  expect(Object.keys(renamed.body.error.errors)).toEqual(["actions.0"]);
  expect((await h.db.prisma.automation.findUniqueOrThrow({ where: { id: owned.id } })).ownerScopes).toEqual(["*"]);

  const origins = ["https://unit.example"];
  const pub = await createApiKey(h.db.store, { account: "alpha", scopes: "view:rank", publishable: true, origins });
  const publicClient = client(h, pub.key, { origin: origins[0] });
  expect((await publicClient.get("/v2/automations")).status).toBe(403);
  await expect(
    createApiKey(h.db.store, { account: "alpha", scopes: "view:automation", publishable: true, origins }),
  ).rejects.toThrow(/automation/);
  // A key edited in the database to hold the scope still reaches nothing.
  await h.db.prisma.apiKey.updateMany({
    where: { publishable: true },
    data: { scopes: ["view:automation"] },
  });
  expect((await publicClient.get("/v2/automations")).status).toBe(403);
});

test("another account's automations do not exist for a key", async () => {
  const created = await createAutomation();
  const beta = client(h, await h.key("beta"));
  expect((await beta.get(`/v2/automations/${created.id}`)).status).toBe(404);
  expect((await beta.patch(`/v2/automations/${created.id}`, { name: "mine" })).status).toBe(404);
  expect((await beta.post(`/v2/automations/${created.id}/test`, {})).status).toBe(404);
  expect((await beta.get(`/v2/automations/${created.id}/runs`)).status).toBe(404);
  // A role or a user of another account is not a recipient.
  const role = await h.db.prisma.role.findFirstOrThrow({ where: { accountId } });
  const r = await beta.post("/v2/automations", {
    name: "x",
    triggers: ["user.created"],
    actions: [
      { type: "message", to: { kind: "role", role_id: role.id }, text: "x" },
      { type: "message", to: { kind: "users", user_ids: [ids.user.id] }, text: "x" },
    ],
  });
  expect(Object.keys(r.body.error.errors).sort()).toEqual(["actions.0.to.role_id", "actions.1.to.user_ids.0"]);
});

test("POST /automations/{id}/test renders every action against a real past event, performs nothing, stores nothing", async () => {
  const role = await h.db.prisma.role.findFirstOrThrow({ where: { accountId, name: "User" } });
  const created = await createAutomation({
    condition: "data.type == 0 and user.rank_records_count >= 1",
    actions: [
      {
        ...discordAction("{{ user.name }} was promoted to {{ user.rank.name }}"),
        headers: { "X-Unit": "{{ account.name }}" },
      },
      {
        type: "email",
        to: { kind: "person" },
        subject: "Congratulations {{ user.name }}",
        body: "Rank {{ user.rank.abbreviation }}",
      },
      { type: "message", to: { kind: "role", role_id: role.id }, text: "{{ user.name }} promoted" },
      { type: "update", target: "person", set: { notes: "Promoted {{ event.created_at | date: '%Y' }}" } },
      { type: "update", create: "award-records", values: { user_id: "{{ user.id }}", award_id: 1 } },
    ],
  });
  const record = await api.post("/v2/rank-records", { user_id: ids.user.id, rank_id: ids.corporal.id, type: 0 });
  const event = await latestEvent("rankrecord.created");
  const before = {
    runs: await h.db.prisma.automationRun.count(),
    messages: await h.db.prisma.message.count(),
    events: await h.db.prisma.changeEvent.count(),
  };
  const holders = (await h.db.prisma.userRole.findMany({ where: { roleId: role.id }, orderBy: { userId: "asc" } })).map(
    (link) => link.userId,
  );
  expect(holders).toContain(ids.user.id);
  const tested = await api.post(`/v2/automations/${created.id}/test`, { event_id: event.id });
  expect(tested.status, JSON.stringify(tested.body)).toBe(200);
  const result = tested.body.data.test_result;
  expect(result).toMatchObject({ event_id: event.id, condition_value: true, condition_error: null });
  const year = String(event.createdAt.getUTCFullYear());
  expect(result.actions).toEqual([
    {
      type: "webhook",
      url: "http://127.0.0.1:9/discord",
      preset: "discord",
      headers: { "X-Unit": "alpha" },
      body: { content: "Ann Smith was promoted to Corporal" },
    },
    { type: "email", to: ["ann@example.com"], subject: "Congratulations Ann Smith", body: "Rank CPL" },
    { type: "message", recipients: holders, text: "Ann Smith promoted", channels: ["database"] },
    {
      type: "update",
      target: "person",
      resource: "user",
      record_id: ids.user.id,
      set: { notes: `Promoted ${year}` },
      increment: {},
    },
    { type: "update", create: "award-records", values: { user_id: String(ids.user.id), award_id: 1 } },
  ]);
  expect(result.variables.data.id).toBe(record.body.data.id);
  expect(tested.body.data.secret).toBeNull();
  expect({
    runs: await h.db.prisma.automationRun.count(),
    messages: await h.db.prisma.message.count(),
    events: await h.db.prisma.changeEvent.count(),
  }).toEqual(before);
  // Shown in the test's answer only.
  expect((await api.get(`/v2/automations/${created.id}`)).body.data.test_result).toBeNull();

  // Neither: the latest event of its triggers. A given event: its type, data and changes.
  const latest = await api.post(`/v2/automations/${created.id}/test`, {});
  expect(latest.body.data.test_result.event_id).toBe(event.id);
  const given = await api.post(`/v2/automations/${created.id}/test`, {
    event: { type: "rankrecord.created", data: { id: 1, user_id: ids.other.id, type: 1 } },
  });
  expect(given.status, JSON.stringify(given.body)).toBe(200);
  expect(given.body.data.test_result).toMatchObject({ event_id: null, condition_value: false });
  expect(given.body.data.test_result.actions[1].to).toEqual(["bob@example.com"]);

  const graph = await api.graphql(
    `mutation($id: Int!, $input: TestAutomationInput!) { testAutomation(rowId: $id, input: $input) { automation { rowId testResult } } }`,
    { id: created.id, input: { eventId: event.id } },
  );
  expect(graph.body.errors, JSON.stringify(graph.body.errors)).toBeUndefined();
  expect(graph.body.data.testAutomation.automation.testResult.condition_value).toBe(true);
});

test("the test route's bad input is a 422 on the field: unknown event, foreign event, bad given event", async () => {
  const created = await createAutomation();
  const beta = client(h, await h.key("beta"));
  await beta.post("/v2/ranks", { name: "Beta rank" });
  const foreign = await h.db.prisma.changeEvent.findFirstOrThrow({ where: { NOT: { accountId } } });
  for (const [body, field] of [
    [{ event_id: 99999999 }, "event_id"],
    [{ event_id: foreign.id }, "event_id"],
    [{ event: { type: "nothing.created" } }, "event.type"],
    [{ event: { type: "rankrecord.created", data: [1] } }, "event.data"],
    [{ event_id: foreign.id, event: { type: "rankrecord.created" } }, "event"],
  ] as const) {
    const r = await api.post(`/v2/automations/${created.id}/test`, body);
    expect(r.status, JSON.stringify(body)).toBe(422);
    expect(Object.keys(r.body.error.errors)).toEqual([field]);
  }
  const scheduled = await createAutomation({
    triggers: [],
    schedule: "0 8 * * 1",
    condition: null,
    actions: [
      { type: "message", to: { kind: "users", user_ids: [ids.user.id] }, text: "Digest for {{ account.name }}" },
    ],
  });
  const r = await api.post(`/v2/automations/${scheduled.id}/test`, {});
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.data.test_result.actions).toEqual([
    { type: "message", recipients: [ids.user.id], text: "Digest for alpha", channels: ["database"] },
  ]);
});

test("runs: listed newest first under the automation, in REST and GraphQL, read-only", async () => {
  const created = await createAutomation();
  const event = await latestEvent("rankrecord.created");
  const outcomes = [{ type: "webhook", status: "succeeded", idempotency_key: "k1", duration_ms: 12 }];
  const first = await h.db.prisma.automationRun.create({
    data: {
      accountId,
      automationId: created.id,
      eventId: event.id,
      eventType: event.type,
      status: "succeeded",
      conditionValue: true,
      outcomes,
      durationMs: 15,
      attempts: 1,
    },
  });
  const second = await h.db.prisma.automationRun.create({
    data: {
      accountId,
      automationId: created.id,
      scheduledFor: new Date("2026-12-07T08:00:00Z"),
      status: "skipped",
      conditionValue: false,
      attempts: 1,
    },
  });
  const listed = await api.get(`/v2/automations/${created.id}/runs`);
  expect(listed.status, JSON.stringify(listed.body)).toBe(200);
  expect(listed.body.data.map((r: { id: number }) => r.id)).toEqual([second.id, first.id]);
  expect(listed.body.data[1]).toMatchObject({
    automation_id: created.id,
    event_id: event.id,
    event_type: "rankrecord.created",
    scheduled_for: null,
    depth: 0,
    status: "succeeded",
    condition_value: true,
    outcomes,
    error: null,
    duration_ms: 15,
    attempts: 1,
  });
  expect(listed.body.data[0]).toMatchObject({ scheduled_for: "2026-12-07T08:00:00.000000Z", status: "skipped" });
  const shown = await api.get(`/v2/automations/${created.id}/runs/${first.id}`);
  expect(shown.body.data.id).toBe(first.id);
  expect((await api.post(`/v2/automations/${created.id}/runs`, { status: "succeeded" })).status).toBe(405);
  const graph = await api.graphql(
    `query($id: Int!) { automation(rowId: $id) { runs { nodes { rowId status conditionValue outcomes } } } }`,
    { id: created.id },
  );
  expect(graph.body.errors).toBeUndefined();
  expect(graph.body.data.automation.runs.nodes.map((r: { rowId: number }) => r.rowId)).toEqual([second.id, first.id]);
  const viewer = client(h, await h.key("alpha", "view:rank"));
  expect((await viewer.get(`/v2/automations/${created.id}/runs`)).status).toBe(403);
});

test("starters: each, given its parameters, is an automation the API saves; an unknown name or a missing parameter is a 422", async () => {
  const role = await h.db.prisma.role.findFirstOrThrow({ where: { accountId, name: "Admin" } });
  const award = (await api.post("/v2/awards", { name: "Triple" })).body.data;
  const parameters = { url: "https://example.invalid/discord", award_id: award.id, role_id: role.id };
  expect(AUTOMATION_STARTERS.map((s) => s.name)).toEqual([
    "promotion-announcement",
    "welcome-email",
    "award-on-qualifications",
    "weekly-roster-digest",
  ]);
  for (const starter of AUTOMATION_STARTERS) {
    const r = await api.post("/v2/automations", starterAutomation(starter.name, parameters));
    expect(r.status, `${starter.name}: ${JSON.stringify(r.body)}`).toBe(200);
  }
  const promotion = starterAutomation("promotion-announcement", parameters);
  expect(promotion).toMatchObject({ triggers: ["rankrecord.created"], condition: "data.type == 0" });
  expect(promotion.actions[0]).toMatchObject({ type: "webhook", preset: "discord", url: parameters.url });
  expect(starterAutomation("weekly-roster-digest", parameters).schedule).toBe("0 8 * * 1");
  const unknown = (() => {
    try {
      starterAutomation("promotions", {});
    } catch (error) {
      return error as { fieldErrors: Record<string, string[]> };
    }
  })();
  expect(unknown!.fieldErrors.starter[0]).toMatch(/promotion-announcement, welcome-email/);
  expect(() => starterAutomation("award-on-qualifications", { award_id: "x" })).toThrow(/award_id/);
  expect(() => starterAutomation("promotion-announcement", {})).toThrow(/url/);
});

test("CLI: automations:create from a starter and from a file, list, disable, enable, runs; bad input is one line and exit 1", async () => {
  const run = promisify(execFile);
  const env = {
    ...process.env,
    DATABASE_URL: h.config.databaseUrl,
    WEBHOOKS_ALLOW_PRIVATE: "true",
    LOG_LEVEL: "silent",
  };
  const cli = (...args: string[]) => run(process.execPath, [...cliArgs, ...args], { env });
  const made = await cli(
    "automations:create",
    "--account",
    "alpha",
    "--starter",
    "promotion-announcement",
    "--url",
    "https://example.invalid/cli",
  );
  const lines = made.stdout.trim().split("\n");
  const secret = lines.at(-1)!;
  expect(secret).toMatch(/^whsec_[0-9a-f]{64}$/);
  const id = Number(/automation (\d+)/.exec(lines[0])![1]);
  expect(await h.db.prisma.automation.findUniqueOrThrow({ where: { id } })).toMatchObject({
    secret,
    name: "Promotion announcement",
    triggers: ["rankrecord.created"],
    ownerKeyId: null,
  });

  const file = path.join(h.dir, "automation.json");
  writeFileSync(
    file,
    JSON.stringify({
      name: "Digest",
      triggers: [],
      schedule: "0 9 * * 5",
      actions: [{ type: "message", to: { kind: "users", user_ids: [ids.user.id] }, text: "Friday" }],
    }),
  );
  const fromFile = await cli("automations:create", "--account", "alpha", "--file", file, "--disabled");
  const fileId = Number(/automation (\d+)/.exec(fromFile.stdout)![1]);
  expect(await h.db.prisma.automation.findUniqueOrThrow({ where: { id: fileId } })).toMatchObject({
    name: "Digest",
    enabled: false,
    nextRunAt: null,
  });

  const listed = (await cli("automations:list", "--account", "alpha")).stdout
    .trim()
    .split("\n")
    .map((l) => l.split("\t"));
  expect(listed[0]).toEqual(["id", "name", "enabled", "triggers", "schedule", "next run", "priority"]);
  expect(listed.find((row) => row[0] === String(id))).toEqual([
    String(id),
    "Promotion announcement",
    "yes",
    "rankrecord.created",
    "-",
    "-",
    "0",
  ]);
  expect((await cli("automations:enable", String(fileId))).stdout).toMatch(/Enabled automation .*next run 20/);
  expect((await h.db.prisma.automation.findUniqueOrThrow({ where: { id: fileId } })).nextRunAt).not.toBeNull();
  await cli("automations:disable", String(id));
  expect((await h.db.prisma.automation.findUniqueOrThrow({ where: { id } })).enabled).toBe(false);

  await h.db.prisma.automationRun.create({
    data: {
      accountId,
      automationId: id,
      eventId: 1,
      eventType: "rankrecord.created",
      status: "failed",
      conditionValue: true,
      outcomes: [{ type: "webhook", status: "failed" }],
      error: "HTTP 500",
      durationMs: 3,
    },
  });
  const runs = (await cli("automations:runs", String(id))).stdout.trim().split("\n");
  expect(runs[1].split("\t").slice(2)).toEqual([
    "rankrecord.created",
    "1",
    "-",
    "failed",
    "true",
    "3",
    "webhook:failed",
    "HTTP 500",
  ]);
  expect((await cli("automations:starters")).stdout).toMatch(/award-on-qualifications.*--award-id/);

  const failing = async (...args: string[]) => {
    const error = (await cli(...args).catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(error.code, args.join(" ")).toBe(1);
    expect(error.stderr.trim().split("\n"), args.join(" ")).toHaveLength(1);
    return error.stderr;
  };
  expect(await failing("automations:create", "--account", "alpha", "--starter", "promotions")).toMatch(/welcome-email/);
  expect(await failing("automations:create", "--account", "alpha", "--starter", "promotion-announcement")).toMatch(
    /--url/,
  );
  writeFileSync(
    file,
    JSON.stringify({ name: "Bad", triggers: ["user.created"], condition: "data.id ==", actions: [] }),
  );
  expect(await failing("automations:create", "--account", "alpha", "--file", file)).toMatch(/condition: .*position/);
  expect(await failing("automations:enable", "999999")).toMatch(/No automation 999999/);
}, 180_000);
