import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, startHarness, type Client, type Harness } from "./harness.ts";

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

  beforeAll(async () => {
    h = await startHarness();
    api = client(h, await h.key("alpha"));
    other = client(h, await h.key("bravo"));
    rankId = (await api.post("/v2/ranks", { name: "Private", abbreviation: "PVT" })).body.data.id;
    foreignRankId = (await other.post("/v2/ranks", { name: "Sergeant", abbreviation: "SGT" })).body.data.id;
  });
  afterAll(() => h.close());

  it("a missing id is null, with no error; REST still answers 404", async () => {
    const r = await api.graphql("query($id: Int!) { rank(rank: $id) { id name } }", { id: rankId + 100_000 });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ data: { rank: null } });
    const rest = await api.get(`/v2/ranks/${rankId + 100_000}`);
    expect(rest.status).toBe(404);
    expect(rest.body.error).toMatchObject({ message: "The requested resource or endpoint could not be found.", type: "NotFoundHttpException" });
  });

  it("another account's id is null, like a missing one; REST answers 404", async () => {
    const r = await api.graphql("query($id: Int!) { rank(rank: $id) { id name } }", { id: foreignRankId });
    expect(r.body).toEqual({ data: { rank: null } });
    expect((await api.get(`/v2/ranks/${foreignRankId}`)).status).toBe(404);
    const mine = await api.graphql("query($id: Int!) { rank(rank: $id) { id name } }", { id: rankId });
    expect(mine.body).toEqual({ data: { rank: { id: rankId, name: "Private" } } });
  });

  it("a failing root field leaves its siblings' data; its error has path, locations and extensions; HTTP 200", async () => {
    const r = await api.graphql(
      `mutation($missing: Int!, $id: Int!) {
        gone: deleteRank(rank: $missing) { id }
        kept: updateRank(rank: $id, input: { abbreviation: "PV1" }) { id abbreviation }
      }`,
      { missing: rankId + 100_000, id: rankId },
    );
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ gone: null, kept: { id: rankId, abbreviation: "PV1" } });
    expect(r.body.errors).toHaveLength(1);
    expect(r.body.errors[0]).toMatchObject({
      path: ["gone"],
      locations: [{ line: 2, column: 9 }],
      extensions: {
        code: "NOT_FOUND", status: 404, type: "NotFoundHttpException",
        request_id: r.headers.get("x-perscom-request-id"), trace_id: r.headers.get("x-perscom-trace-id"),
      },
    });
    expect(r.body.errors[0].extensions).not.toHaveProperty("http");
  });

  it("a mutation that commits keeps its new id in data when the next one fails", async () => {
    const r = await api.graphql(`mutation {
      first: createRank(input: { name: "Corporal", abbreviation: "CPL" }) { id name }
      second: createRank(input: { abbreviation: "NONAME" }) { id }
    }`);
    expect(r.status).toBe(200);
    expect(r.body.data.second).toBeNull();
    expect(r.body.data.first).toMatchObject({ id: expect.any(Number), name: "Corporal" });
    expect(r.body.errors.map((e: any) => [e.path, e.extensions.code])).toEqual([[["second"], "VALIDATION"]]);
    // It committed: REST reads it back.
    expect((await api.get(`/v2/ranks/${r.body.data.first.id}`)).body.data.name).toBe("Corporal");
  });

  it("field errors are keyed by GraphQL input paths; REST keeps PERSCOM's snake keys", async () => {
    const r = await api.graphql(`mutation {
      createUser(input: { name: "Ann", email: "ann@example.com", rankId: ${rankId + 100_000} }) { id }
    }`);
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ createUser: null });
    const keys = Object.keys(r.body.errors[0].extensions.errors);
    expect(keys).toEqual(["input.rankId"]);
    const rest = await api.post("/v2/users", { name: "Ann", email: "ann@example.com", rank_id: rankId + 100_000 });
    expect(rest.status).toBe(422);
    expect(Object.keys(rest.body.error.errors)).toEqual(["rank_id"]);
    expect(rest.body.error.errors.rank_id).toEqual(r.body.errors[0].extensions.errors["input.rankId"]);

    const batch = await api.graphql(`mutation { batchCreateRanks(resources: [{ name: "A" }, { abbreviation: "B" }]) { id } }`);
    expect(batch.body.data).toEqual({ batchCreateRanks: null });
    expect(Object.keys(batch.body.errors[0].extensions.errors)).toEqual(["resources.1.name"]);

    // A batch update names an item by its position and its `input` on GraphQL, by its id on REST.
    const update = await api.graphql(`mutation { batchUpdateRanks(resources: [{ id: ${rankId}, input: { name: "Private" } }, { id: ${rankId}, input: { name: "" } }]) { id } }`);
    expect(update.body.data).toEqual({ batchUpdateRanks: null });
    expect(Object.keys(update.body.errors[0].extensions.errors)).toEqual(["resources.1.input.name"]);
    const restUpdate = await api.patch("/v2/ranks/batch", { resources: { [rankId]: { name: "" } } });
    expect(restUpdate.status).toBe(422);
    expect(Object.keys(restUpdate.body.error.errors)).toEqual([`resources.${rankId}.name`]);

    const gone = await api.graphql(`mutation { batchDeleteRanks(resources: [${rankId}, ${foreignRankId}]) { id } }`);
    expect(Object.keys(gone.body.errors[0].extensions.errors)).toEqual(["resources.1"]);
    const restGone = await api.delete("/v2/ranks/batch", { resources: [rankId, foreignRankId] });
    expect(Object.keys(restGone.body.error.errors)).toEqual([`resources.${foreignRankId}`]);
    const absent = await api.graphql(`mutation { batchUpdateRanks(resources: [{ id: ${rankId} }, { id: ${foreignRankId} }]) { id } }`);
    expect(Object.keys(absent.body.errors[0].extensions.errors)).toEqual(["resources.1.id"]);

    const search = await api.graphql(`{ ranks(filters: [{ field: "no_such_column", value: 1 }]) { totalCount } }`);
    expect(search.body.data).toEqual({ ranks: null });
    expect(Object.keys(search.body.errors[0].extensions.errors)).toEqual(["filters.0.field"]);
    const restSearch = await api.post("/v2/ranks/search", { filters: [{ field: "no_such_column", value: 1 }] });
    expect(Object.keys(restSearch.body.error.errors)).toEqual(["filters.0.field"]);
  });

  it("a variable GraphQL cannot coerce is named as the client sent it; REST names the snake field", async () => {
    const wrong = await api.graphql("mutation($in: RankInput!) { createRank(input: $in) { id } }", { in: { name: 5 } });
    expect(wrong.status).toBe(422);
    expect(wrong.body.data).toBeUndefined();
    expect(wrong.body.errors[0].extensions).toMatchObject({ code: "VALIDATION", errors: { "in.name": ["The name field must be a string."] } });
    const id = await api.graphql("query($x: Int!) { rank(rank: $x) { id } }", { x: "a" });
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
