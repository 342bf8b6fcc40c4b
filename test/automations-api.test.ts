import { afterAll, beforeAll, expect, test } from "vitest";
import { client, seed, startHarness, type Client, type Harness } from "./harness.ts";
import { readEventsBefore } from "../src/events/feed.ts";
import { automationVariables } from "../src/events/automations/variables.ts";

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
