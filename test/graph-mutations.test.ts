import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { client, seed, startHarness, type Client, type Harness } from "./harness.ts";

/**
 * The public graph's writes (issue 16 item 6): payload mutations answering the row (and the query root), batches in
 * request order and all-or-nothing, link mutations answering the parent with its links as they now are, enums in
 * inputs stored as REST's wire values, and errors keyed by GraphQL input paths.
 */
let h: Harness;
let api: Client;
let s: Awaited<ReturnType<typeof seed>>;

/** A GraphQL error as these tests read it. */
interface GqlError {
  message: string;
  extensions: { code: string; status?: number; errors: Record<string, string[]> };
}
/** The rows a batch mutation answers, under its field name. */
type Ranks<F extends string> = Record<F, { ranks: Array<{ id: string; rowId: number; name: string }> }>;
/** A link mutation's payload under its field name: the ids it changed and the form's links as they now are. */
type Linked<F extends string> = Record<
  F,
  {
    attachedRowIds: number[];
    detachedRowIds: number[];
    updatedRowIds: number[];
    form: { fields: { totalCount: number; edges: Array<{ order: number; node: { rowId: number; key: string } }> } };
  }
>;

/** Runs a document; `T` is the shape of `data` as the document selects it. */
async function gql<T = Record<string, unknown>>(query: string, variables: Record<string, unknown> = {}) {
  const reply = await api.graphql(query, variables);
  expect(reply.status).toBe(200);
  return reply.body as { data: T | null; errors?: GqlError[] };
}
const ranksByName = async () =>
  ((await api.get("/v2/ranks?limit=100")).body.data as Array<{ name: string }>).map((r) => r.name).sort();

beforeAll(async () => {
  h = await startHarness();
  api = client(h, await h.key());
  s = await seed(api);
});
afterAll(() => h?.close());

describe("payload mutations", () => {
  test("create answers the row and the query root; update changes only what is given; delete answers the row's last state", async () => {
    const created = await gql<{
      createRank: {
        rank: { id: string; rowId: number; name: string; abbreviation: string };
        query: { ranks: { totalCount: number } };
      };
    }>(
      `mutation { createRank(input: { name: "Sergeant", abbreviation: "SGT" }) { rank { id rowId name abbreviation } query { ranks { totalCount } } } }`,
    );
    expect(created.errors).toBeUndefined();
    const rank = created.data!.createRank.rank;
    expect(rank).toMatchObject({ name: "Sergeant", abbreviation: "SGT" });
    expect(created.data!.createRank.query.ranks.totalCount).toBe(
      (await api.get("/v2/ranks?limit=100")).body.data.length,
    );
    expect((await api.get(`/v2/ranks/${rank.rowId}`)).body.data.name).toBe("Sergeant");

    const updated = await gql<{ updateRank: { rank: unknown } }>(
      `mutation($rowId: Int!) { updateRank(rowId: $rowId, input: { abbreviation: "SG" }) { rank { rowId name abbreviation } } }`,
      { rowId: rank.rowId },
    );
    expect(updated.data!.updateRank.rank).toEqual({ rowId: rank.rowId, name: "Sergeant", abbreviation: "SG" });

    const deleted = await gql<{ deleteRank: { rank: unknown } }>(
      `mutation($rowId: Int!) { deleteRank(rowId: $rowId) { rank { id name } } }`,
      { rowId: rank.rowId },
    );
    expect(deleted.data!.deleteRank.rank).toEqual({ id: rank.id, name: "Sergeant" });
    expect((await api.get(`/v2/ranks/${rank.rowId}`)).status).toBe(404);
    const again = await gql(`mutation($rowId: Int!) { deleteRank(rowId: $rowId) { rank { id } } }`, {
      rowId: rank.rowId,
    });
    expect(again.data!.deleteRank).toBeNull();
    expect(again.errors![0].extensions.code).toBe("NOT_FOUND");
  });

  test("an enum in an input is stored as REST's wire value, and read back as the enum", async () => {
    const made = await gql<{ createRankRecord: { rankRecord: { rowId: number } } }>(
      `mutation($input: CreateRankRecordInput!) { createRankRecord(input: $input) { rankRecord { rowId type user { name } rank { name } } } }`,
      {
        input: { userId: s.user.id, rankId: s.corporal.id, type: "DEMOTION", text: "Demoted" },
      },
    );
    expect(made.errors).toBeUndefined();
    expect(made.data!.createRankRecord.rankRecord).toMatchObject({
      type: "DEMOTION",
      user: { name: "Ann Smith" },
      rank: { name: "Corporal" },
    });
    expect((await api.get(`/v2/rank-records/${made.data!.createRankRecord.rankRecord.rowId}`)).body.data.type).toBe(1);
    const bad = await api.graphql(
      `mutation { createRankRecord(input: { userId: ${s.user.id}, rankId: ${s.corporal.id}, type: SIDEWAYS }) { rankRecord { rowId } } }`,
    );
    expect(bad.body.errors[0].message).toMatch(/SIDEWAYS/);
    expect(bad.body.data ?? null).toBeNull();
  });

  test("a required attribute is non-null in the create input and optional in the patch", async () => {
    const missing = await api.graphql(`mutation { createRank(input: { abbreviation: "X" }) { rank { rowId } } }`);
    expect(missing.body.errors[0].message).toMatch(/name/);
    const invalid = await gql(`mutation { createRank(input: { name: "${"x".repeat(300)}" }) { rank { rowId } } }`);
    expect(invalid.errors![0].extensions).toMatchObject({ code: "VALIDATION", status: 422 });
    expect(Object.keys(invalid.errors![0].extensions.errors)).toEqual(["input.name"]);
  });
});

describe("batches: request order, all or nothing", () => {
  test("createRanks answers the rows in input order; a bad item stores nothing and names inputs.<i>", async () => {
    const names = ["Zulu", "Alpha", "Mike"];
    const made = await gql<Ranks<"createRanks">>(
      `mutation($inputs: [CreateRankInput!]!) { createRanks(inputs: $inputs) { ranks { rowId name } } }`,
      { inputs: names.map((name) => ({ name })) },
    );
    expect(made.data!.createRanks.ranks.map((r) => r.name)).toEqual(names);
    const before = await ranksByName();
    const bad = await gql(
      `mutation($inputs: [CreateRankInput!]!) { createRanks(inputs: $inputs) { ranks { rowId } } }`,
      { inputs: [{ name: "Fine" }, { name: "y".repeat(300) }] },
    );
    expect(bad.data!.createRanks).toBeNull();
    expect(Object.keys(bad.errors![0].extensions.errors)).toEqual(["inputs.1.name"]);
    expect(await ranksByName()).toEqual(before);
  });

  test("updateRanks answers the rows in item order; an unknown row id changes nothing and names items.<i>.rowId", async () => {
    const rows = (
      await gql<Ranks<"createRanks">>(
        `mutation { createRanks(inputs: [{ name: "One" }, { name: "Two" }]) { ranks { rowId } } }`,
      )
    ).data!.createRanks.ranks;
    const items = [
      { rowId: rows[1].rowId, input: { name: "Two!" } },
      { rowId: rows[0].rowId, input: { name: "One!" } },
    ];
    const done = await gql<Ranks<"updateRanks">>(
      `mutation($items: [UpdateRankItem!]!) { updateRanks(items: $items) { ranks { rowId name } } }`,
      { items },
    );
    expect(done.data!.updateRanks.ranks).toEqual([
      { rowId: rows[1].rowId, name: "Two!" },
      { rowId: rows[0].rowId, name: "One!" },
    ]);
    const refused = await gql(
      `mutation($items: [UpdateRankItem!]!) { updateRanks(items: $items) { ranks { rowId } } }`,
      {
        items: [
          { rowId: rows[0].rowId, input: { name: "Changed" } },
          { rowId: 999_999, input: { name: "Ghost" } },
        ],
      },
    );
    expect(Object.keys(refused.errors![0].extensions.errors)).toEqual(["items.1.rowId"]);
    expect((await api.get(`/v2/ranks/${rows[0].rowId}`)).body.data.name).toBe("One!");
  });

  test("deleteRanks answers the rows' last state in id order given; an unknown id deletes nothing", async () => {
    const rows = (
      await gql<Ranks<"createRanks">>(
        `mutation { createRanks(inputs: [{ name: "Del A" }, { name: "Del B" }]) { ranks { rowId } } }`,
      )
    ).data!.createRanks.ranks;
    const refused = await gql(`mutation($rowIds: [Int!]!) { deleteRanks(rowIds: $rowIds) { ranks { rowId } } }`, {
      rowIds: [rows[0].rowId, 999_999],
    });
    expect(Object.keys(refused.errors![0].extensions.errors)).toEqual(["rowIds.1"]);
    expect((await api.get(`/v2/ranks/${rows[0].rowId}`)).status).toBe(200);
    const done = await gql<Ranks<"deleteRanks">>(
      `mutation($rowIds: [Int!]!) { deleteRanks(rowIds: $rowIds) { ranks { rowId name } } }`,
      { rowIds: [rows[1].rowId, rows[0].rowId] },
    );
    expect(done.data!.deleteRanks.ranks).toEqual([
      { rowId: rows[1].rowId, name: "Del B" },
      { rowId: rows[0].rowId, name: "Del A" },
    ]);
    for (const r of rows) expect((await api.get(`/v2/ranks/${r.rowId}`)).status).toBe(404);
  });
});

describe("link mutations answer the parent with its links as they now are", () => {
  const fieldsOf = `form { fields { totalCount edges { order node { rowId key } } } }`;
  test("attach, pivot, toggle, sync and detach on a form's fields", async () => {
    const extra = (await api.post("/v2/fields", { name: "Rank", key: "rank_wanted", type: "text" })).body.data ?? null;
    const third =
      extra ??
      (await api.post(`/v2/forms/${s.form.id}/fields`, { name: "Rank", key: "rank_wanted", type: "text" })).body.data;
    if (!extra)
      await gql(`mutation { detachFormFields(rowId: ${s.form.id}, rowIds: [${third.id}]) { attachedRowIds } }`);

    const attached = await gql<Linked<"attachFormFields">>(
      `mutation { attachFormFields(rowId: ${s.form.id}, items: [{ rowId: ${third.id}, order: 7 }]) { attachedRowIds ${fieldsOf} } }`,
    );
    expect(attached.errors).toBeUndefined();
    expect(attached.data!.attachFormFields.attachedRowIds).toEqual([third.id]);
    expect(attached.data!.attachFormFields.form.fields.edges.map((e) => [e.node.key, e.order])).toContainEqual([
      "rank_wanted",
      7,
    ]);

    const pivoted = await gql<Linked<"updateFormFieldPivot">>(
      `mutation { updateFormFieldPivot(rowId: ${s.form.id}, item: { rowId: ${third.id}, order: 0 }) { updatedRowIds ${fieldsOf} } }`,
    );
    expect(pivoted.errors).toBeUndefined();
    expect(pivoted.data!.updateFormFieldPivot.updatedRowIds).toEqual([third.id]);
    expect(pivoted.data!.updateFormFieldPivot.form.fields.edges[0].node.key).toBe("rank_wanted");

    const toggled = await gql<Linked<"toggleFormFields">>(
      `mutation { toggleFormFields(rowId: ${s.form.id}, items: [{ rowId: ${third.id} }]) { detachedRowIds ${fieldsOf} } }`,
    );
    expect(toggled.data!.toggleFormFields.detachedRowIds).toEqual([third.id]);
    expect(toggled.data!.toggleFormFields.form.fields.totalCount).toBe(2);

    const synced = await gql<Linked<"syncFormFields">>(
      `mutation { syncFormFields(rowId: ${s.form.id}, items: [{ rowId: ${s.field.id} }]) { detachedRowIds ${fieldsOf} } }`,
    );
    expect(synced.data!.syncFormFields.detachedRowIds).toEqual([s.field2.id]);
    expect(synced.data!.syncFormFields.form.fields.edges.map((e) => e.node.rowId)).toEqual([s.field.id]);

    const detached = await gql<Linked<"detachFormFields">>(
      `mutation { detachFormFields(rowId: ${s.form.id}, rowIds: [${s.field.id}]) { detachedRowIds ${fieldsOf} } }`,
    );
    expect(detached.data!.detachFormFields.form.fields.totalCount).toBe(0);
    expect((await api.get(`/v2/forms/${s.form.id}/fields`)).body.data).toEqual([]);
  });

  test("linking a row of no account's is refused under items, and nothing changes", async () => {
    const refused = await gql(
      `mutation { attachFormFields(rowId: ${s.form.id}, items: [{ rowId: 999999 }]) { attachedRowIds } }`,
    );
    expect(refused.data!.attachFormFields).toBeNull();
    expect(refused.errors![0].extensions.code).toBe("VALIDATION");
    expect(Object.keys(refused.errors![0].extensions.errors)[0]).toMatch(/^items/);
  });
});

test("an account command is a mutation with a payload", async () => {
  const done = await gql<{ clearCache: { status: unknown } }>(`mutation { clearCache { status } }`);
  expect(done.errors).toBeUndefined();
  expect(done.data!.clearCache.status).toBeTruthy();
});
