import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createApp, type App } from "../src/server/app.ts";
import { plannedExecutionStats } from "../src/graphql/planned-execution.ts";
import { client, seed, startHarness, type Client, type Harness } from "./harness.ts";

/**
 * The planned executor (src/graphql/planned-execution.ts) against graphql-js: every document below is sent to the
 * service as it runs (planned execution on) and to a second app over the same database with
 * GRAPHQL_PLANNED_EXECUTION=false, and the two answers must be the same bytes, with the same HTTP status, while the
 * planned one runs no more SQL statements. The documents cover what the planned executor takes (connections, nested
 * connections with arguments, relations, aliases, fragments, directives, enums, dates, computed fields, polymorphic
 * children, field errors and their paths) and what it leaves to graphql-js (abstract types, introspection, one
 * relation under two aliases): those must still answer the same.
 */
let h: Harness;
let api: Client;
let reference: App;
let key: string;
let narrowKey: string;
type Json = Record<string, unknown>;
let ids: Json & { users: number[] };

async function send(app: App, document: string, variables: Json, bearer: string) {
  const response = await app.yoga.fetch("http://muster.test/graphql", {
    method: "POST",
    headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ query: document, variables }),
  });
  // Each request has ids of its own; everything else must match.
  const text = (await response.text()).replace(/"(request_id|trace_id)":"[^"]*"/g, '"$1":"…"');
  return { status: response.status, text };
}

/** Both answers, which must agree; and whether the planned executor ran the document, and whether it ran it again. */
async function compare(document: string, variables: Json = {}, bearer = key) {
  const before = { ...plannedExecutionStats };
  const statements0 = h.db.statements.count;
  const planned = await send(h.app, document, variables, bearer);
  const plannedStatements = h.db.statements.count - statements0;
  const ran = {
    planned: plannedExecutionStats.planned - before.planned,
    rerun: plannedExecutionStats.rerun - before.rerun,
  };
  const statements1 = h.db.statements.count;
  const graphqlJs = await send(reference, document, variables, bearer);
  const graphqlJsStatements = h.db.statements.count - statements1;
  expect(planned.text, document).toBe(graphqlJs.text);
  expect(planned.status).toBe(graphqlJs.status);
  expect(ran.rerun, "no row lacked its preloaded data").toBe(0);
  expect(plannedStatements).toBeLessThanOrEqual(graphqlJsStatements);
  return { body: JSON.parse(planned.text) as { data?: unknown; errors?: unknown }, planned: ran.planned === 1 };
}

beforeAll(async () => {
  h = await startHarness();
  reference = createApp({ db: h.db, config: { ...h.config, graphqlPlannedExecution: false } });
  key = await h.key("alpha");
  api = client(h, key);
  const s = await seed(api);
  const post = async (url: string, body: Json) => {
    const r = await api.post(url, body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.data;
  };
  const users = [s.user, s.other];
  for (let i = 0; i < 4; i++)
    users.push(
      await post("/v2/users", {
        name: `Person ${i}`,
        email: `p${i}@example.com`,
        rank_id: i % 2 ? s.corporal.id : s.private_.id,
      }),
    );
  for (const [n, user] of users.entries()) {
    for (let r = 0; r < 3 + n; r++) {
      const record = await post("/v2/rank-records", {
        user_id: user.id,
        rank_id: r % 2 ? s.corporal.id : s.private_.id,
        type: r % 4,
        text: `Record ${n}.${r}`,
        document_id: r % 3 ? s.document.id : undefined,
        author_id: s.user.id,
      });
      for (let c = 0; c < r % 3; c++)
        await post("/v2/comments", {
          comment: `On ${record.id}: ${c}`,
          model_type: "App\\Models\\RankRecord",
          model_id: record.id,
        });
    }
  }
  const unit = await post("/v2/units", { name: "Alpha" });
  const group = await post("/v2/groups", { name: "First" });
  await api.post(`/v2/groups/${group.id}/units/attach`, { resources: [unit.id] });
  ids = { ...s, users: users.map((u) => u.id), unit: unit.id, group: group.id };
  narrowKey = await h.key("alpha", "view:user");
  // A key's first request also records its use: both apps then see keys already used, and run the same statements.
  for (const bearer of [key, narrowKey]) await send(reference, "{ __typename }", {}, bearer);
});
afterAll(async () => {
  await h?.close();
});

describe("planned execution answers as graphql-js does", () => {
  const planned = (name: string, document: string, variables: () => Json = () => ({})) =>
    test(name, async () => {
      const { body, planned } = await compare(document, variables());
      expect(planned, `the planned executor ran it: ${JSON.stringify(body).slice(0, 400)}`).toBe(true);
      expect(body.data, JSON.stringify(body)).toBeTruthy();
    });

  planned(
    "a page of users with their newest records, ranks and authors (the bench's W2)",
    "query W2($offset: Int) { users(first: 5, offset: $offset) { nodes { rowId name rankRecords(first: 3) { nodes { rowId type rank { name image { path } } author { name } } } } } }",
    () => ({ offset: 1 }),
  );
  planned(
    "edges, cursors, page info and counts, at the root and nested",
    `{ users(first: 2, orderBy: [{ name: desc }]) { totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
       edges { cursor node { id rowId label rankRecords(last: 2, orderBy: [{ createdAt: asc }]) { totalCount pageInfo { hasPreviousPage endCursor } edges { cursor node { text createdAt updatedAt } } } } } } }`,
  );
  planned(
    "a cursor walk's second page",
    "query($after: String) { users(first: 2, after: $after) { nodes { rowId } pageInfo { endCursor hasNextPage } } }",
    () => ({ after: null }),
  );
  planned(
    "typed filters through relations, case-insensitive text, enums",
    `{ rankRecords(where: { type: { in: [PROMOTION, DEMOTION] }, user: { is: { name: { contains: "PERSON", mode: INSENSITIVE } } } }, orderBy: [{ rank: { name: asc } }, { rowId: desc }]) {
       nodes { rowId type user { name rank { abbreviation } } document { name } } } }`,
  );
  planned(
    "aliases, named and inline fragments, __typename",
    `query { first: users(first: 1) { ...Page } second: users(first: 1, offset: 1) { ...Page } }
     fragment Page on UserConnection { __typename nodes { __typename ... on User { who: name rowId } ...Records } }
     fragment Records on User { rankRecords(first: 1) { nodes { __typename kind: type } } }`,
  );
  planned(
    "@skip and @include with variables",
    "query($full: Boolean!) { users(first: 3) { nodes { name email @include(if: $full) rank @skip(if: $full) { name } } } }",
    () => ({ full: true }),
  );
  planned(
    "lookups by row id: a row, a missing one, another account's is null",
    `query($id: Int!) { user(rowId: $id) { name lastRankChangeDate rankRecords { totalCount } } missing: user(rowId: 999999) { name } me { name } }`,
    () => ({ id: ids.users[2] }),
  );
  planned(
    "many-to-many connections with their link columns on the edges",
    `{ groups { nodes { name units { totalCount edges { linkedAt node { name } } } } } }`,
  );
  planned(
    "polymorphic children: the comments of each record",
    `{ users(first: 6) { nodes { name rankRecords(first: 3) { nodes { text comments(first: 1) { totalCount nodes { comment } } } } } } }`,
  );
  planned(
    "a nested connection with a bad argument is null with its error, its parents stand",
    `{ users(first: 2) { nodes { name rankRecords(first: -1) { totalCount } } } }`,
  );
  planned(
    "a root field with a bad argument fails alone",
    `{ users(first: 100000) { totalCount } ranks(first: 1) { nodes { name } } }`,
  );
  planned(
    "a cursor from elsewhere is refused at its own path",
    `{ ranks(first: 1, after: "not a cursor") { nodes { name } } statuses { nodes { name } } }`,
  );

  test("a key without a relation's scope gets the same answer either way", async () => {
    const { body } = await compare(`{ users(first: 2) { nodes { name rankRecords { totalCount } } } }`, {}, narrowKey);
    expect(body.errors ?? body.data).toBeTruthy();
  });

  const graphqlJs = (name: string, document: string) =>
    test(name, async () => {
      const { planned } = await compare(document);
      expect(planned, "left to graphql-js").toBe(false);
    });
  graphqlJs(
    "global ids through node and nodes (an interface)",
    `{ users(first: 2) { nodes { id } } node(id: "VXNlcjox") { id ... on User { name } } }`,
  );
  graphqlJs("introspection", `{ __schema { queryType { name } } }`);
  graphqlJs(
    "one relation under two aliases with different arguments",
    `{ users(first: 2) { nodes { newest: rankRecords(first: 1) { nodes { rowId } } oldest: rankRecords(last: 1) { nodes { rowId } } } } }`,
  );
  graphqlJs("a mutation", `mutation { createRank(input: { name: "Sergeant" }) { rank { name } } }`);
});

test("REST documents take the planned executor too, and answer as before", async () => {
  const before = plannedExecutionStats.planned;
  const list = await api.get(`/v2/users/${ids.users[1]}/rank-records?include=author,rank.image,document&limit=3`);
  expect(list.status).toBe(200);
  expect(list.body.data.length).toBe(3);
  expect(list.body.data[0].author.name).toBe("Ann Smith");
  expect(plannedExecutionStats.planned).toBeGreaterThan(before);
});

/**
 * Every resource's list, with every field of its rows that takes no argument: its columns, computed fields and
 * labels, each to-one relation's `__typename` and `rowId`, and each connection's count and first rows. Generated from
 * the public schema, so a field added to any resource is compared too.
 */
describe("every resource's fields answer the same on both executors", async () => {
  const { buildSchemas } = await import("../src/graphql/schema.ts");
  const { getNamedType, isAbstractType, isLeafType, isObjectType } = await import("graphql");
  const schema = buildSchemas().public;
  const query = schema.getQueryType()!;
  type ObjectType = import("graphql").GraphQLObjectType;
  const rowIdOf = (type: ObjectType) => ("rowId" in type.getFields() ? "rowId" : "");
  const selectionOf = (type: ObjectType) => {
    const parts: string[] = [];
    for (const field of Object.values(type.getFields())) {
      const named = getNamedType(field.type);
      if (isAbstractType(named)) continue;
      if (isLeafType(named)) {
        if (field.args.length === 0) parts.push(field.name);
      } else if (isObjectType(named) && named.name.endsWith("Connection")) {
        parts.push(
          `${field.name}(first: 2) { totalCount nodes { __typename ${rowIdOf(getNamedType(named.getFields().nodes.type) as ObjectType)} } }`,
        );
      } else if (isObjectType(named) && field.args.length === 0) {
        parts.push(`${field.name} { __typename ${rowIdOf(named)} }`);
      }
    }
    return parts.join(" ");
  };
  for (const field of Object.values(query.getFields())) {
    const named = getNamedType(field.type);
    if (!isObjectType(named) || !named.name.endsWith("Connection") || !field.args.some((a) => a.name === "first"))
      continue;
    const nodeType = getNamedType(named.getFields().nodes.type);
    if (!isObjectType(nodeType)) continue;
    test(field.name, async () => {
      const { planned } = await compare(
        `{ ${field.name}(first: 3) { totalCount nodes { ${selectionOf(nodeType)} } } }`,
      );
      expect(planned, "the planned executor ran it").toBe(true);
    });
  }
});
