import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { operations, pivotOf, type Operation } from "../src/resources/operations.ts";
import { includeTree, type IncludeTree } from "../src/rest/includes.ts";
import { resourceNamed } from "../src/resources/index.ts";
import { morphOwnersOf } from "../src/resources/index.ts";
import { startHarness, type Harness } from "./harness.ts";
import { World } from "./support/world.ts";
import { groupOf, seededParams } from "./support/plans.ts";
import { pathOf } from "./support/registry.ts";

/**
 * No N+1, pinned: every list route, with its deepest allowed includes, runs (nearly) the same number
 * of SQL statements for a page of 1 row as for a page of 10, and no more than one statement per
 * relation it embeds on top of the same list without includes. "Nearly": a look-up that only runs when
 * some row has something to look up (users' last-change dates, the owner types of a polymorphic
 * relation) may join on the larger page; it is bounded by the include tree, never by the rows.
 */
let h: Harness;
let w: World;

const lists = operations.filter((op) => op.kind === "list");

/** The op's include values, deepest first, within the per-request cap; `x.*` wildcards left out (they name no single relation). */
function deepestIncludes(op: Operation, cap: number): string[] {
  const values = op.includes.filter((v) => !v.includes("*"));
  return values
    .sort((a, b) => b.split(".").length - a.split(".").length || a.localeCompare(b))
    .slice(0, cap)
    .sort();
}

const treePaths = (tree: IncludeTree, prefix = ""): string[] =>
  [...tree].flatMap(([name, sub]) => [`${prefix}${name}`, ...treePaths(sub, `${prefix}${name}.`)]);
const nodes = (tree: IncludeTree): number => [...tree.values()].reduce((n, sub) => n + 1 + nodes(sub), 0);

const ROWS = 10;

/** Rows the list at `op` shows beyond the seeded one, so that the larger page really holds ROWS. */
async function fillList(op: Operation): Promise<void> {
  if (op.view) return;
  const g = groupOf(op);
  const create = operations.find(
    (o) =>
      o.kind === "create" &&
      (g ? o.parent?.route === op.parent?.route && o.parent?.def === op.parent?.def : !o.parent && o.def === op.def),
  );
  if (!create) return;
  const parent = g ? { id: w.pair(g).parent } : undefined;
  for (let i = 0; i < ROWS - 1; i++) await w.factory.create(op.def, { full: true, ...(parent ? { parent } : {}) });
}

async function statements(url: string): Promise<{ count: number; rows: number }> {
  const before = h.db.statements.count;
  const reply = await w.api.get(url);
  expect(reply.status, `${url}: ${JSON.stringify(reply.body).slice(0, 300)}`).toBe(200);
  return { count: h.db.statements.count - before, rows: reply.body.data.length };
}

beforeAll(async () => {
  h = await startHarness({ rateLimitPerMinute: 100_000 });
  w = await new World(h, "counted", "counted").seed();
}, 240_000);
afterAll(() => h.close());

describe("SQL statements per list request do not grow with the page", () => {
  for (const op of lists) {
    test(`${op.method} ${op.path}`, async () => {
      await fillList(op);
      const params = seededParams(op, w);
      const includes = deepestIncludes(op, h.config.includeMaxCount);
      const query = includes.length ? `include=${includes.join(",")}&` : "";
      // The first request warms per-process caches (the key's last use, prepared documents).
      await statements(pathOf(op, params, `${query}limit=1`));
      const one = await statements(pathOf(op, params, `${query}limit=1`));
      const many = await statements(pathOf(op, params, `${query}limit=${ROWS}`));
      const bare = await statements(pathOf(op, params, `limit=${ROWS}`));
      const pivot = pivotOf(op);
      const tree = includes.length
        ? includeTree(pivot ? resourceNamed(pivot.related) : op.def, includes, pivot ? [pivot.as] : [])
        : new Map();
      const paths = treePaths(tree);
      // Users bring two grouped look-ups (last rank and assignment change); a polymorphic owner one per owner type.
      const users =
        paths.filter((p) => /(^|\.)(user|users|author|instructor|likes)$/.test(p)).length +
        (op.def.name === "user" ? 1 : 0);
      const morphs = paths.filter((p) => /(^|\.)(model|commentable)$/.test(p)).length;
      const ownerTypes = Math.max(...["image", "comment", "attachment"].map((t) => morphOwnersOf(t).length));
      const conditional = 2 * users + (ownerTypes - 1) * morphs;
      if (!op.view && many.rows === ROWS)
        expect(many.count - one.count, `page of ${many.rows} vs page of ${one.rows}`).toBeLessThanOrEqual(
          Math.min(conditional, ROWS - 2),
        );
      expect(many.count, includes.join(",")).toBeLessThanOrEqual(bare.count + 2 * nodes(tree) + conditional);
    });
  }
});

describe("GraphQL: one statement per level for all parents, whatever the page sizes", () => {
  const USERS = 60;
  const RECORDS = 7;
  let rankName: string;

  /** The statements one GraphQL request runs: every one counted, and the text of those the reader runs. */
  async function measured(query: string, variables?: Record<string, unknown>) {
    const sql: string[] = [];
    const listen = (text: string) => void sql.push(text);
    h.db.onReaderStatement.add(listen);
    const before = h.db.statements.count;
    let reply: Awaited<ReturnType<typeof w.api.graphql>>;
    try {
      reply = await w.api.graphql(query, variables);
    } finally {
      h.db.onReaderStatement.delete(listen);
    }
    expect(reply.body.errors, JSON.stringify(reply.body.errors)).toBeUndefined();
    return { count: h.db.statements.count - before, sql, data: reply.body.data };
  }
  /** The statements that read `table` (its FROM), beside the key and flag look-up every request makes. */
  const reading = (sql: string[], table: string) =>
    sql.filter((s) => s.startsWith("SELECT") && new RegExp(`FROM "${table}"`).test(s));

  const page = (
    users: number,
    records: number,
    extra = "",
  ) => `{ users(first: ${users}, where: { name: { startsWith: "Tallied " } }, orderBy: [{ name: asc }]) {
    ${extra} nodes { rowId rankRecords(first: ${records}, orderBy: [{ createdAt: desc }]) { nodes { rowId rank { name image { path } } author { name } } } } } }`;

  beforeAll(async () => {
    const api = w.api;
    rankName = `Counted rank ${Date.now()}`;
    const rank = (await api.post("/v2/ranks", { name: rankName })).body.data;
    const image = await api.post(`/v2/ranks/${rank.id}/image`, {
      name: "Chevron",
      image:
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    });
    expect(image.status, JSON.stringify(image.body)).toBe(200);
    const status = (await api.post("/v2/statuses", { name: "Counted status", color: "#123456" })).body.data;
    const users = (
      await api.post("/v2/users/batch", {
        resources: Array.from({ length: USERS }, (_, i) => ({
          name: `Tallied ${String(i).padStart(3, "0")}`,
          email: `tallied${i}@example.com`,
          status_id: status.id,
        })),
      })
    ).body.data as Array<{ id: number }>;
    expect(users).toHaveLength(USERS);
    const records = users.flatMap((u) =>
      Array.from({ length: RECORDS }, (_, n) => ({
        user_id: u.id,
        rank_id: rank.id,
        type: n % 2,
        text: `r${n}`,
        author_id: w.user.id,
      })),
    );
    const made = await api.post("/v2/rank-records/batch", { resources: records });
    expect(made.status, JSON.stringify(made.body).slice(0, 300)).toBe(200);
  }, 120_000);

  test("users × their first rank records × rank × image × author: the same statements for 1 user or 50, 1 record or 5", async () => {
    await measured(page(1, 1)); // warms per-process caches (the key's last use)
    const small = await measured(page(1, 1));
    const large = await measured(page(50, 5));
    expect(large.data.users.nodes).toHaveLength(50);
    for (const user of large.data.users.nodes) {
      expect(user.rankRecords.nodes).toHaveLength(5);
      expect(
        user.rankRecords.nodes.every(
          (r: { rank: { name: string; image: { path: string } }; author: { name: string } }) =>
            r.rank.name === rankName && r.rank.image.path && r.author.name,
        ),
      ).toBe(true);
    }
    // Newest first, per user: the window keeps each parent's own first five.
    expect(large.data.users.nodes[0].rankRecords.nodes.map((r: { rowId: number }) => r.rowId)).toEqual(
      [...large.data.users.nodes[0].rankRecords.nodes.map((r: { rowId: number }) => r.rowId)].sort((a, b) => b - a),
    );
    expect(large.count, large.sql.join("\n")).toBe(small.count);
    expect(large.sql.length).toBe(small.sql.length);
    // One statement per level for all parents: the key's admission, users, their records (ranks and authors, to-one,
    // may join into it), images; issue 16's W2 bar is 5.
    expect(large.count, large.sql.join("\n")).toBe(large.sql.length);
    expect(reading(large.sql, "RankRecord"), large.sql.join("\n")).toHaveLength(1);
    expect(reading(large.sql, "Image"), large.sql.join("\n")).toHaveLength(1);
    expect(large.count, large.sql.join("\n")).toBeLessThanOrEqual(5);
  });

  test("totalCount runs only when selected: one count for the root list, one grouped count for all parents of a nested list", async () => {
    const without = await measured(page(50, 5));
    const rootCount = await measured(page(50, 5, "totalCount"));
    expect(rootCount.data.users.totalCount).toBe(USERS);
    expect(rootCount.count - without.count, rootCount.sql.join("\n")).toBe(1);
    const nested = `{ users(first: 50, where: { name: { startsWith: "Tallied " } }) { nodes { rowId rankRecords(first: 5) { totalCount nodes { rowId } } } } }`;
    const nestedBare = await measured(nested.replace("totalCount ", ""));
    const counted = await measured(nested);
    expect(
      counted.data.users.nodes.map((u: { rankRecords: { totalCount: number } }) => u.rankRecords.totalCount),
    ).toEqual(Array(50).fill(RECORDS));
    expect(counted.count - nestedBare.count, counted.sql.join("\n")).toBe(1);
    const extra = counted.sql.filter((s) => !nestedBare.sql.includes(s));
    expect(extra, counted.sql.join("\n")).toHaveLength(1);
    expect(extra[0]).toMatch(/COUNT/i);
    expect(extra[0]).toMatch(/GROUP BY/i);
    // The same at 1 user: the count is one statement whatever the number of parents.
    const one = await measured(nested.replace("first: 50", "first: 1"));
    expect(one.count).toBe(counted.count);
  });

  test("two nested connection levels with where, orderBy, edges and pageInfo: still one statement per level", async () => {
    const query = (n: number) => `{ statuses(first: ${n}, where: { name: { equals: "Counted status" } }) { nodes { name
      users(first: ${n}, orderBy: [{ name: desc }]) { pageInfo { hasNextPage endCursor } edges { cursor node { name
        rankRecords(first: ${n}, where: { text: { in: ["r1", "r2", "r3", "r4"] } }, orderBy: [{ text: desc }]) { nodes { text rank { name } } } } } } } } }`;
    const small = await measured(query(1));
    const large = await measured(query(3));
    expect(large.data.statuses.nodes).toHaveLength(1);
    const users = large.data.statuses.nodes[0].users;
    expect(users.pageInfo).toEqual({ hasNextPage: true, endCursor: users.edges[2].cursor });
    expect(users.edges.map((e: { node: { name: string } }) => e.node.name)).toEqual([
      `Tallied 0${USERS - 1}`,
      `Tallied 0${USERS - 2}`,
      `Tallied 0${USERS - 3}`,
    ]);
    for (const edge of users.edges)
      expect(edge.node.rankRecords.nodes).toEqual(
        ["r4", "r3", "r2"].map((text) => ({ text, rank: { name: rankName } })),
      );
    expect(large.count, large.sql.join("\n")).toBe(small.count);
    expect(reading(large.sql, "RankRecord"), large.sql.join("\n")).toHaveLength(1);
    expect(reading(large.sql, "Status"), large.sql.join("\n")).toHaveLength(1);
  });
});

describe("a write reads each row once", () => {
  /** The SQL statements the service runs while `work` runs. */
  async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
    const seen: string[] = [];
    const listen = (sql: string) => void seen.push(sql);
    h.db.onReaderStatement.add(listen);
    try {
      await work();
    } finally {
      h.db.onReaderStatement.delete(listen);
    }
    return seen;
  }
  const reads = (statements: string[], table: string) =>
    statements.filter((sql) => sql.startsWith("SELECT") && sql.includes(`FROM "${table}"`)).length;

  test("a rank record under its user: the key with the maintenance flag, the user and the rank once each, no read-back", async () => {
    const api = w.api;
    const rank = (await api.post("/v2/ranks", { name: "Sergeant Major" })).body.data;
    const user = (await api.post("/v2/users", { name: "Once Read", email: "once.read@example.com" })).body.data;
    let reply: Awaited<ReturnType<typeof api.post>> | undefined;
    const statements = await statementsOf(async () => {
      reply = await api.post(`/v2/users/${user.id}/rank-records`, { rank_id: rank.id, type: 0, text: "Earned" });
    });
    expect(reply!.status).toBe(200);
    const admission = statements.filter((sql) => sql.includes('"SystemFlag"'));
    expect(admission).toHaveLength(1);
    expect(admission[0]).toContain('"ApiKey"');
    expect([reads(statements, "User"), reads(statements, "Rank"), reads(statements, "RankRecord")]).toEqual([1, 1, 0]);
    // Answered from the inserted row, it is what a read gives, and the headline has the names read for the checks.
    expect((await api.get(`/v2/rank-records/${reply!.body.data.id}`)).body.data).toEqual(reply!.body.data);
    const item = (await api.get("/v2/newsfeed")).body.data[0];
    expect(item).toMatchObject({
      subject_id: reply!.body.data.id,
      headline: "Once Read received a promotion to Sergeant Major",
    });
  });

  test("a name changed before the write is the one the headline uses", async () => {
    const api = w.api;
    const rank = (await api.post("/v2/ranks", { name: "Warrant Officer" })).body.data;
    const user = (await api.post("/v2/users", { name: "Renamed Later", email: "renamed.later@example.com" })).body.data;
    await api.post(`/v2/users/${user.id}/rank-records`, { rank_id: rank.id, type: 0 });
    await api.patch(`/v2/ranks/${rank.id}`, { name: "Chief Warrant Officer" });
    await api.patch(`/v2/users/${user.id}`, { name: "Renamed Now" });
    const record = (await api.post("/v2/rank-records", { user_id: user.id, rank_id: rank.id, type: 1 })).body.data;
    const item = (await api.get("/v2/newsfeed")).body.data[0];
    expect(item).toMatchObject({
      subject_id: record.id,
      headline: "Renamed Now received a demotion to Chief Warrant Officer",
    });
  });
});
