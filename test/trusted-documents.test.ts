import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { generate } from "@graphql-codegen/cli";
import codegenConfig from "../codegen.ts";
import { CreateRankDocument, SearchUsersDocument, type TypedDocumentString } from "../src/generated/client/graphql.ts";
import { loadConfig } from "../src/core/config.ts";
import { trustedDocuments } from "../src/http/trusted-documents.ts";
import { client, seed, startHarness, type Harness, type Reply } from "./harness.ts";

/**
 * Trusted documents (src/http/trusted-documents.ts): the typed client's documents, listed by codegen in
 * schema/persisted-documents.json, run by `documentId`; GRAPHQL_TRUSTED_DOCUMENTS_ONLY refuses other documents to keys
 * without `graphql:arbitrary` (or `*`), and leaves REST alone.
 */

/** The id the client preset gave a document (`sha256:<hex>`), as a client sends it. */
const idOf = (document: Pick<TypedDocumentString<unknown, unknown>, "__meta__">) => document.__meta__!.hash as string;
const searchVariables = { where: { rank: { is: { name: { startsWith: "Priv" } } } }, orderBy: [{ name: "asc" }] };
const arbitraryQuery = "query { users(orderBy: [{ name: asc }]) { nodes { name } } }";

async function post(h: Harness, key: string | null, body: unknown): Promise<Reply> {
  const headers: Record<string, string> = { accept: "application/json", "content-type": "application/json" };
  if (key) headers.authorization = `Bearer ${key}`;
  const response = await h.app.yoga.fetch("http://muster.test/graphql", {
    method: "POST",
    headers,
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

async function get(h: Harness, key: string, params: Record<string, string>): Promise<Reply> {
  const response = await h.app.yoga.fetch(`http://muster.test/graphql?${new URLSearchParams(params)}`, {
    headers: { accept: "application/json", authorization: `Bearer ${key}` },
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

const code = (r: Reply) => r.body?.errors?.[0]?.extensions?.code;

test("the committed schema/persisted-documents.json is what codegen writes (run `npm run generate`)", async () => {
  const outputs = await generate({ ...codegenConfig, silent: true }, false);
  const manifest = outputs.find((o: { filename: string }) => o.filename.endsWith("persisted-documents.json"));
  expect(manifest, "codegen.ts writes persisted-documents.json").toBeDefined();
  expect(readFileSync("schema/persisted-documents.json", "utf8")).toBe(manifest!.content);
  // The typed client's ids are the manifest's keys.
  expect(trustedDocuments.get(idOf(SearchUsersDocument))).toContain("query SearchUsers");
});

test("GRAPHQL_TRUSTED_DOCUMENTS_ONLY is off by default and takes true/false only", () => {
  expect(loadConfig({}).graphqlTrustedDocumentsOnly).toBe(false);
  expect(loadConfig({ GRAPHQL_TRUSTED_DOCUMENTS_ONLY: "true" }).graphqlTrustedDocumentsOnly).toBe(true);
  expect(loadConfig({ GRAPHQL_TRUSTED_DOCUMENTS_ONLY: "0" }).graphqlTrustedDocumentsOnly).toBe(false);
  expect(() => loadConfig({ GRAPHQL_TRUSTED_DOCUMENTS_ONLY: "yes" })).toThrow(
    /GRAPHQL_TRUSTED_DOCUMENTS_ONLY must be true or false, got "yes"/,
  );
});

describe("with arbitrary documents allowed (the default)", () => {
  let h: Harness;
  let key: string;
  let narrow: string;
  beforeAll(async () => {
    h = await startHarness();
    key = await h.key();
    narrow = await h.key("alpha", "view:user view:rank");
    await seed(client(h, key));
  });
  afterAll(() => h.close());

  test("a manifest document sent by documentId answers what its text does (POST, GET, Apollo's extension)", async () => {
    const byText = await post(h, narrow, { query: SearchUsersDocument.toString(), variables: searchVariables });
    expect(byText.status).toBe(200);
    expect(byText.body.data.users.nodes.map((u: { name: string }) => u.name)).toEqual(["Ann Smith"]);

    const byId = await post(h, narrow, { documentId: idOf(SearchUsersDocument), variables: searchVariables });
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual(byText.body);

    const byGet = await get(h, narrow, {
      documentId: idOf(SearchUsersDocument),
      variables: JSON.stringify(searchVariables),
    });
    expect(byGet.body).toEqual(byText.body);

    const apollo = { persistedQuery: { version: 1, sha256Hash: idOf(SearchUsersDocument).replace(/^sha256:/, "") } };
    const byApollo = await post(h, narrow, { extensions: apollo, variables: searchVariables });
    expect(byApollo.body).toEqual(byText.body);
  });

  test("a mutation runs by documentId, and is scoped like its text", async () => {
    const created = await post(h, key, {
      documentId: idOf(CreateRankDocument),
      variables: { input: { name: "Major", abbreviation: "MAJ" } },
    });
    expect(created.status).toBe(200);
    expect(created.body.data.createRank.rank).toMatchObject({ name: "Major" });
    const refused = await post(h, narrow, {
      documentId: idOf(CreateRankDocument),
      variables: { input: { name: "Colonel", abbreviation: "COL" } },
    });
    expect(code(refused)).toBe("FORBIDDEN");
  });

  test("an unknown documentId is a 404 GraphQL error PERSISTED_QUERY_NOT_FOUND naming the id", async () => {
    const r = await post(h, key, { documentId: "sha256:0000", variables: {} });
    expect(r.status).toBe(404);
    expect(r.body.data).toBeUndefined();
    expect(r.body.errors).toHaveLength(1);
    expect(r.body.errors[0].message).toMatch(/^No trusted document has the id "sha256:0000"/);
    expect(r.body.errors[0].extensions).toMatchObject({
      code: "PERSISTED_QUERY_NOT_FOUND",
      status: 404,
      type: "NotFoundHttpException",
    });
    expect(r.body.errors[0].extensions.request_id).toBe(r.headers.get("x-perscom-request-id"));
    expect(r.body.errors[0].extensions.trace_id).toBe(r.headers.get("x-perscom-trace-id"));

    const long = await get(h, key, { documentId: "x".repeat(5000) });
    expect(long.status).toBe(404);
    expect(long.body.errors[0].message.length).toBeLessThan(300);
  });

  test("neither query nor documentId is a 400 saying what to send", async () => {
    const r = await post(h, key, { variables: {} });
    expect(r.status).toBe(400);
    expect(r.body.errors[0].extensions).toMatchObject({ code: "BAD_REQUEST", status: 400 });
    expect(r.body.errors[0].message).toMatch(/`query`.*`documentId`/);
  });

  test("any key may send an arbitrary document", async () => {
    const r = await post(h, narrow, { query: arbitraryQuery });
    expect(r.status).toBe(200);
    expect(r.body.data.users.nodes.map((u: { name: string }) => u.name)).toEqual(["Ann Smith", "Bob Jones"]);
  });
});

describe("with GRAPHQL_TRUSTED_DOCUMENTS_ONLY on", () => {
  let h: Harness;
  let all: string;
  let narrow: string;
  let arbitrary: string;
  let ids: Awaited<ReturnType<typeof seed>>;
  beforeAll(async () => {
    h = await startHarness({ graphqlTrustedDocumentsOnly: true });
    all = await h.key();
    narrow = await h.key("alpha", "view:user view:rank create:rank");
    arbitrary = await h.key("alpha", "view:user graphql:arbitrary");
    ids = await seed(client(h, all));
  });
  afterAll(() => h.close());

  test("a key without graphql:arbitrary sending a query text is refused with TRUSTED_DOCUMENTS_ONLY (403), by POST and GET", async () => {
    const r = await post(h, narrow, { query: arbitraryQuery });
    expect(r.status).toBe(403);
    expect(r.body.data).toBeUndefined();
    expect(r.body.errors).toHaveLength(1);
    expect(r.body.errors[0].extensions).toMatchObject({
      code: "TRUSTED_DOCUMENTS_ONLY",
      status: 403,
      type: "HttpException",
    });
    expect(r.body.errors[0].extensions.request_id).toBe(r.headers.get("x-perscom-request-id"));
    expect(r.body.errors[0].message).toMatch(
      /only trusted documents \(`documentId`.*graphql:arbitrary scope \(or \*\)/,
    );

    const viaGet = await get(h, narrow, { query: arbitraryQuery });
    expect(viaGet.status).toBe(403);
    expect(code(viaGet)).toBe("TRUSTED_DOCUMENTS_ONLY");
    // The text of a trusted document is refused too: the key sends ids.
    expect(code(await post(h, narrow, { query: SearchUsersDocument.toString(), variables: searchVariables }))).toBe(
      "TRUSTED_DOCUMENTS_ONLY",
    );
  });

  test("the same key's documentId runs, queries and mutations", async () => {
    const search = await post(h, narrow, { documentId: idOf(SearchUsersDocument), variables: searchVariables });
    expect(search.status).toBe(200);
    expect(search.body.data.users.nodes.map((u: { name: string }) => u.name)).toEqual(["Ann Smith"]);
    const created = await post(h, narrow, {
      documentId: idOf(CreateRankDocument),
      variables: { input: { name: "Major", abbreviation: "MAJ" } },
    });
    expect(created.body.data.createRank.rank).toMatchObject({ name: "Major" });
    const viaGet = await get(h, narrow, {
      documentId: idOf(SearchUsersDocument),
      variables: JSON.stringify(searchVariables),
    });
    expect(viaGet.body).toEqual(search.body);
  });

  test("keys with * or graphql:arbitrary send arbitrary documents (GraphiQL's introspection included)", async () => {
    for (const key of [all, arbitrary]) {
      const r = await post(h, key, { query: arbitraryQuery });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.data.users.nodes.map((u: { name: string }) => u.name)).toEqual(["Ann Smith", "Bob Jones"]);
    }
    const introspection = await post(h, arbitrary, {
      query: "query IntrospectionQuery { __schema { queryType { name } } }",
    });
    expect(introspection.body.data.__schema.queryType.name).toBe("Query");
  });

  test("a request without a usable key gets its usual 401, not a trusted-documents refusal", async () => {
    const keyless = await post(h, null, { query: arbitraryQuery });
    expect(keyless.status).toBe(401);
    expect(code(keyless)).toBe("UNAUTHENTICATED");
    expect(code(await post(h, "mst_not-a-key", { query: arbitraryQuery }))).toBe("UNAUTHENTICATED");
  });

  test("REST routes keep working for a key without graphql:arbitrary", async () => {
    const api = client(h, narrow);
    const users = await api.get("/v2/users?include=rank");
    expect(users.status).toBe(200);
    expect(users.body.data.map((u: { name: string }) => u.name).sort()).toEqual(["Ann Smith", "Bob Jones"]);
    const one = await api.get(`/v2/users/${ids.user.id}`);
    expect(one.status).toBe(200);
    expect(one.body.data.name).toBe("Ann Smith");
    const search = await api.post("/v2/users/search", {
      filters: [{ field: "name", operator: "like", value: "Bob%" }],
    });
    expect(search.status).toBe(200);
    expect(search.body.data.map((u: { name: string }) => u.name)).toEqual(["Bob Jones"]);
    const rank = await api.post("/v2/ranks", { name: "Captain", abbreviation: "CPT" });
    expect(rank.status).toBe(200);
    expect(rank.body.data.name).toBe("Captain");
    const forbidden = await api.delete(`/v2/ranks/${rank.body.data.id}`);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.type).toBe("HttpException");
  });
});
