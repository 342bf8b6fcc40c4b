/**
 * A page past a cursor is read from the cursor on, by one seek of an index, not by walking every row before it: the
 * change feed's pages (`/v2/changes?after=`, `changes(last:, before:)`) and the webhook dispatcher's claim, on SQLite,
 * where every event's txid is 0 and a row comparison `("txid", "id") > (?, ?)` would seek on txid alone; and a
 * connection's page after a cursor. Asserted on the plans SQLite makes for the statements the service sends (their
 * results are checked by the change-feed, webhooks and connection tests).
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { client, sqlitePlan, startHarness, testProvider, type Client, type Harness } from "./harness.ts";
import { claimWebhooks } from "../src/events/webhooks/leases.ts";
import { deleteOlderThanSql } from "../src/events/retention.ts";

describe.runIf(testProvider === "sqlite")("SQLite: reading past a cursor", () => {
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

  const planOf = (sql: string) => sqlitePlan(h.db, sql);

  /** The plans of the statements on `table` that `work` sends. */
  async function plansOn(table: string, work: () => Promise<unknown>): Promise<string[][]> {
    sent.length = 0;
    await work();
    const statements = sent.filter((sql) => sql.includes(`FROM "${table}"`) && !sql.startsWith("SELECT COUNT"));
    expect(statements.length).toBeGreaterThan(0);
    return Promise.all(statements.map(planOf));
  }

  const seeksPast = (plan: string[], op: ">" | "<") => plan.some((line) => line.includes(`txid=? AND id${op}?`));

  test("a page of /v2/changes after a cursor", async () => {
    const first = await api.get("/v2/changes?limit=2");
    expect(first.status).toBe(200);
    const plans = await plansOn("ChangeEvent", async () => {
      const next = await api.get(`/v2/changes?limit=2&after=${first.body.meta.next_cursor}`);
      expect(next.status).toBe(200);
      expect(next.body.data.map((e: { id: number }) => e.id)[0]).toBeGreaterThan(first.body.data[1].id);
    });
    for (const plan of plans) expect(seeksPast(plan, ">"), plan.join("\n")).toBe(true);
  });

  test("changes(last:, before:) in GraphQL", async () => {
    const newest = await api.graphql(`{ changes(last: 2) { pageInfo { startCursor } nodes { rowId } } }`);
    const plans = await plansOn("ChangeEvent", async () => {
      const before = await api.graphql(
        `query($before: String) { changes(last: 2, before: $before) { nodes { rowId } } }`,
        {
          before: newest.body.data.changes.pageInfo.startCursor,
        },
      );
      expect(before.body.data.changes.nodes.length).toBe(2);
    });
    for (const plan of plans) expect(seeksPast(plan, "<"), plan.join("\n")).toBe(true);
  });

  test("the webhook dispatcher's claim", async () => {
    const plans = await plansOn("ChangeEvent", async () => {
      const now = new Date();
      await claimWebhooks(h.db, "feed-plans", now, new Date(now.getTime() + 1000), 10);
    });
    for (const plan of plans) expect(seeksPast(plan, ">"), plan.join("\n")).toBe(true);
  });

  test("pruning: the rows older than the retention period, found by their time", async () => {
    for (const table of ["ChangeEvent", "WebhookDelivery"] as const) {
      const plan = await planOf(deleteOlderThanSql(table, 5000).replace("$1", "?"));
      expect(
        plan.some((line) => line.includes("INDEX") && line.includes("(createdAt<?)")),
        plan.join("\n"),
      ).toBe(true);
      expect(
        plan.filter((line) => line.startsWith("SCAN")),
        plan.join("\n"),
      ).toEqual([]);
    }
  });

  test("a connection's page after a cursor", async () => {
    const page = (after: string | null) =>
      api.graphql(
        `query($after: String) { ranks(first: 2, after: $after) { pageInfo { endCursor } nodes { rowId } } }`,
        { after },
      );
    const first = await page(null);
    const plans = await plansOn("Rank", async () => {
      const next = await page(first.body.data.ranks.pageInfo.endCursor);
      expect(next.body.data.ranks.nodes.length).toBe(2);
    });
    // The list's order (its own, then the id) starts at the cursor's first key: a range on that column.
    for (const plan of plans)
      expect(
        plan.some((line) => /\(accountId=\? AND "?\w+"?[<>]\?\)/.test(line)),
        plan.join("\n"),
      ).toBe(true);
  });
});

describe("a connection walked by cursor, with ties in its first key", () => {
  let h: Harness;
  let api: Client;
  beforeAll(async () => {
    h = await startHarness();
    api = client(h, await h.key("walks"));
    for (const name of ["Tie", "Alpha", "Tie", "Zulu", "Tie", "Alpha", "Mike", "Tie"])
      expect((await api.post("/v2/ranks", { name })).status).toBe(200);
  });
  afterAll(async () => {
    await h?.close();
  });

  const order = `orderBy: [{ name: desc }]`;
  const all = async () =>
    (await api.graphql(`{ ranks(first: 100, ${order}) { nodes { rowId name } } }`)).body.data.ranks.nodes;

  /** The whole list, three rows a page: forward (`first`/`after`) or backward (`last`/`before`). */
  async function walk(forward: boolean): Promise<unknown[]> {
    const [size, cursor, more, next] = forward
      ? ["first", "after", "hasNextPage", "endCursor"]
      : ["last", "before", "hasPreviousPage", "startCursor"];
    const rows: unknown[] = [];
    let at: string | null = null;
    for (let pages = 0; pages < 20; pages++) {
      const r = await api.graphql(
        `query($at: String) { ranks(${size}: 3, ${cursor}: $at, ${order}) { pageInfo { ${more} ${next} } nodes { rowId name } } }`,
        { at },
      );
      const { nodes, pageInfo } = r.body.data.ranks;
      if (forward) rows.push(...nodes);
      else rows.unshift(...nodes);
      if (!pageInfo[more]) break;
      at = pageInfo[next];
    }
    return rows;
  }

  test("forward with first/after and backward with last/before: every row once, in the list's order", async () => {
    const expected = await all();
    expect(expected).toHaveLength(8);
    expect(await walk(true)).toEqual(expected);
    expect(await walk(false)).toEqual(expected);
  });
});

describe("foreign keys", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  /** `table.column` of each row. */
  const pairs = (rows: unknown[][]) => rows.map(([table, column]) => `${String(table).replace(/"/g, "")}.${column}`);

  test("every one leads an index: a parent's rows (and the check when a parent is deleted) are found by seeking, not by reading the table", async () => {
    const sqlite = testProvider === "sqlite";
    const keys = pairs(
      await h.db.read(
        sqlite
          ? `SELECT m."name", f."from" FROM "sqlite_master" AS m, pragma_foreign_key_list(m."name") AS f WHERE m."type" = 'table'`
          : `SELECT c.conrelid::regclass::text, a.attname FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1] WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace`,
        [],
      ),
    );
    const leading = new Set(
      pairs(
        await h.db.read(
          sqlite
            ? `SELECT m."name", i."name" FROM "sqlite_master" AS m, pragma_index_list(m."name") AS l, pragma_index_info(l."name") AS i WHERE m."type" = 'table' AND i."seqno" = 0`
            : `SELECT x.indrelid::regclass::text, a.attname FROM pg_index x JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[0] JOIN pg_class t ON t.oid = x.indrelid WHERE t.relnamespace = 'public'::regnamespace`,
          [],
        ),
      ),
    );
    // On SQLite an INTEGER PRIMARY KEY is the rowid itself (a password's userId): sought without an index of its own.
    if (sqlite)
      for (const key of pairs(
        await h.db.read(
          `SELECT m."name", p."name" FROM "sqlite_master" AS m, pragma_table_info(m."name") AS p WHERE m."type" = 'table' AND p."pk" = 1 AND upper(p."type") = 'INTEGER'`,
          [],
        ),
      ))
        leading.add(key);
    expect(keys.length).toBeGreaterThan(40);
    expect(keys.filter((key) => !leading.has(key))).toEqual([]);
  });
});
