import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, startHarness, type Client, type Harness } from "./harness.ts";

/** A GraphQL error as these tests read it: its path, code and the arguments it names. */
interface ValidationError {
  path: string[];
  extensions: { code: string; errors: Record<string, string[]> };
}

/**
 * Errors the GraphQL way (issue 16): a missing or foreign row is null, root fields fail on their own (their
 * siblings' data stays), field errors are keyed by the GraphQL input path, and a response with data is a 200.
 * REST keeps PERSCOM's 404s and snake keys for the same failures.
 */
describe("GraphQL errors", () => {
  let h: Harness;
  let api: Client;
  let other: Client;
  let rankId: number;
  let foreignRankId: number;
  const globalId = (type: string, rowId: number) => Buffer.from(`${type}:${rowId}`).toString("base64");

  beforeAll(async () => {
    h = await startHarness();
    api = client(h, await h.key("alpha"));
    other = client(h, await h.key("bravo"));
    rankId = (await api.post("/v2/ranks", { name: "Private", abbreviation: "PVT" })).body.data.id;
    foreignRankId = (await other.post("/v2/ranks", { name: "Sergeant", abbreviation: "SGT" })).body.data.id;
  });
  afterAll(() => h.close());

  it("a missing id is null, with no error, by row id and by global id; REST still answers 404", async () => {
    const r = await api.graphql("query($id: Int!) { rank(rowId: $id) { id rowId name } }", { id: rankId + 100_000 });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ data: { rank: null } });
    const node = await api.graphql("query($id: ID!) { node(id: $id) { id } }", {
      id: globalId("Rank", rankId + 100_000),
    });
    expect(node.body).toEqual({ data: { node: null } });
    const rest = await api.get(`/v2/ranks/${rankId + 100_000}`);
    expect(rest.status).toBe(404);
    expect(rest.body.error).toMatchObject({
      message: "The requested resource or endpoint could not be found.",
      type: "NotFoundHttpException",
    });
  });

  it("another account's id is null, like a missing one; REST answers 404", async () => {
    const r = await api.graphql("query($id: Int!) { rank(rowId: $id) { id rowId name } }", { id: foreignRankId });
    expect(r.body).toEqual({ data: { rank: null } });
    expect((await api.get(`/v2/ranks/${foreignRankId}`)).status).toBe(404);
    const mine = await api.graphql("query($id: Int!) { rank(rowId: $id) { id rowId name } }", { id: rankId });
    expect(mine.body).toEqual({ data: { rank: { id: globalId("Rank", rankId), rowId: rankId, name: "Private" } } });
    // By global id: the foreign row is null in place, the own row found, in request order.
    const nodes = await api.graphql("query($ids: [ID!]!) { nodes(ids: $ids) { id ... on Rank { rowId } } }", {
      ids: [globalId("Rank", foreignRankId), globalId("Rank", rankId)],
    });
    expect(nodes.status).toBe(200);
    expect(nodes.body).toEqual({ data: { nodes: [null, { id: globalId("Rank", rankId), rowId: rankId }] } });
  });

  it("a failing root field leaves its siblings' data; its error has path, locations and extensions; HTTP 200", async () => {
    const r = await api.graphql(
      `mutation($missing: Int!, $id: Int!) {
        gone: deleteRank(rowId: $missing) { rank { rowId } }
        kept: updateRank(rowId: $id, input: { abbreviation: "PV1" }) { rank { rowId abbreviation } }
      }`,
      { missing: rankId + 100_000, id: rankId },
    );
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ gone: null, kept: { rank: { rowId: rankId, abbreviation: "PV1" } } });
    expect(r.body.errors).toHaveLength(1);
    expect(r.body.errors[0]).toMatchObject({
      path: ["gone"],
      locations: [{ line: 2, column: 9 }],
      extensions: {
        code: "NOT_FOUND",
        status: 404,
        type: "NotFoundHttpException",
        request_id: r.headers.get("x-perscom-request-id"),
        trace_id: r.headers.get("x-perscom-trace-id"),
      },
    });
    expect(r.body.errors[0].extensions).not.toHaveProperty("http");
  });

  it("a root list (a connection) that fails leaves its siblings' data too", async () => {
    const r = await api.graphql(
      `query($id: Int!) {
      kept: rank(rowId: $id) { name }
      ranks(first: 101) { totalCount }
    }`,
      { id: rankId },
    );
    expect(
      r.body.errors.map((e: ValidationError) => [e.path, e.extensions.code, Object.keys(e.extensions.errors)]),
    ).toEqual([[["ranks"], "VALIDATION", ["first"]]]);
    expect(r.body.data).toEqual({ kept: { name: "Private" }, ranks: null });
    expect(r.status).toBe(200);
  });

  it("a mutation that commits keeps its new id in data when the next one fails", async () => {
    const r = await api.graphql(`mutation {
      first: createRank(input: { name: "Corporal", abbreviation: "CPL" }) { rank { id rowId name } }
      second: createRank(input: { name: "", abbreviation: "NONAME" }) { rank { rowId } }
    }`);
    expect(r.status).toBe(200);
    expect(r.body.data.second).toBeNull();
    const created = r.body.data.first.rank;
    expect(created).toMatchObject({ rowId: expect.any(Number), name: "Corporal" });
    expect(created.id).toBe(globalId("Rank", created.rowId));
    expect(r.body.errors.map((e: ValidationError) => [e.path, e.extensions.code, e.extensions.errors])).toEqual([
      [["second"], "VALIDATION", { "input.name": ["The name field is required."] }],
    ]);
    // It committed: REST reads it back, and the failed one stored nothing.
    expect((await api.get(`/v2/ranks/${created.rowId}`)).body.data.name).toBe("Corporal");
    expect(
      (await api.post("/v2/ranks/search", { filters: [{ field: "abbreviation", value: "NONAME" }] })).body.data,
    ).toEqual([]);
  });

  it("field errors are keyed by GraphQL input paths; REST keeps PERSCOM's snake keys", async () => {
    const r = await api.graphql(`mutation {
      createUser(input: { name: "Ann", email: "ann@example.com", rankId: ${rankId + 100_000} }) { user { rowId } }
    }`);
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ createUser: null });
    const keys = Object.keys(r.body.errors[0].extensions.errors);
    expect(keys).toEqual(["input.rankId"]);
    const rest = await api.post("/v2/users", { name: "Ann", email: "ann@example.com", rank_id: rankId + 100_000 });
    expect(rest.status).toBe(422);
    expect(Object.keys(rest.body.error.errors)).toEqual(["rank_id"]);
    expect(rest.body.error.errors.rank_id).toEqual(r.body.errors[0].extensions.errors["input.rankId"]);

    // A patch's errors are under `input` as well.
    const patch = await api.graphql(
      `mutation { updateRank(rowId: ${rankId}, input: { name: "" }) { rank { rowId } } }`,
    );
    expect(patch.body.data).toEqual({ updateRank: null });
    expect(patch.body.errors[0].extensions.errors).toEqual({ "input.name": ["The name field is required."] });

    // A batch names an item by its position in `inputs`; REST by its position in `resources`.
    const batch = await api.graphql(
      `mutation { createRanks(inputs: [{ name: "A" }, { name: "" }]) { ranks { rowId } } }`,
    );
    expect(batch.status).toBe(200);
    expect(batch.body.data).toEqual({ createRanks: null });
    expect(Object.keys(batch.body.errors[0].extensions.errors)).toEqual(["inputs.1.name"]);
    const restBatch = await api.post("/v2/ranks/batch", { resources: [{ name: "A" }, { name: "" }] });
    expect(restBatch.status).toBe(422);
    expect(Object.keys(restBatch.body.error.errors)).toEqual(["resources.1.name"]);

    // REST's batch update and delete (no public counterpart) name an item by its id.
    const restUpdate = await api.patch("/v2/ranks/batch", { resources: { [rankId]: { name: "" } } });
    expect(restUpdate.status).toBe(422);
    expect(Object.keys(restUpdate.body.error.errors)).toEqual([`resources.${rankId}.name`]);
    const restGone = await api.delete("/v2/ranks/batch", { resources: [rankId, foreignRankId] });
    expect(Object.keys(restGone.body.error.errors)).toEqual([`resources.${foreignRankId}`]);

    // Link mutations: the list REST calls `resources` is `items` (attach) or `rowIds` (detach) on GraphQL.
    const category = (await api.post("/v2/categories", { name: "Ranks", resource: "App\\Models\\Rank" })).body.data.id;
    const attach = await api.graphql(
      `mutation { attachCategoryRanks(rowId: ${category}, items: [{ rowId: ${rankId} }, { rowId: ${foreignRankId} }]) { attachedRowIds } }`,
    );
    expect(attach.status).toBe(200);
    expect(attach.body.data).toEqual({ attachCategoryRanks: null });
    expect(Object.keys(attach.body.errors[0].extensions.errors)).toEqual(["items"]);
    const detach = await api.graphql(
      `mutation { detachCategoryRanks(rowId: ${category}, rowIds: [${rankId}, ${foreignRankId}]) { detachedRowIds } }`,
    );
    expect(Object.keys(detach.body.errors[0].extensions.errors)).toEqual(["rowIds"]);
    const restAttach = await api.post(`/v2/categories/${category}/ranks/attach`, {
      resources: [rankId, foreignRankId],
    });
    expect(restAttach.status).toBe(422);
    expect(restAttach.body.error.errors).toEqual({ resources: attach.body.errors[0].extensions.errors.items });

    // Connection arguments: `where` by the path into the filter, `orderBy` by the item, cursors by their argument.
    const where = await api.graphql(`{ ranks(where: { name: { equals: null } }) { totalCount } }`);
    expect(where.body.errors.map((e: ValidationError) => [e.path, Object.keys(e.extensions.errors)])).toEqual([
      [["ranks"], ["where.name.equals"]],
    ]);
    const order = await api.graphql(`{ ranks(orderBy: [{ name: asc }, { name: asc, order: desc }]) { totalCount } }`);
    expect(Object.keys(order.body.errors[0].extensions.errors)).toEqual(["orderBy.1"]);
    const after = await api.graphql(`{ ranks(after: "not-a-cursor") { totalCount } }`);
    expect(Object.keys(after.body.errors[0].extensions.errors)).toEqual(["after"]);
    const restSearch = await api.post("/v2/ranks/search", { filters: [{ field: "no_such_column", value: 1 }] });
    expect(Object.keys(restSearch.body.error.errors)).toEqual(["filters.0.field"]);
  });

  it("a nested connection's error has the nested path and names its argument", async () => {
    const user = (await api.post("/v2/users", { name: "Bo", email: "bo@example.com", rank_id: rankId })).body.data.id;
    const r = await api.graphql(
      `query($id: Int!) { user(rowId: $id) { name rankRecords(first: 101) { totalCount } } kept: rank(rowId: ${rankId}) { rowId } }`,
      { id: user },
    );
    expect(r.status).toBe(200);
    expect(
      r.body.errors.map((e: ValidationError) => [e.path, e.extensions.code, Object.keys(e.extensions.errors)]),
    ).toEqual([[["user", "rankRecords"], "VALIDATION", ["first"]]]);
    // The nested connection is nullable: only it is null, its parent row and the sibling root field stand.
    expect(r.body.data).toEqual({ user: { name: "Bo", rankRecords: null }, kept: { rowId: rankId } });
  });

  it("a variable GraphQL cannot coerce is named as the client sent it; REST names the snake field", async () => {
    const wrong = await api.graphql("mutation($in: CreateRankInput!) { createRank(input: $in) { rank { rowId } } }", {
      in: { name: 5 },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.data).toBeUndefined();
    expect(wrong.body.errors[0].extensions).toMatchObject({
      code: "VALIDATION",
      errors: { "in.name": ["The name field must be a string."] },
    });
    const id = await api.graphql("query($x: Int!) { rank(rowId: $x) { rowId } }", { x: "a" });
    expect(id.body.errors[0].extensions.errors).toEqual({ x: ["The x field must be an integer."] });
    const rest = await api.post("/v2/ranks", { name: 5 });
    expect(rest.status).toBe(422);
    expect(rest.body.error.errors).toEqual({ name: ["The name field must be a string."] });
  });

  it("a request error has no data and keeps its status: no key is a 401", async () => {
    const r = await client(h, null).graphql("{ ranks { totalCount } }");
    expect(r.status).toBe(401);
    expect(r.body.data).toBeUndefined();
    expect(r.body.errors[0].extensions.code).toBe("UNAUTHENTICATED");
  });
});
