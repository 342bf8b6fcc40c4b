import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { operations, pivotOf, type Operation } from "../src/resources/operations.ts";
import { includeTree, type IncludeTree } from "../src/rest/includes.ts";
import { resourceNamed } from "../src/resources/index.ts";
import { morphOwnersOf } from "../src/graphql/objects.ts";
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
  return values.sort((a, b) => b.split(".").length - a.split(".").length || a.localeCompare(b)).slice(0, cap).sort();
}

const treePaths = (tree: IncludeTree, prefix = ""): string[] =>
  [...tree].flatMap(([name, sub]) => [`${prefix}${name}`, ...treePaths(sub, `${prefix}${name}.`)]);
const nodes = (tree: IncludeTree): number => [...tree.values()].reduce((n, sub) => n + 1 + nodes(sub), 0);

const ROWS = 10;

/** Rows the list at `op` shows beyond the seeded one, so that the larger page really holds ROWS. */
async function fillList(op: Operation): Promise<void> {
  if (op.view) return;
  const g = groupOf(op);
  const create = operations.find((o) => o.kind === "create" && (g ? o.parent?.route === op.parent?.route && o.parent?.def === op.parent?.def : !o.parent && o.def === op.def));
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
      const tree = includes.length ? includeTree(pivot ? resourceNamed(pivot.related) : op.def, includes, pivot ? [pivot.as] : []) : new Map();
      const paths = treePaths(tree);
      // Users bring two grouped look-ups (last rank and assignment change); a polymorphic owner one per owner type.
      const users = paths.filter((p) => /(^|\.)(user|users|author|instructor|likes)$/.test(p)).length + (op.def.name === "user" ? 1 : 0);
      const morphs = paths.filter((p) => /(^|\.)(model|commentable)$/.test(p)).length;
      const ownerTypes = Math.max(...["image", "comment", "attachment"].map((t) => morphOwnersOf(t).length));
      const conditional = 2 * users + (ownerTypes - 1) * morphs;
      if (!op.view && many.rows === ROWS) expect(many.count - one.count, `page of ${many.rows} vs page of ${one.rows}`).toBeLessThanOrEqual(Math.min(conditional, ROWS - 2));
      expect(many.count, includes.join(",")).toBeLessThanOrEqual(bare.count + 2 * nodes(tree) + conditional);
    });
  }
});

describe("GraphQL", () => {
  test("100 users × their rank records × rank × image × author: a fixed handful of statements", async () => {
    const api = w.api;
    const rank = (await api.post("/v2/ranks", { name: "Counted rank" })).body.data;
    await api.post(`/v2/ranks/${rank.id}/image`, { name: "Chevron", image: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==" });
    const users = (await api.post("/v2/users/batch", {
      resources: Array.from({ length: 100 }, (_, i) => ({ name: `Tallied ${i}`, email: `tallied${i}@example.com` })),
    })).body.data as Array<{ id: number }>;
    const records = users.flatMap((u) => [0, 1].map((type) => ({ user_id: u.id, rank_id: rank.id, type, author_id: w.user.id })));
    expect((await api.post("/v2/rank-records/batch", { resources: records })).status).toBe(200);
    const query = `{ users(limit: 100, filters: [{ field: "name", operator: "like", value: "Tallied %" }]) {
      nodes { id rankRecords { id rank { name image { path } } author { name } } } } }`;
    const before = h.db.statements.count;
    const reply = await api.graphql(query);
    const used = h.db.statements.count - before;
    expect(reply.body.data.users.nodes).toHaveLength(100);
    expect(reply.body.data.users.nodes.every((u: any) => u.rankRecords.length === 2 && u.rankRecords[0].rank.image.path)).toBe(true);
    // the maintenance flag with the key and account (1), users + count (2), records, ranks, images, authors (4), the LIKE pre-query (1)
    expect(used).toBeLessThanOrEqual(8);
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
  const reads = (statements: string[], table: string) => statements.filter((sql) => sql.startsWith("SELECT") && sql.includes(`FROM "${table}"`)).length;

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
    expect(item).toMatchObject({ subject_id: reply!.body.data.id, headline: "Once Read received a promotion to Sergeant Major" });
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
    expect(item).toMatchObject({ subject_id: record.id, headline: "Renamed Now received a demotion to Chief Warrant Officer" });
  });
});
