import { afterAll, beforeAll, expect, test } from "vitest";
import { client, seed, startHarness, type Client, type Harness } from "./harness.ts";

let h: Harness;
let a: Client;
let b: Client;
let s: Awaited<ReturnType<typeof seed>>;
let mine: Awaited<ReturnType<typeof seed>>;
let newsfeedId: number;

/** Everything of account A that an account-B key must not see or touch, read back after the attempts. */
const snapshot = async () => ({
  user: (await a.get(`/v2/users/${s.user.id}?include=rank,status`)).body,
  ranks: (await a.get(`/v2/ranks`)).body.data,
  records: (await a.get(`/v2/users/${s.user.id}/rank-records`)).body.data,
  fields: (await a.get(`/v2/users/${s.user.id}/fields?include=fields`)).body.data,
  statuses: (await a.get(`/v2/users/${s.user.id}/status-records?include=record`)).body.data,
  forms: (await a.get(`/v2/categories/${s.category.id}/forms`)).body.data,
  formFields: (await a.get(`/v2/forms/${s.form.id}/fields`)).body.data,
  tasks: (await a.get(`/v2/users/${s.user.id}/tasks`)).body.data,
  quals: (await a.get(`/v2/categories/${s.category.id}/qualifications`)).body.data,
  likes: (await a.get(`/v2/newsfeed/${newsfeedId}/likes`)).body.data,
  submissions: (await a.get(`/v2/submissions`)).body.data,
  specialty: (await a.get(`/v2/specialties/${s.specialty.id}`)).body,
  comments: (await a.get(`/v2/comments`)).body.data,
});

beforeAll(async () => {
  h = await startHarness();
  a = client(h, await h.key("alpha"));
  b = client(h, await h.key("bravo"));
  s = await seed(a);
  mine = await seed(b);
  await a.post(`/v2/users/${s.user.id}/rank-records`, { rank_id: s.corporal.id, type: 0 });
  newsfeedId = (await a.get("/v2/newsfeed")).body.data[0].id;
  await a.post(`/v2/users/${s.user.id}/fields/attach`, { resources: [s.field.id] });
  await a.post(`/v2/users/${s.user.id}/status-records/attach`, { resources: [s.active.id] });
  await a.post(`/v2/categories/${s.category.id}/forms/attach`, { resources: [s.form.id] });
  await a.post(`/v2/comments`, { comment: "private", model_type: "App\\Models\\RankRecord", model_id: 1 });
});
afterAll(() => h.close());

test("a key of another account cannot read, change or link records through the 15 operations", async () => {
  const before = await snapshot();
  const attempts: Array<[string, string, unknown, number[]]> = [
    ["PATCH", `/v2/users/${s.user.id}/rank/${s.corporal.id}`, { name: "Hacked" }, [404]],
    ["PATCH", `/v2/users/${s.user.id}/fields/batch`, { resources: { [s.field.id]: { name: "Hacked" } } }, [404]],
    ["PATCH", `/v2/users/${mine.user.id}/fields/batch`, { resources: { [s.field.id]: { name: "Hacked" } } }, [422]],
    ["PATCH", `/v2/categories/${s.category.id}/forms/${s.form.id}`, { name: "Hacked" }, [404]],
    ["PATCH", `/v2/categories/${mine.category.id}/forms/${s.form.id}`, { name: "Hacked" }, [404]],
    ["POST", `/v2/categories/${s.category.id}/forms`, { name: "Planted", slug: "planted", is_public: true }, [404]],
    ["POST", `/v2/users/${s.user.id}/tasks`, { title: "Planted" }, [404]],
    ["POST", `/v2/users/${mine.user.id}/tasks`, { title: "Planted", form_id: s.form.id }, [422]],
    ["POST", `/v2/categories/${s.category.id}/qualifications`, { name: "Planted" }, [404]],
    ["DELETE", `/v2/users/${s.user.id}/status-records/batch`, { resources: [s.active.id] }, [404]],
    ["DELETE", `/v2/users/${mine.user.id}/status-records/batch`, { resources: [s.active.id] }, [422]],
    ["POST", `/v2/newsfeed/${newsfeedId}/likes/attach`, { resources: [mine.user.id] }, [404]],
    ["PATCH", `/v2/forms/${s.form.id}/fields/sync`, { resources: [] }, [404]],
    ["PATCH", `/v2/forms/${mine.form.id}/fields/sync`, { resources: [s.field.id], detaching: false }, [422]],
    ["PATCH", `/v2/users/${s.user.id}/fields/${s.field.id}/pivot`, { pivot: { order: 99 } }, [404]],
    ["POST", `/v2/submissions`, { form_id: s.form.id, user_id: s.user.id, callsign: "x" }, [422]],
    ["POST", `/v2/submissions`, { form_id: mine.form.id, user_id: s.user.id, callsign: "x" }, [422]],
    ["DELETE", `/v2/specialties/${s.specialty.id}`, undefined, [404]],
    ["DELETE", `/v2/qualifications/${s.qualification.id}/image/1`, undefined, [404]],
    ["GET", `/v2/users/${s.user.id}/rank-records`, undefined, [404]],
    ["GET", `/v2/ranks/${s.private_.id}`, undefined, [404]],
    ["POST", `/v2/users/${mine.user.id}/rank-records`, { rank_id: s.private_.id, type: 0 }, [422]],
    ["POST", `/v2/comments`, { comment: "x", model_type: "App\\Models\\RankRecord", model_id: 1 }, [422]],
  ];
  for (const [method, url, body, expected] of attempts) {
    const r = await b.send(method, url, body);
    expect([method, url, r.status]).toEqual([method, url, expected[0]]);
  }
  const comments = (await b.get("/v2/comments?include=author,commentable")).body.data;
  expect(comments).toEqual([]);
  const theirs = (await b.get(`/v2/users/${mine.user.id}/rank-records?include=rank,author,comments.*`)).body.data;
  expect(JSON.stringify(theirs)).not.toContain("Corporal First");
  // Another account's row is null, as a missing one is: nothing says it exists, by row id, by global id, in a list.
  const userId = Buffer.from(`User:${s.user.id}`).toString("base64");
  const gql = await b.graphql(
    `query($rowId: Int!, $id: ID!) { user(rowId: $rowId) { rowId name } node(id: $id) { ... on User { rowId name } } nodes(ids: [$id]) { ... on User { rowId } }
      users(where: { rowId: { equals: $rowId } }) { totalCount nodes { rowId } } }`,
    { rowId: s.user.id, id: userId },
  );
  expect(gql.body).toEqual({ data: { user: null, node: null, nodes: [null], users: { totalCount: 0, nodes: [] } } });
  // The same document finds B's own user: the nulls above are the account, not a wrong query.
  const own = await b.graphql(`query($rowId: Int!) { user(rowId: $rowId) { rowId } }`, { rowId: mine.user.id });
  expect(own.body).toEqual({ data: { user: { rowId: mine.user.id } } });
  // Writes through the public mutations: another account's row is not found, and its foreign keys are refused.
  const update = await b.graphql(
    `mutation($rowId: Int!) { updateRank(rowId: $rowId, input: { name: "Hacked" }) { rank { rowId } } }`,
    { rowId: s.private_.id },
  );
  expect(update.body.errors[0].extensions.code).toBe("NOT_FOUND");
  const remove = await b.graphql(`mutation($rowId: Int!) { deleteSpecialty(rowId: $rowId) { specialty { rowId } } }`, {
    rowId: s.specialty.id,
  });
  expect(remove.body.errors[0].extensions.code).toBe("NOT_FOUND");
  const planted = await b.graphql(
    `mutation($user: Int!, $rank: Int!) { createRankRecord(input: { userId: $user, rankId: $rank, type: PROMOTION }) { rankRecord { rowId } } }`,
    { user: mine.user.id, rank: s.private_.id },
  );
  expect(planted.body.errors[0].extensions).toMatchObject({
    code: "VALIDATION",
    errors: { "input.rankId": expect.any(Array) },
  });
  const linked = await b.graphql(
    `mutation($form: Int!, $field: Int!) { attachFormFields(rowId: $form, items: [{ rowId: $field }]) { form { rowId } } }`,
    {
      form: mine.form.id,
      field: s.field.id,
    },
  );
  // As REST's sync of the same field under B's own form: 422.
  expect(linked.body.errors?.[0]?.extensions?.code).toBe("VALIDATION");
  expect(await snapshot()).toEqual(before);
});
