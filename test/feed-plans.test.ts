/**
 * Reading the change feed past a cursor is one seek of the index, not a walk of the account's log: the feed's pages
 * (`/v2/changes?after=`, `changes(last:, before:)`) and the webhook dispatcher's claim, on SQLite, where every
 * event's txid is 0 and a row comparison `("txid", "id") > (?, ?)` would seek on txid alone. Asserted on the plans
 * SQLite makes for the statements the service sends (their results are checked by change-feed and webhooks tests).
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { client, startHarness, testProvider, type Client, type Harness } from "./harness.ts";
import { claimWebhooks } from "../src/events/webhooks/leases.ts";

describe.runIf(testProvider === "sqlite")("SQLite: the change feed past a cursor", () => {
  let h: Harness;
  let api: Client;
  const sent: string[] = [];
  const record = (sql: string) => void sent.push(sql);

  beforeAll(async () => {
    h = await startHarness({ webhooksAllowPrivate: true, webhookPollMs: 60_000 });
    api = client(h, await h.key("feed-plans"));
    for (let i = 0; i < 4; i++) expect((await api.post("/v2/ranks", { name: `Rank ${i}` })).status).toBe(200);
    expect((await api.post("/v2/webhooks", { url: "http://127.0.0.1:9/hook", events: ["*"] })).status).toBe(200);
    h.db.onReaderStatement.add(record);
  });
  afterAll(async () => {
    h.db.onReaderStatement.delete(record);
    await h?.close();
  });

  /** SQLite's plan for `sql` (its parameters left null: the plan does not depend on them). */
  async function planOf(sql: string): Promise<string[]> {
    const params = Array.from(sql.matchAll(/\?/g), () => null);
    return ((await h.db.read(`EXPLAIN QUERY PLAN ${sql}`, params)) as unknown[][]).map((row) => String(row[3]));
  }

  /** The plans of the statements on ChangeEvent that `work` sends. */
  async function feedPlans(work: () => Promise<unknown>): Promise<string[][]> {
    sent.length = 0;
    await work();
    const statements = sent.filter((sql) => sql.includes(`"ChangeEvent"`) && !sql.startsWith("SELECT COUNT"));
    expect(statements.length).toBeGreaterThan(0);
    return Promise.all(statements.map(planOf));
  }

  const seeksPast = (plan: string[], op: ">" | "<") => plan.some((line) => line.includes(`txid=? AND id${op}?`));

  test("a page of /v2/changes after a cursor", async () => {
    const first = await api.get("/v2/changes?limit=2");
    expect(first.status).toBe(200);
    const plans = await feedPlans(async () => {
      const next = await api.get(`/v2/changes?limit=2&after=${first.body.meta.next_cursor}`);
      expect(next.status).toBe(200);
      expect(next.body.data.map((e: { id: number }) => e.id)[0]).toBeGreaterThan(first.body.data[1].id);
    });
    for (const plan of plans) expect(seeksPast(plan, ">"), plan.join("\n")).toBe(true);
  });

  test("changes(last:, before:) in GraphQL", async () => {
    const newest = await api.graphql(`{ changes(last: 2) { pageInfo { startCursor } nodes { rowId } } }`);
    const plans = await feedPlans(async () => {
      const before = await api.graphql(`query($before: String) { changes(last: 2, before: $before) { nodes { rowId } } }`, {
        before: newest.body.data.changes.pageInfo.startCursor,
      });
      expect(before.body.data.changes.nodes.length).toBe(2);
    });
    for (const plan of plans) expect(seeksPast(plan, "<"), plan.join("\n")).toBe(true);
  });

  test("the webhook dispatcher's claim", async () => {
    const plans = await feedPlans(async () => {
      const now = new Date();
      await claimWebhooks(h.db, "feed-plans", now, new Date(now.getTime() + 1000), 10);
    });
    for (const plan of plans) expect(seeksPast(plan, ">"), plan.join("\n")).toBe(true);
  });
});
