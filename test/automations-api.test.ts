import { afterAll, beforeAll, expect, test } from "vitest";
import { client, seed, startHarness, type Client, type Harness } from "./harness.ts";
import { readEventsBefore } from "../src/events/feed.ts";
import { automationVariables } from "../src/events/automations/variables.ts";
import { createApiKey } from "../src/auth/accounts.ts";

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
  ["unknown trigger", { triggers: ["rank.promoted"] }, ["triggers.0"]],
  ["no trigger nor schedule", { triggers: [] }, ["triggers"]],
  ["cron of four fields", { schedule: "0 8 * *" }, ["schedule"], /five fields/],
  ["cron out of range", { schedule: "61 8 * * 1" }, ["schedule"], /minute/],
  ["cron nonsense", { schedule: "every monday please" }, ["schedule"]],
  ["condition syntax", { condition: "data.type ==" }, ["condition"], /at position \d+/],
  ["condition into prototypes", { condition: "data.constructor == 1" }, ["condition"], /at position \d+/],
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
  const limited = client(h, await h.key("alpha", "create:automation,update:automation,view:automation"));
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
  expect(stored.ownerScopes).toEqual(["create:automation", "update:automation", "view:automation"]);

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
    data: { scopes: JSON.stringify(["view:automation"]) },
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
