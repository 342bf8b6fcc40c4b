import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { client, startHarness, testProvider, type Client, type Harness } from "./harness.ts";

/**
 * The pages a front-end builds from the graph, as it would query them, on the database under test. Each page is run
 * on a small organisation and again after it has grown: the answers follow the data, and the number of SQL statements
 * does not (one per level of the page for all of its parents, whatever the page size), which is what the pinned
 * counts below say.
 */
let h: Harness;
let api: Client;

type Json = Record<string, unknown>;
/** A REST row as these tests read it. */
type RestRow = { id: number; created_at: string; unit_id: number | null };
/** A page of nodes, and of edges carrying a link's order. */
type Nodes<T> = { totalCount: number; nodes: T[] };
type Edges<T> = { edges: Array<{ order: number; node: T }> };
type Roster = {
  roster: Nodes<{
    name: string;
    units: Edges<{ name: string; users: Nodes<{ name: string; rank: { name: string; order: number } | null }> }>;
  }>;
};
type ProfileRecord = {
  rowId: number;
  text: string;
  createdAt: string;
  author: { name: string };
  document: { name: string } | null;
};
type UserPage = {
  users: { pageInfo: { hasNextPage: boolean; endCursor: string | null }; nodes: Array<{ rowId: number }> };
};
const ids: {
  ranks: number[];
  groups: number[];
  units: number[];
  users: number[];
  documents: number[];
  form: number;
  fields: number[];
} = {
  ranks: [],
  groups: [],
  units: [],
  users: [],
  documents: [],
  form: 0,
  fields: [],
};

async function rest(method: "post" | "patch", url: string, body: unknown): Promise<{ id: number }> {
  const reply = await api[method](url, body);
  expect(reply.status, `${method} ${url}: ${JSON.stringify(reply.body).slice(0, 300)}`).toBe(200);
  return reply.body.data ?? reply.body;
}

/** The answer to a GraphQL page and the SQL statements it ran (the key's own look-up included). */
async function page<T>(query: string, variables: Json = {}): Promise<{ data: T; statements: number }> {
  const before = h.db.statements.count;
  const log: string[] = [];
  const listen = (sql: string) => void log.push(sql.slice(0, 160));
  if (process.env.FRONT_END_SQL) h.db.onReaderStatement.add(listen);
  const reply = await api.graphql(query, variables);
  h.db.onReaderStatement.delete(listen);
  if (process.env.FRONT_END_SQL) console.log(log.join("\n"));
  const statements = h.db.statements.count - before;
  expect(reply.status, JSON.stringify(reply.body).slice(0, 500)).toBe(200);
  expect(reply.body.errors, JSON.stringify(reply.body.errors)).toBeUndefined();
  return { data: reply.body.data, statements };
}

const recordPaths = [
  "rank-records",
  "award-records",
  "combat-records",
  "qualification-records",
  "service-records",
  "training-records",
  "assignment-records",
];

/** Adds `count` people to the organisation, each with records of every type, likes and a submission. */
async function grow(count: number): Promise<void> {
  const award = await rest("post", "/v2/awards", { name: `Award ${ids.users.length}` });
  const qualification = await rest("post", "/v2/qualifications", { name: `Qualification ${ids.users.length}` });
  for (let i = 0; i < count; i++) {
    const n = ids.users.length;
    const user = await rest("post", "/v2/users", {
      name: `Person ${String(n).padStart(3, "0")}`,
      email: `p${n}@example.com`,
      rank_id: ids.ranks[n % ids.ranks.length],
      unit_id: ids.units[n % ids.units.length],
    });
    ids.users.push(user.id);
    for (const path of recordPaths) {
      for (let r = 0; r < 2; r++) {
        const body: Json = {
          user_id: user.id,
          text: `${path} ${r}`,
          document_id: ids.documents[r % ids.documents.length],
        };
        if (path === "rank-records")
          Object.assign(body, { rank_id: ids.ranks[(n + r) % ids.ranks.length], type: r % 4 });
        if (path === "award-records") body.award_id = award.id;
        if (path === "qualification-records") body.qualification_id = qualification.id;
        if (path === "training-records") body.instructor_id = user.id;
        if (path === "assignment-records")
          Object.assign(body, { type: "secondary", unit_id: ids.units[r % ids.units.length] });
        await rest("post", `/v2/${path}`, body);
      }
    }
    await rest("post", `/v2/forms/${ids.form}/submissions`, { user_id: user.id, callsign: `C${n}` });
  }
  const items = (await api.get("/v2/newsfeed?limit=10")).body.data as Array<{ id: number }>;
  for (const [i, item] of items.entries()) {
    await rest("post", `/v2/newsfeed/${item.id}/likes/attach`, { resources: ids.users.slice(0, 1 + (i % 3)) });
  }
}

beforeAll(async () => {
  h = await startHarness({ rateLimitPerMinute: 1_000_000 });
  // Acts for a user of its own (the author of every record).
  const bootstrap = client(h, await h.key("frontend"));
  const author = await bootstrap.post("/v2/users", { name: "Author", email: "author@example.com" });
  api = client(h, await h.key("frontend", "*", author.body.data.id));
  for (const [order, name] of ["Private", "Corporal", "Sergeant"].entries())
    ids.ranks.push((await rest("post", "/v2/ranks", { name, order: 3 - order })).id);
  for (const name of ["First", "Second"]) ids.groups.push((await rest("post", "/v2/groups", { name })).id);
  for (const name of ["Alpha", "Bravo", "Charlie"]) ids.units.push((await rest("post", "/v2/units", { name })).id);
  await rest("post", `/v2/groups/${ids.groups[0]}/units/attach`, {
    resources: [
      { id: ids.units[1], pivot: { order: 1 } },
      { id: ids.units[0], pivot: { order: 2 } },
    ],
  });
  await rest("post", `/v2/groups/${ids.groups[1]}/units/attach`, {
    resources: [{ id: ids.units[2], pivot: { order: 1 } }],
  });
  for (const name of ["Order 1", "Order 2"])
    ids.documents.push((await rest("post", "/v2/documents", { name, content: "<p>x</p>" })).id);
  ids.form = (await rest("post", "/v2/forms", { name: "Enlistment", slug: "enlistment", is_public: false })).id;
  for (const [i, key] of ["callsign", "age"].entries())
    ids.fields.push(
      (await rest("post", `/v2/forms/${ids.form}/fields`, { name: key, key, type: i ? "number" : "text" })).id,
    );
  await grow(4);
}, 240_000);
afterAll(() => h?.close());

/** Runs `check` on the small organisation, grows it, runs it again: equal statement counts, each at most `pinned`. */
async function pinned(pinnedCount: number, run: () => Promise<{ statements: number }>, growBy = 6) {
  const small = await run();
  await grow(growBy);
  const large = await run();
  expect(large.statements, `statements grew with the data (${small.statements} → ${large.statements})`).toBe(
    small.statements,
  );
  expect(small.statements).toBeLessThanOrEqual(pinnedCount);
}

describe(`front-end pages on ${testProvider}`, () => {
  test("a roster: groups → units (in the group's order, on the edge) → users ordered by rank order", async () => {
    const query = `query Roster {
      roster(first: 10) { nodes { name units(first: 10) { edges { order node { name users(first: 50, orderBy: [{ rank: { order: asc } }, { name: asc }]) {
        totalCount nodes { name rank { name order } } } } } } } }
    }`;
    await pinned(1 + 1 + 1 + 1 + 1, async () => {
      const { data, statements } = await page<Roster>(query);
      const first = data.roster.nodes.find((g) => g.name === "First")!;
      expect(first.units.edges.map((e) => [e.order, e.node.name])).toEqual([
        [1, "Bravo"],
        [2, "Alpha"],
      ]);
      for (const group of data.roster.nodes) {
        for (const { node: unit } of group.units.edges) {
          const orders = unit.users.nodes.map((u) => u.rank?.order ?? Infinity);
          expect(orders).toEqual([...orders].sort((a, b) => a - b));
          expect(unit.users.nodes.length).toBe(Math.min(unit.users.totalCount, 50));
        }
      }
      const listed = data.roster.nodes.flatMap((g) => g.units.edges.flatMap((e) => e.node.users.nodes));
      const expected = await api.get("/v2/users?limit=100");
      expect(listed.length).toBe(expected.body.data.filter((u: RestRow) => u.unit_id != null).length);
      return { statements };
    });
  });

  test("a user profile: each record type, first 5, newest first, with author and document, and totalCount", async () => {
    const types = [
      "rankRecords",
      "awardRecords",
      "combatRecords",
      "qualificationRecords",
      "serviceRecords",
      "trainingRecords",
      "assignmentRecords",
    ];
    const query = `query Profile($rowId: Int!) { user(rowId: $rowId) { name rank { name } ${types
      .map(
        (t) => `
      ${t}(first: 5, orderBy: [{ createdAt: desc }]) { totalCount nodes { rowId text createdAt author { name } document { name } } }`,
      )
      .join("")} } }`;
    const who = ids.users[0];
    // The user, one statement per record type (author and document joined), one count per type; and the key.
    await pinned(
      1 + 1 + types.length * 2,
      async () => {
        const { data, statements } = await page<{ user: Record<string, Nodes<ProfileRecord>> }>(query, { rowId: who });
        for (const type of types) {
          const list = data.user[type];
          const all = (
            await api.get(`/v2/users/${who}/${type.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}?limit=100`)
          ).body.data as RestRow[];
          expect(list.totalCount, type).toBe(all.length);
          const newest = [...all]
            .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id - a.id)
            .slice(0, 5)
            .map((r) => r.id);
          expect(
            list.nodes.map((n) => n.rowId),
            type,
          ).toEqual(newest);
          for (const node of list.nodes) expect(node.author.name).toBe("Author");
          expect(list.nodes.every((n) => n.document?.name?.startsWith("Order"))).toBe(true);
        }
        return { statements };
      },
      2,
    );
  });

  test("a filtered, sorted user list walked to the end by cursor while people join between pages: nothing skipped or repeated", async () => {
    const query = `query Walk($after: String) { users(first: 3, after: $after, where: { name: { startsWith: "Person" } }, orderBy: [{ rank: { order: desc } }, { name: asc }]) {
      pageInfo { hasNextPage endCursor } nodes { rowId name rank { order } } } }`;
    const start = (
      await page<UserPage>(
        `{ users(first: 100, where: { name: { startsWith: "Person" } }, orderBy: [{ rank: { order: desc } }, { name: asc }]) { nodes { rowId } } }`,
      )
    ).data.users.nodes.map((n) => n.rowId);
    const seen: number[] = [];
    const statementCounts = new Set<number>();
    let after: string | null = null;
    for (let round = 0; round < 100; round++) {
      const { data, statements }: { data: UserPage; statements: number } = await page<UserPage>(query, { after });
      statementCounts.add(statements);
      seen.push(...data.users.nodes.map((n) => n.rowId));
      // Someone joins on each side of the cursor: before it (an earlier name) and after it.
      await rest("post", "/v2/users", {
        name: `Person 000-${round}`,
        email: `early${round}@example.com`,
        rank_id: ids.ranks[0],
      });
      await rest("post", "/v2/users", {
        name: `Person zzz-${round}`,
        email: `late${round}@example.com`,
        rank_id: ids.ranks[2],
      });
      if (!data.users.pageInfo.hasNextPage) break;
      after = data.users.pageInfo.endCursor;
    }
    expect(new Set(seen).size, "a row was repeated").toBe(seen.length);
    for (const id of start) expect(seen, `row ${id} was skipped`).toContain(id);
    // Rank order desc then name: the walk's rows are in that order.
    const final = (
      await page<UserPage>(
        `{ users(first: 100, where: { name: { startsWith: "Person" } }, orderBy: [{ rank: { order: desc } }, { name: asc }]) { nodes { rowId } } }`,
      )
    ).data.users.nodes.map((n) => n.rowId);
    expect(seen).toEqual(final.filter((id: number) => seen.includes(id)));
    expect([...statementCounts], "every page ran the same statements").toHaveLength(1);
    expect([...statementCounts][0]).toBeLessThanOrEqual(2);
  });

  test("a form with its fields (link order on the edge) and its submissions", async () => {
    const query = `query FormPage($rowId: Int!) { form(rowId: $rowId) { name fields { edges { order node { key type } } }
      submissions(first: 5) { totalCount nodes { rowId user { name } } } } }`;
    await pinned(
      1 + 1 + 1 + 1 + 1,
      async () => {
        const { data, statements } = await page<{
          form: { fields: Edges<{ key: string; type: string }>; submissions: Nodes<unknown> };
        }>(query, { rowId: ids.form });
        expect(data.form.fields.edges.map((e) => [e.order, e.node.key, e.node.type])).toEqual([
          [1, "callsign", "TEXT"],
          [2, "age", "NUMBER"],
        ]);
        expect(data.form.submissions.nodes).toHaveLength(5);
        expect(data.form.submissions.totalCount).toBe(
          (await api.get(`/v2/forms/${ids.form}/submissions?limit=100`)).body.data.length,
        );
        return { statements };
      },
      3,
    );
  });

  test("a Relay refetch of many nodes of two types: one statement per type, answers in the order asked", async () => {
    const global = (type: string, id: number) => Buffer.from(`${type}:${id}`).toString("base64");
    const wanted = [
      ...ids.users.slice(0, 8).map((id) => global("User", id)),
      ...ids.ranks.map((id) => global("Rank", id)),
      global("User", 999_999),
    ];
    const { data, statements } = await page<{ nodes: Array<{ id: string } | null> }>(
      `query Refetch($ids: [ID!]!) { nodes(ids: $ids) { id __typename ... on User { name } ... on Rank { name } } }`,
      { ids: wanted.reverse() },
    );
    expect(data.nodes.map((n) => n?.id ?? null)).toEqual(
      wanted.map((id) => (id === global("User", 999_999) ? null : id)),
    );
    expect(statements).toBe(1 + 2);
  });

  test("a newsfeed with like counts: one grouped count for the page, no liked rows read", async () => {
    const query = `query Feed { newsfeed(first: 10) { nodes { rowId headline likes { totalCount } } } }`;
    await pinned(
      1 + 1 + 1,
      async () => {
        const { data, statements } = await page<{
          newsfeed: { nodes: Array<{ rowId: number; likes: { totalCount: number } }> };
        }>(query);
        expect(data.newsfeed.nodes).toHaveLength(10);
        for (const item of data.newsfeed.nodes) {
          const likes = (await api.get(`/v2/newsfeed/${item.rowId}/likes?limit=100`)).body.data;
          expect(item.likes.totalCount).toBe(likes.length);
        }
        return { statements };
      },
      2,
    );
  });
});
