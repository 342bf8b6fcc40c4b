/**
 * Scopes on relations (README, "Scopes on relations"): reading a resource through another one, as a REST `include` or
 * a nested GraphQL selection, needs that resource's `view:` scope as well as the operation's own. REST answers PERSCOM's
 * 403 naming the missing scope; GraphQL a FORBIDDEN error with the field's path. Pivots, page fields and the parent's
 * computed fields need nothing more; a polymorphic owner needs the scopes of the member types selected.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { client, seed, startHarness, type Client, type Harness, type Reply } from "./harness.ts";
import { operations as catalogue } from "../src/resources/operations.ts";
/** Every operation that takes a credential: the public forms' need none (test/public-forms.test.ts covers them). */
const operations = catalogue.filter((op) => !op.anonymous);
import { relationViewScopes } from "../src/graphql/relation-scopes.ts";
import { World } from "./support/world.ts";
import { planValid, urlOf } from "./support/plans.ts";

const FORBIDDEN =
  "The API key provided does not have the correct permissions and/or scopes to perform the requested action.";

let h: Harness;
let star: Client;
let s: Awaited<ReturnType<typeof seed>>;
let commentId: number;
let rankImageId: number;

const keyed = async (scopes: string) => client(h, await h.key("alpha", scopes));
/** The scopes a 403 names: `Missing scope(s): a, b.` after PERSCOM's message. */
const missingOf = (r: Reply): string[] | null => {
  const message: string | undefined = r.body?.error?.message;
  if (r.status !== 403 || r.body.error.type !== "HttpException" || !message?.startsWith(FORBIDDEN)) return null;
  return /Missing scopes?: (.*)\.$/.exec(message)?.[1]!.split(", ") ?? [];
};

beforeAll(async () => {
  h = await startHarness();
  star = client(h, await h.key("alpha", "*"));
  s = await seed(star);
  const record = await star.post(`/v2/users/${s.user.id}/rank-records`, {
    rank_id: s.corporal.id,
    type: 0,
    text: "Promoted",
  });
  expect(record.status, JSON.stringify(record.body)).toBe(200);
  const comment = await star.post("/v2/comments", {
    comment: "Well earned",
    model_type: "App\\Models\\RankRecord",
    model_id: record.body.data.id,
  });
  expect(comment.status, JSON.stringify(comment.body)).toBe(200);
  commentId = comment.body.data.id;
  const form = new FormData();
  form.set("name", "Chevron");
  form.set(
    "image",
    new Blob([Buffer.from("89504e470d0a1a0a0000000d4948445200000001000000010806000000", "hex")], { type: "image/png" }),
    "chevron.png",
  );
  const image = await star.post(`/v2/ranks/${s.private_.id}/image`, form);
  expect(image.status, JSON.stringify(image.body)).toBe(200);
  rankImageId = image.body.data.id;
  await star.post(`/v2/users/${s.user.id}/status-records/attach`, { resources: { [s.active.id]: { text: "Joined" } } });
}, 60_000);
afterAll(() => h?.close());

describe("REST: an include needs the related resource's view scope", () => {
  /**
   * `missing`: what each refusal names, in order, as the key gains the scopes named before: a 403 names the scopes of
   * the first field it reaches that the key may not read (the outer relation before the one inside it).
   */
  const cases = [
    {
      name: "/users?include=rank_records",
      url: () => `/v2/users?include=rank_records`,
      own: "view:user",
      missing: [["view:rankrecord"]],
    },
    {
      name: "/users/{user}?include=rank",
      url: () => `/v2/users/${s.user.id}?include=rank`,
      own: "view:user",
      missing: [["view:rank"]],
    },
    {
      name: "/users?include=rank.image",
      url: () => `/v2/users?include=rank.image`,
      own: "view:user",
      missing: [["view:rank"], ["view:image"]],
    },
    { name: "/ranks?include=image", url: () => `/v2/ranks?include=image`, own: "view:rank", missing: [["view:image"]] },
    {
      name: "/forms/{form}?include=fields",
      url: () => `/v2/forms/${s.form.id}?include=fields`,
      own: "view:form",
      missing: [["view:field"]],
    },
    {
      name: "/images/{image}?include=model (polymorphic: every owner type)",
      url: () => `/v2/images/${rankImageId}?include=model`,
      own: "view:image",
      missing: [
        ["view:award", "view:document", "view:event", "view:group", "view:qualification", "view:rank", "view:unit"],
      ],
    },
    {
      name: "/users/{user}/rank-records?include=rank,author,document",
      url: () => `/v2/users/${s.user.id}/rank-records?include=rank,author,document`,
      own: "view:rankrecord view:user",
      missing: [["view:document"], ["view:rank"]],
    },
  ];
  test.each(cases)(
    "$name: the parent's scopes alone are a 403 naming what is missing; with the related scopes, 200",
    async ({ url, own, missing }) => {
      const held = [own];
      for (const step of missing) {
        const refused = await (await keyed(held.join(" "))).get(url());
        expect(refused.status, JSON.stringify(refused.body)).toBe(403);
        expect(missingOf(refused)).toEqual(step);
        held.push(...step);
      }
      const granted = await (await keyed(held.join(" "))).get(url());
      expect(granted.status, JSON.stringify(granted.body)).toBe(200);
      expect(granted.body).toEqual(await star.get(url()).then((r) => r.body));
    },
  );

  test("the records are embedded for a key holding both scopes, and the narrow key gets no rows at all", async () => {
    const narrow = await (await keyed("view:user")).get("/v2/users?include=rank_records");
    expect(narrow.body.data).toBeUndefined();
    const both = await (await keyed("view:user view:rankrecord")).get("/v2/users?include=rank_records");
    const ann = both.body.data.find((u: { id: number }) => u.id === s.user.id);
    expect(ann.rank_records).toEqual([expect.objectContaining({ rank_id: s.corporal.id, text: "Promoted" })]);
  });

  test("the parent keeps its own check first: without its scope, PERSCOM's 403 as before, naming no relation", async () => {
    const r = await (await keyed("view:rankrecord")).get("/v2/users?include=rank_records");
    expect(r.status).toBe(403);
    expect(r.body.error.message).toBe(FORBIDDEN);
  });

  test("a polymorphic owner needs every owner type the include can return", async () => {
    const r = await (await keyed("view:comment")).get(`/v2/comments/${commentId}?include=commentable`);
    expect(missingOf(r)).toEqual([
      "view:assignmentrecord",
      "view:awardrecord",
      "view:combatrecord",
      "view:event",
      "view:qualificationrecord",
      "view:rankrecord",
      "view:servicerecord",
      "view:submission",
      "view:trainingrecord",
    ]);
    const owners = (missingOf(r) ?? []).join(" ");
    const ok = await (await keyed(`view:comment ${owners}`)).get(`/v2/comments/${commentId}?include=commentable`);
    expect(ok.status).toBe(200);
    expect(ok.body.data.commentable).toMatchObject({ text: "Promoted" });
  });

  test("a pivot accessor (status records' `record`) needs no scope beyond the route's", async () => {
    const r = await (await keyed("view:status view:user")).get(`/v2/users/${s.user.id}/status-records?include=record`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data[0].record).toMatchObject({ text: "Joined" });
  });

  test("a write whose include the key may not read is refused before anything is written", async () => {
    const before = await h.db.prisma.rank.count();
    const refused = await (await keyed("create:rank")).post("/v2/ranks?include=image", { name: "Sergeant" });
    expect(missingOf(refused)).toEqual(["view:image"]);
    expect(await h.db.prisma.rank.count()).toBe(before);
    const created = await (await keyed("create:rank view:image")).post("/v2/ranks?include=image", { name: "Sergeant" });
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({ name: "Sergeant", image: null });
    expect(await h.db.prisma.rank.count()).toBe(before + 1);
  });

  test("the verdict is the key's, not the prepared document's: the same route and include answer each key by its scopes", async () => {
    const narrow = await keyed("view:user");
    const wide = await keyed("view:user view:rank");
    expect((await narrow.get("/v2/users?include=rank")).status).toBe(403);
    expect((await wide.get("/v2/users?include=rank")).status).toBe(200);
    expect((await narrow.get("/v2/users?include=rank")).status).toBe(403);
    expect((await star.get("/v2/users?include=rank")).status).toBe(200);
  });
});

describe("GraphQL: a nested selection needs the related resource's view scope", () => {
  const errorsOf = (r: Reply) =>
    (r.body.errors ?? []).map((e: { extensions?: { code?: string }; path?: unknown; message: string }) => ({
      code: e.extensions?.code,
      path: e.path,
      message: e.message,
    }));
  const missing = (scope: string) => `${FORBIDDEN} Missing scope: ${scope}.`;
  const global = async (type: string, rowId: number) =>
    (await star.graphql(`{ ${type}(rowId: ${rowId}) { id } }`)).body.data[type].id as string;

  test("users { nodes { rankRecords } } with view:user only: FORBIDDEN on the relation field, with its path; with both scopes, data", async () => {
    const query = "{ users { nodes { rowId rankRecords { nodes { text } } } } }";
    const narrow = await (await keyed("view:user")).graphql(query);
    expect(errorsOf(narrow)).toEqual([
      { code: "FORBIDDEN", path: ["users", "nodes", "rankRecords"], message: missing("view:rankrecord") },
    ]);
    // The root field that reads it is null (and nothing of it ran); the response has data, so GraphQL over HTTP makes it a 200.
    expect(narrow.body.data).toEqual({ users: null });
    expect(narrow.status).toBe(200);
    const both = await (await keyed("view:user view:rankrecord")).graphql(query);
    expect(both.body.errors).toBeUndefined();
    expect(both.body.data.users.nodes.find((u: { rowId: number }) => u.rowId === s.user.id).rankRecords.nodes).toEqual([
      { text: "Promoted" },
    ]);
  });

  test("root fields are independent: the one reading a relation the key may not read is null and does not run, the others answer", async () => {
    const api = await keyed("view:user view:rank create:rank");
    const read = await api.graphql(
      "{ ranks { totalCount } users { nodes { rankRecords { totalCount } } } people: users { totalCount } }",
    );
    expect(errorsOf(read)).toEqual([
      { code: "FORBIDDEN", path: ["users", "nodes", "rankRecords"], message: missing("view:rankrecord") },
    ]);
    expect(read.status).toBe(200);
    const ranks = (await star.graphql("{ ranks { totalCount } }")).body.data.ranks;
    expect(read.body.data).toEqual({ ranks, users: null, people: { totalCount: 2 } });
    expect(Object.keys(read.body.data)).toEqual(["ranks", "users", "people"]);
    // A mutation whose payload reads what the key may not read is not run; the next one is.
    const before = await h.db.prisma.rank.count();
    const wrote = await api.graphql(`mutation {
      refused: createRank(input: { name: "Refused rank" }) { rank { name image { path } } }
      made: createRank(input: { name: "Made rank" }) { rank { name } }
    }`);
    expect(errorsOf(wrote)).toEqual([
      { code: "FORBIDDEN", path: ["refused", "rank", "image"], message: missing("view:image") },
    ]);
    expect(wrote.body.data).toEqual({ refused: null, made: { rank: { name: "Made rank" } } });
    expect(await h.db.prisma.rank.count()).toBe(before + 1);
    expect(await h.db.prisma.rank.count({ where: { name: "Refused rank" } })).toBe(0);
  });

  test("one error per relation read without its scope, at aliased paths and through named fragments", async () => {
    const query = `query Q { people: users { nodes { ...Person records: rankRecords { edges { node { rank { name } } } nodes { text } } } } }
      fragment Person on User { name rank { name } }`;
    const r = await (await keyed("view:user")).graphql(query);
    expect(
      errorsOf(r)
        .map((e: { path: string[]; message: string }) => [e.path.join("."), e.message.slice(FORBIDDEN.length + 1)])
        .sort(),
    ).toEqual([
      ["people.nodes.rank", "Missing scope: view:rank."],
      ["people.nodes.records", "Missing scope: view:rankrecord."],
      ["people.nodes.records.edges.node.rank", "Missing scope: view:rank."],
    ]);
    const ok = await (await keyed("view:user view:rank view:rankrecord")).graphql(query);
    expect(ok.body.errors).toBeUndefined();
    expect(ok.body.data.people.nodes.find((u: { name: string }) => u.name === "Ann Smith").records.edges).toEqual([
      { node: { rank: { name: "Corporal" } } },
    ]);
  });

  test.each([
    ["totalCount", "rankRecords { totalCount }"],
    ["pageInfo", "rankRecords { pageInfo { hasNextPage } }"],
    ["cursors", "rankRecords(orderBy: [{ text: asc }]) { edges { cursor } }"],
    ["__typename on the page", "rankRecords { __typename }"],
  ])(
    "a nested connection's page fields read the related rows (%s): FORBIDDEN without their scope",
    async (_what, selection) => {
      const query = `{ users { nodes { rowId ${selection} } } }`;
      const narrow = await (await keyed("view:user")).graphql(query);
      expect(errorsOf(narrow)).toEqual([
        { code: "FORBIDDEN", path: ["users", "nodes", "rankRecords"], message: missing("view:rankrecord") },
      ]);
      const both = await (await keyed("view:user view:rankrecord")).graphql(query);
      expect(both.body.errors).toBeUndefined();
      expect(both.body.data.users.nodes.find((u: { rowId: number }) => u.rowId === s.user.id).rankRecords).toBeTruthy();
    },
  );

  test("a many-to-many edge's link columns are a read of the related rows; the parent's own page fields need nothing more", async () => {
    const query = "query ($form: Int!) { form(rowId: $form) { name fields { edges { order } } } }";
    const narrow = await (await keyed("view:form")).graphql(query, { form: s.form.id });
    expect(errorsOf(narrow)).toEqual([{ code: "FORBIDDEN", path: ["form", "fields"], message: missing("view:field") }]);
    const both = await (await keyed("view:form view:field")).graphql(query, { form: s.form.id });
    expect(both.body.errors).toBeUndefined();
    expect(both.body.data.form.fields.edges).toEqual([{ order: 1 }, { order: 2 }]);
  });

  test("__typename alone on a related row is a read of it; on the parent, or with @skip(if: true) on the relation, no scope is needed", async () => {
    const api = await keyed("view:user");
    expect(errorsOf(await api.graphql("{ users { nodes { rank { __typename } } } }"))[0]).toMatchObject({
      code: "FORBIDDEN",
      path: ["users", "nodes", "rank"],
    });
    const fine = await api.graphql(
      "{ users { __typename edges { cursor node { __typename } } nodes { __typename id rank @skip(if: true) { name } rankRecords @skip(if: true) { totalCount } } } }",
    );
    expect(fine.body.errors).toBeUndefined();
    expect(fine.body.data.users.nodes.length).toBeGreaterThan(0);
  });

  test("the parent's computed fields (a user's last rank change date) and its own page fields need no related scope", async () => {
    const api = await keyed("view:user");
    const r = await api.graphql(
      "{ users { totalCount pageInfo { hasNextPage endCursor } nodes { rowId lastRankChangeDate } } }",
    );
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.users.totalCount).toBe(2);
    const ann = r.body.data.users.nodes.find((u: { rowId: number }) => u.rowId === s.user.id);
    expect(ann.lastRankChangeDate).toEqual(expect.any(String));
    // REST reads the same computed field through its internal-schema document.
    const rest = await api.get(`/v2/users/${s.user.id}`);
    expect(Date.parse(rest.body.data.last_rank_change_date)).toBe(Date.parse(ann.lastRankChangeDate));
  });

  test("a polymorphic owner: only the member types the inline fragments select", async () => {
    const doc = "query ($id: Int!) { comment(rowId: $id) { commentable { ... on RankRecord { text } } } }";
    const onlyComment = await (await keyed("view:comment")).graphql(doc, { id: commentId });
    expect(errorsOf(onlyComment)).toEqual([
      { code: "FORBIDDEN", path: ["comment", "commentable"], message: missing("view:rankrecord") },
    ]);
    const withRecords = await (await keyed("view:comment view:rankrecord")).graphql(doc, { id: commentId });
    expect(withRecords.body.errors).toBeUndefined();
    expect(withRecords.body.data.comment.commentable).toEqual({ text: "Promoted" });
    // `__typename` on the union itself tells which kind of owner it is: every member's scope.
    const typename = await (
      await keyed("view:comment view:rankrecord")
    ).graphql(`query ($id: Int!) { comment(rowId: $id) { commentable { __typename } } }`, { id: commentId });
    expect(errorsOf(typename)[0].message).toContain("view:submission");
  });

  test("node(id:) reads the row's type: FORBIDDEN (or null) for a type the key may not view, never the row", async () => {
    const rank = await global("rank", s.private_.id);
    const user = await global("user", s.user.id);
    const users = await keyed("view:user");
    // The fragment names a type the key may not view: refused before anything runs.
    const asRank = await users.graphql("query ($id: ID!) { node(id: $id) { ... on Rank { name } } }", { id: rank });
    expect(errorsOf(asRank)).toEqual([{ code: "FORBIDDEN", path: ["node"], message: missing("view:rank") }]);
    expect(JSON.stringify(asRank.body)).not.toContain("Private");
    // A bare `id` (a Relay refetch) needs no scope of its own: the row is read only if the key may view its type.
    const bare = await users.graphql("query ($id: ID!) { node(id: $id) { id __typename } }", { id: user });
    expect(bare.body).toEqual({ data: { node: { id: user, __typename: "User" } } });
    const bareRank = await users.graphql("query ($ids: [ID!]!) { nodes(ids: $ids) { id } }", { ids: [rank, user] });
    expect(bareRank.body).toEqual({ data: { nodes: [null, { id: user }] } });
    // Its own type reads as usual.
    const own = await users.graphql("query ($id: ID!) { node(id: $id) { ... on User { rowId name } } }", { id: user });
    expect(own.body).toEqual({ data: { node: { rowId: s.user.id, name: "Ann Smith" } } });
    // The id is a user's, the selection only a rank's: the row is not read for a key without view:user.
    const ranks = await keyed("view:rank");
    const disguised = await ranks.graphql(
      "query ($id: ID!) { node(id: $id) { ... on Rank { name } ... on User { name } } }",
      { id: user },
    );
    expect(errorsOf(disguised)[0]).toMatchObject({ code: "FORBIDDEN", path: ["node"] });
    const fragmentOnly = await ranks.graphql("query ($id: ID!) { node(id: $id) { ... on Rank { name } } }", {
      id: user,
    });
    expect(fragmentOnly.body.data?.node ?? null).toBeNull();
    expect(
      errorsOf(fragmentOnly)
        .map((e: { code: string }) => e.code)
        .filter((c: string) => c !== "FORBIDDEN"),
    ).toEqual([]);
    const many = await ranks.graphql("query ($ids: [ID!]!) { nodes(ids: $ids) { ... on Rank { name } } }", {
      ids: [rank, user],
    });
    expect(JSON.stringify(many.body)).not.toContain("Ann Smith");
    expect(
      errorsOf(many)
        .map((e: { code: string }) => e.code)
        .filter((c: string) => c !== "FORBIDDEN"),
    ).toEqual([]);
    expect(
      (await ranks.graphql("query ($id: ID!) { node(id: $id) { ... on Rank { name } } }", { id: rank })).body,
    ).toEqual({ data: { node: { name: "Private" } } });
  });

  test("the same document sent by a key that may filter through a relation, then by one that may not: refused the second time", async () => {
    // One parsed document serves every request that sends it: what a nested connection checks must be checked again.
    const query =
      'query Same { users { nodes { rowId rankRecords(where: { rank: { is: { name: { equals: "Private" } } } }) { totalCount } } } }';
    const all = await keyed("*");
    const allowed = await all.graphql(query);
    expect(allowed.body.errors).toBeUndefined();
    const limited = await keyed("view:user view:rankrecord");
    const refused = await limited.graphql(query);
    const errors = refused.body.errors as Array<{ extensions: { code: string }; message: string }>;
    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) expect(error.extensions.code).toBe("FORBIDDEN");
    expect(errors[0].message).toContain("view:rank");
    for (const user of refused.body.data.users.nodes) expect(user.rankRecords).toBeNull();
  });

  test("filtering or sorting through a relation needs the related resource's view scope", async () => {
    const cases: Array<[string, string, string]> = [
      [
        'users(where: { rank: { is: { name: { equals: "Private" } } } }) { nodes { rowId } }',
        "view:rank",
        "where.rank",
      ],
      [
        'users(where: { rankRecords: { some: { text: { equals: "Promoted" } } } }) { nodes { rowId } }',
        "view:rankrecord",
        "where.rankRecords",
      ],
      ["users(orderBy: [{ rank: { order: desc } }]) { nodes { rowId } }", "view:rank", "orderBy.0.rank"],
      [
        'rankRecords(where: { user: { is: { name: { equals: "Ann Smith" } } } }) { nodes { text } }',
        "view:user",
        "where.user",
      ],
    ];
    for (const [field, scope, at] of cases) {
      const own = field.startsWith("users") ? "view:user" : "view:rankrecord";
      const refused = await (await keyed(own)).graphql(`{ ${field} }`);
      const [error, ...more] = errorsOf(refused);
      expect(more, field).toEqual([]);
      expect(error, field).toMatchObject({ code: "FORBIDDEN", path: [field.split("(")[0]] });
      expect(error.message, field).toContain(scope);
      expect(error.message, field).toContain(at);
      expect(refused.body.data?.[field.split("(")[0]] ?? null, field).toBeNull();
      const allowed = await (await keyed(`${own} ${scope}`)).graphql(`{ ${field} }`);
      expect(allowed.body.errors, field).toBeUndefined();
    }
    // The promotion made Ann a corporal.
    const filtered = await (
      await keyed("view:user view:rank")
    ).graphql('{ users(where: { rank: { is: { name: { equals: "Corporal" } } } }) { nodes { rowId } } }');
    expect(filtered.body.data.users.nodes).toEqual([{ rowId: s.user.id }]);
    // A nested connection's filter is checked the same way.
    const nested = await (
      await keyed("view:user view:rankrecord")
    ).graphql(
      '{ users { nodes { rankRecords(where: { rank: { is: { name: { equals: "Corporal" } } } }) { nodes { text } } } } }',
    );
    expect(errorsOf(nested)[0]).toMatchObject({ code: "FORBIDDEN" });
    expect(errorsOf(nested)[0].message).toContain("view:rank");
    expect(JSON.stringify(nested.body.data ?? null)).not.toContain("Promoted");
  });

  test("a key without the root field's own scope gets the root field's FORBIDDEN, unchanged, and the other root fields their data", async () => {
    const r = await (await keyed("view:rank")).graphql("{ users { nodes { rank { name } } } ranks { totalCount } }");
    expect(errorsOf(r)).toEqual([{ code: "FORBIDDEN", path: ["users"], message: FORBIDDEN }]);
    expect(r.status).toBe(200);
    const ranks = (await star.graphql("{ ranks { totalCount } }")).body.data.ranks;
    expect(ranks.totalCount).toBeGreaterThan(0);
    expect(r.body.data).toEqual({ users: null, ranks });
  });

  test("a * key reads every relation", async () => {
    const r = await star.graphql(
      "{ users { nodes { rank { image { rowId } } rankRecords { totalCount nodes { rank { name } } } } } }",
    );
    expect(r.body.errors).toBeUndefined();
    expect(
      r.body.data.users.nodes.find((u: { rankRecords: { totalCount: number } }) => u.rankRecords.totalCount === 1)
        .rankRecords.nodes,
    ).toEqual([{ rank: { name: "Corporal" } }]);
  });
});

describe("the scopes a full-sync client needs", () => {
  test("README lists exactly the registry's view scopes", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const block = /<!-- full-sync-scopes -->\n([\s\S]*?)\n<!-- \/full-sync-scopes -->/.exec(readme)?.[1] ?? "";
    const expected = relationViewScopes();
    // The line to paste when the registry changes.
    if (block !== `\`${expected.join(" ")}\``)
      console.log(`README full-sync scopes should read:\n\`${expected.join(" ")}\``);
    expect(block.match(/view:[a-z_]+/g)).toEqual(expected);
    expect(expected).toEqual(
      [...new Set(operations.filter((op) => op.root === "query").flatMap((op) => op.scopes))].sort(),
    );
  });

  test("a key holding exactly those scopes reads every GET route with every include it allows", async () => {
    const w = await new World(h, "beta", "betamark").seed();
    const sync = await w.client(relationViewScopes().join(" "));
    const refused: string[] = [];
    let requests = 0;
    for (const op of operations.filter((o) => o.method === "GET")) {
      const values = op.includes.filter((i) => i.split(".").length <= h.config.includeMaxDepth);
      // A few values per request keeps each one under the include count and query cost caps.
      for (let i = 0; i === 0 || i < values.length; i += 4) {
        const query = values.length ? `include=${encodeURIComponent(values.slice(i, i + 4).join(","))}` : "";
        const r = await sync.get(urlOf(await planValid(op, w, query)));
        requests++;
        if (r.status !== 200)
          refused.push(`${op.path}?${decodeURIComponent(query)} → ${r.status} ${r.body?.error?.message}`);
      }
    }
    expect(requests).toBeGreaterThan(operations.filter((o) => o.method === "GET").length);
    expect(refused).toEqual([]);
  }, 120_000);
});
