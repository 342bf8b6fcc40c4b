import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { client, startHarness, type Client, type Harness, type Reply } from "./harness.ts";
import { spawnServer, type ServerProcess } from "./support/spawn-server.ts";
import { seedDemo } from "../src/seed/demo.ts";

/** The refusal of a document over a limit: no data, code VALIDATION (422), the message matching `pattern`. */
const refused = (reply: Reply, pattern: RegExp) => {
  expect(reply.body.data ?? null).toBeNull();
  expect(reply.body.errors[0].extensions).toMatchObject({ code: "VALIDATION", status: 422 });
  expect(reply.body.errors[0].message).toMatch(pattern);
};

/** The query: 30 aliases of statuses → users → rank records, each level as large as a page may be. */
const thirtyAliases = `{ ${Array.from({ length: 30 }, (_, i) => `a${i}: statuses(first: 100) { nodes { users(first: 100) { nodes { rankRecords(first: 100) { nodes { rowId } } } } } }`).join(" ")} }`;

describe("a small budget and row cap", () => {
  let h: Harness;
  let api: Client;
  let counts: Record<string, number>;
  beforeAll(async () => {
    h = await startHarness({ graphqlMaxComplexity: 500, graphqlListEstimate: 10, maxRowsPerRequest: 60 });
    ({ counts } = await seedDemo(h.db.store, { account: "bounded", users: 30, seed: 3 }));
    api = client(h, await h.key("bounded"));
  });
  afterAll(() => h.close());

  test("a nested query whose estimate is over the budget is refused before anything is read, naming both", async () => {
    // A page is read with one row more (to tell whether another follows): 11 statuses + 11 × (11 users + 11 × 11 rank records) = 1463
    const statements: string[] = [];
    const listen = (sql: string) => statements.push(sql);
    h.db.onReaderStatement.add(listen);
    try {
      refused(
        await api.graphql(
          "{ statuses(first: 10) { nodes { users(first: 10) { nodes { rankRecords(first: 10) { nodes { rowId } } } } } } }",
        ),
        /about 1463 rows, over the budget of 500 \(GRAPHQL_MAX_COMPLEXITY\)/,
      );
    } finally {
      h.db.onReaderStatement.delete(listen);
    }
    expect(statements.filter((sql) => /"(Status|User|RankRecord)"/.test(sql))).toEqual([]);
  });

  test("the size comes from the variables: the same document is served with a small limit and refused with a large one", async () => {
    const query =
      "query Users($n: Int) { users(first: $n) { nodes { rowId rankRecords(first: 10) { nodes { rowId } } } } }";
    // 3 users + 3 × 11 rank records = 36
    const small = await api.graphql(query, { n: 2 });
    expect(small.status).toBe(200);
    expect(small.body.data.users.nodes).toHaveLength(2);
    // 101 + 101 × 11 = 1212; a first over MAX_PAGE_SIZE counts as the maximum
    refused(await api.graphql(query, { n: 5000 }), /about 1212 rows, over the budget of 500/);
    // Without first, at every level: GRAPHQL_DEFAULT_FIRST, 20 → 21 + 21 × (21 + 21 × 21) = 9723
    refused(
      await api.graphql("{ statuses { nodes { users { nodes { rankRecords { nodes { rowId } } } } } } }"),
      /about 9723 rows/,
    );
  });

  test("under the budget and the cap, a nested query runs and returns every related row", async () => {
    // 6 + 6 × 51 = 312; at most 5 statuses and the account's 30 users are read
    const reply = await api.graphql(
      "{ statuses(first: 5) { nodes { rowId users(first: 50) { totalCount nodes { rowId } } } } }",
    );
    expect(reply.status).toBe(200);
    expect(reply.body.errors).toBeUndefined();
    const statuses = reply.body.data.statuses.nodes as Array<{
      rowId: number;
      users: { totalCount: number; nodes: Array<{ rowId: number }> };
    }>;
    expect(statuses.length).toBeGreaterThan(0);
    for (const status of statuses) {
      const ids = (await h.db.prisma.user.findMany({ where: { statusId: status.rowId }, select: { id: true } }))
        .map((u) => u.id)
        .sort((a, b) => a - b);
      expect(
        status.users.nodes.map((u) => u.rowId).sort((a, b) => a - b),
        `status ${status.rowId}`,
      ).toEqual(ids);
      expect(status.users.totalCount).toBe(ids.length);
    }
    expect(statuses.flatMap((s) => s.users.nodes).length).toBe(
      await h.db.prisma.user.count({ where: { statusId: { in: statuses.map((s) => s.rowId) } } }),
    );
  });

  test("a GraphQL query under the budget that reads more rows than the cap is refused with VALIDATION, not truncated", async () => {
    expect(counts["rank records"] + 30).toBeGreaterThan(60);
    // The page of each user's records holds up to 10: the 30 users and their first 10 records are still more than 60 rows.
    const perUser = await h.db.prisma.rankRecord.groupBy({ by: ["userId"], _count: { _all: true } });
    expect(perUser.reduce((sum, u) => sum + Math.min(u._count._all, 10), 0) + 30).toBeGreaterThan(60);
    // 31 + 31 × 11 = 372, under the budget
    const reply = await api.graphql(
      "{ users(first: 30) { nodes { rowId rankRecords(first: 10) { nodes { rowId } } } } }",
    );
    expect(reply.status).toBe(422);
    expect(reply.body.data ?? null).toBeNull();
    expect(reply.body.errors).toHaveLength(1);
    expect(reply.body.errors[0].extensions).toMatchObject({ code: "VALIDATION", status: 422 });
    expect(reply.body.errors[0].message).toMatch(/more than 60 rows \(MAX_ROWS_PER_REQUEST\)/);
    // The whole request is refused: the error names the request's `query`, and no field.
    expect(Object.keys(reply.body.errors[0].extensions.errors)).toEqual(["query"]);
    expect(reply.body.errors[0].path).toBeUndefined();
  });

  test("rows shared by many parents count once per parent: the answer is bounded, not only what was read", async () => {
    // 12 people → their status → its people: at most 12 + 5 + 30 rows read (the people of a status are read once),
    // but each person carries all the people of their status again. Whichever 12 come first, the answer holds at
    // least the 12 smallest statuses' sizes a person can have, plus the 12 and their statuses.
    const sizes = await h.db.prisma.user.groupBy({
      by: ["statusId"],
      where: { statusId: { not: null } },
      _count: { _all: true },
    });
    const perPerson = sizes
      .flatMap((s) => Array.from({ length: s._count._all }, () => s._count._all))
      .sort((a, b) => a - b);
    expect(perPerson.slice(0, 12).reduce((sum, n) => sum + n, 0) + 24).toBeGreaterThan(60);
    // 13 + 13 × (1 + 1 × 31) = 429, under the budget
    const reply = await api.graphql(
      "{ users(first: 12, where: { status: { isNot: null } }) { nodes { rowId status { rowId users(first: 30) { nodes { rowId } } } } } }",
    );
    expect(reply.status).toBe(422);
    expect(reply.body.errors[0].message).toMatch(/more than 60 rows/);
  });

  test("a REST list whose includes load more rows than the cap is a 422 naming include; nothing is truncated", async () => {
    const reply = await api.get("/v2/users?limit=30&include=rank_records");
    expect(reply.status).toBe(422);
    expect(reply.body.data).toBeUndefined();
    expect(reply.body.error).toMatchObject({ type: "ValidationException" });
    expect(reply.body.error.errors.include).toEqual([
      "The requested includes load more than 60 rows (MAX_ROWS_PER_REQUEST): ask for fewer includes or a smaller page.",
    ]);
    // The same page without the include, and a smaller one with it, are served whole.
    expect((await api.get("/v2/users?limit=30")).body.data).toHaveLength(30);
    const small = await api.get("/v2/users?limit=2&include=rank_records");
    expect(small.status).toBe(200);
    const ids = small.body.data.map((u: { id: number }) => u.id);
    expect(small.body.data.flatMap((u: { rank_records: unknown[] }) => u.rank_records)).toHaveLength(
      await h.db.prisma.rankRecord.count({ where: { userId: { in: ids } } }),
    );
  });
});

describe("a budget that REST's include trees pass", () => {
  let h: Harness;
  let api: Client;
  beforeAll(async () => {
    h = await startHarness({ graphqlMaxComplexity: 100, graphqlListEstimate: 10 });
    await seedDemo(h.db.store, { account: "bounded", users: 30, seed: 3 });
    api = client(h, await h.key("bounded"));
  });
  afterAll(() => h.close());

  test("REST documents are not costed: their include caps and the row cap bound them", async () => {
    // As GraphQL, with the default first: 21 statuses + 21 × 21 users = 462, over 100
    refused(
      await api.graphql("{ statuses { nodes { rowId users { nodes { rowId } } } } }"),
      /about 462 rows, over the budget of 100/,
    );
    const reply = await api.get("/v2/statuses?include=users");
    expect(reply.status).toBe(200);
    expect(reply.body.data.flatMap((s: { users: unknown[] }) => s.users)).toHaveLength(
      await h.db.prisma.user.count({ where: { statusId: { not: null } } }),
    );
  });
});

describe("the default budget", () => {
  let h: Harness;
  let api: Client;
  beforeAll(async () => {
    h = await startHarness();
    api = client(h, await h.key());
  });
  afterAll(() => h.close());

  test("refuses the 30-alias statuses → users → rank records query before it runs", async () => {
    // 30 × (101 + 101 × (101 + 101 × 101)) = 31,218,090 over 50,000
    refused(await api.graphql(thirtyAliases), /about 31218090 rows, over the budget of 50000/);
  });
});

describe("a spawned server with 2,000 people", () => {
  let server: ServerProcess;
  let key = "";
  const post = async (query: string) => {
    const response = await fetch(`${server.base}/graphql`, {
      method: "POST",
      signal: AbortSignal.timeout(30_000),
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ query }),
    });
    return { status: response.status, body: await response.json() };
  };
  const rss = async () => {
    const text = await (await fetch(`${server.base}/metrics`)).text();
    return Number(/^process_resident_memory_bytes (\d+(?:\.\d+)?(?:e\+\d+)?)$/m.exec(text)![1]);
  };

  beforeAll(async () => {
    // The budget is raised out of the way so that the row cap alone has to hold the 30-alias query.
    server = await spawnServer(
      { GRAPHQL_MAX_COMPLEXITY: "100000000", RATE_LIMIT_PER_MINUTE: "100000" },
      async (databaseUrl) => {
        const { migrate } = await import("../src/db/migrate.ts");
        const { openDatabase } = await import("../src/db/prisma.ts");
        const { createApiKey } = await import("../src/auth/accounts.ts");
        await migrate(databaseUrl);
        const db = await openDatabase(databaseUrl);
        await seedDemo(db.store, { account: "load", users: 2000, seed: 1 });
        key = (await createApiKey(db.store, { account: "load", scopes: "*" })).key;
        await db.close();
      },
    );
  }, 120_000);
  afterAll(() => server?.stop());

  test("survives the 30-alias query and a depth, alias and size sweep: 200 or a clear 4xx, /health up, memory bounded", async () => {
    const answers: Array<{ query: string; status: number }> = [];
    const send = async (query: string) => {
      const reply = await post(query);
      answers.push({ query: query.slice(0, 80), status: reply.status });
      expect(
        reply.status === 200 || (reply.status >= 400 && reply.status < 500),
        `${reply.status} ${JSON.stringify(reply.body).slice(0, 300)}`,
      ).toBe(true);
      for (const error of reply.body.errors ?? [])
        expect(error.extensions.code).toMatch(/^(VALIDATION|BAD_REQUEST|GRAPHQL_VALIDATION_FAILED)$/);
      return reply;
    };

    const storm = await send(thirtyAliases);
    // 30 × (5 statuses + their first 100 people each + those people's first 100 rank records): far past the 10,000 rows of the cap.
    expect(storm.status, JSON.stringify(storm.body).slice(0, 500)).toBe(422);
    expect(storm.body.errors).toHaveLength(1);
    expect(storm.body.errors[0].message).toMatch(/more than 10000 rows/);

    // statuses → people → their status → its people ...: 2,000 people at the first level, 800,000 at the second
    for (const depth of [1, 2, 3, 4]) {
      let selection = "id";
      for (let i = 0; i < depth; i++) selection = `rowId users(first: 100) { nodes { rowId status { ${selection} } } }`;
      await send(`{ statuses(first: 100) { nodes { ${selection} } } }`);
    }
    for (const aliases of [1, 10, 30, 31]) {
      await send(
        `{ ${Array.from({ length: aliases }, (_, i) => `a${i}: statuses(first: 100) { nodes { users(first: 100) { nodes { rowId } } } }`).join(" ")} }`,
      );
    }
    // A first over MAX_PAGE_SIZE (100) fails its own connection (VALIDATION, 422 in extensions, naming first, at its
    // path), at the root or nested; a nested connection is nullable, so the users stand and each of their lists is null.
    const kinds = ["rankRecords", "assignmentRecords", "awardRecords"];
    for (const first of [1, 15, 100, 1000, 100000]) {
      const records = (n: number) => kinds.map((f) => `${f}(first: ${n}) { nodes { rowId } }`).join(" ");
      const root = await send(`{ users(first: ${first}) { nodes { rowId ${records(100)} } } }`);
      const nested = await send(`{ users(first: 100) { nodes { rowId ${records(first)} } } }`);
      if (first <= 100) continue;
      expect(root.body.data).toEqual({ users: null });
      expect(nested.body.data.users.nodes.length).toBeGreaterThan(0);
      for (const user of nested.body.data.users.nodes) for (const kind of kinds) expect(user[kind]).toBeNull();
      expect(root.body.errors.map((e: { path: unknown }) => e.path)).toEqual([["users"]]);
      expect(nested.body.errors.length).toBeGreaterThan(0);
      for (const error of nested.body.errors) expect(kinds).toContain(error.path.at(-1));
      for (const error of [...root.body.errors, ...nested.body.errors]) {
        expect(error.extensions).toMatchObject({ code: "VALIDATION", status: 422 });
        expect(Object.keys(error.extensions.errors)).toEqual(["first"]);
      }
    }

    expect((await fetch(`${server.base}/health`)).status).toBe(200);
    expect(server.child.exitCode).toBeNull();
    expect(await rss()).toBeLessThan(600 * 1024 * 1024);
    expect(answers.filter((a) => a.status === 200).length).toBeGreaterThan(0);
  }, 120_000);
});
