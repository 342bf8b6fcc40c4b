import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { readFileSync } from "node:fs";
import { parse } from "graphql";
import { client, seed, startHarness, type Client, type Harness } from "./harness.ts";
import { getSchema, getSchemas } from "../src/server/app.ts";
import { printedSchema } from "../src/graphql/schema.ts";
import { operations } from "../src/resources/operations.ts";
import { DocumentCache } from "../src/rest/documents.ts";
import type { UserRankRecordsQuery, UserRankRecordsQueryVariables } from "../src/generated/graphql.ts";

let h: Harness;
let api: Client;
let s: Awaited<ReturnType<typeof seed>>;

beforeAll(async () => {
  h = await startHarness({ maxPageSize: 100 });
  api = client(h, await h.key("alpha", "*"));
  s = await seed(api);
  for (let i = 0; i < 60; i++) {
    await api.post(`/v2/users/${s.user.id}/rank-records`, {
      rank_id: i % 2 ? s.corporal.id : s.private_.id,
      type: i % 4,
      text: `record ${i}`,
      document_id: s.document.id,
      created_at: "2024-05-01T13:45:12.123456Z",
    });
  }
  const records = (await api.get(`/v2/users/${s.user.id}/rank-records?limit=100`)).body.data;
  for (const record of records.slice(0, 40)) {
    await api.post("/v2/comments", {
      comment: `on ${record.id}`,
      model_type: "App\\Models\\RankRecord",
      model_id: record.id,
    });
  }
  const upload = new FormData();
  upload.set("name", "Badge");
  upload.set("image", new Blob([Buffer.from("89504e470d0a1a0a", "hex")], { type: "image/png" }), "b.png");
  const image = await api.post(`/v2/qualifications/${s.qualification.id}/image`, {
    name: "Badge",
    image: `data:image/png;base64,${Buffer.from("89504e470d0a1a0a", "hex").toString("base64")}`,
  });
  expect(image.status).toBe(200);
});
afterAll(() => h.close());

/** A rank record as REST lists it with its rank (and image) and author. */
interface RestRecord {
  id: number;
  text: string;
  type: number;
  created_at: string;
  rank?: { name: string; image?: { path: string } | null } | null;
  author?: { name: string } | null;
}

describe("schema", () => {
  test("the committed schema/schema.graphql is up to date (run `npm run generate`)", () => {
    expect(readFileSync("schema/schema.graphql", "utf8")).toBe(printedSchema(getSchema()));
  });
  test("every route's document is valid with no include and with all its includes", () => {
    // REST documents are validated and run against the internal schema (they select `attributes`).
    const cache = new DocumentCache(getSchemas().internal);
    for (const op of operations) {
      expect(() => cache.get(op, [])).not.toThrow();
      if (op.returns !== "changes") expect(() => cache.get(op, [...op.includes].sort()), op.field).not.toThrow();
    }
  });
});

describe("pagination", () => {
  test("limit above the maximum is served as the maximum; links keep limit and include", async () => {
    const r = await api.get(`/v2/users/${s.user.id}/rank-records?limit=1000&include=rank`);
    expect(r.status).toBe(200);
    expect(r.body.meta).toMatchObject({ per_page: 100, total: 60, last_page: 1, from: 1, to: 60 });
    const p2 = await api.get(`/v2/users/${s.user.id}/rank-records?limit=25&page=2&include=rank`);
    expect(p2.body.meta).toMatchObject({ current_page: 2, from: 26, to: 50, last_page: 3, per_page: 25 });
    const next = new URL(p2.body.links.next);
    expect(Object.fromEntries(next.searchParams)).toEqual({ include: "rank", limit: "25", page: "3" });
    expect(p2.body.links.prev).toContain("page=1");
    expect(p2.body.meta.path).toBe(`http://muster.test/v2/users/${s.user.id}/rank-records`);
  });
  test("non-numeric, zero or negative page and limit are 422", async () => {
    for (const q of ["limit=abc", "limit=0", "limit=-5", "page=0", "page=x"]) {
      const r = await api.get(`/v2/comments?${q}`);
      expect([q, r.status, r.body.error.type]).toEqual([q, 422, "ValidationException"]);
    }
  });
  test("paging walks every record exactly once, even when ordering values tie", async () => {
    const seen: number[] = [];
    for (let page = 1; page <= 7; page++)
      seen.push(
        ...(await api.get(`/v2/users/${s.user.id}/rank-records?limit=9&page=${page}`)).body.data.map(
          (r: { id: number }) => r.id,
        ),
      );
    expect(seen).toHaveLength(60);
    expect(new Set(seen).size).toBe(60);
  });
});

describe("request handling", () => {
  test("v1 behaves as v2; any other version is 400 listing v1, v2", async () => {
    const [v1, v2] = [(await api.get("/v1/ranks")).body, (await api.get("/v2/ranks")).body];
    expect(v1.data).toEqual(v2.data);
    expect(v1.meta.path).toBe("http://muster.test/v1/ranks");
    const r = await api.get("/v9/ranks");
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain("v1, v2");
  });
  test("unknown routes and non-numeric ids are 404 in the error shape", async () => {
    // `/` is the front door (test/front-door.test.ts), not a route.
    for (const url of ["/v2/nothing", "/v2/ranks/abc", "/v2", "/v2/ranks/1/unknown"]) {
      const r = await api.get(url);
      expect([url, r.status, r.body.error.type]).toEqual([url, 404, "NotFoundHttpException"]);
    }
  });
  test("malformed JSON is 400, a non-object body 422, never 500", async () => {
    const bad = await client(h, await h.key("alpha", "*"), { "content-type": "application/json" }).send(
      "POST",
      "/v2/ranks",
      "{not json",
    );
    expect(bad.status).toBe(400);
    // The same text without a JSON content type is not read as JSON at all.
    expect((await api.send("POST", "/v2/ranks", "{not json")).status).toBe(415);
    const arr = await api.post("/v2/ranks", [1, 2]);
    expect(arr.status).toBe(422);
  });
  test("read-only attributes, relation objects and unknown keys are ignored; timestamps are writable", async () => {
    const r = await api.post("/v2/ranks", {
      name: "Sergeant",
      id: 999,
      label: "x",
      image: { id: 3 },
      bogus: true,
      created_at: "2020-01-02T03:04:05.123456Z",
      updated_at: "2020-01-02 03:04:05",
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      name: "Sergeant",
      created_at: "2020-01-02T03:04:05.123000Z",
      updated_at: "2020-01-02T03:04:05.000000Z",
    });
    expect(r.body.data.id).not.toBe(999);
    expect(r.body.data).not.toHaveProperty("bogus");
    expect((await api.post("/v2/ranks", { name: "X", created_at: "yesterday" })).status).toBe(422);
  });
  test("PUT is PATCH, and PHP-style _method spoofing is honoured", async () => {
    expect((await api.put(`/v2/ranks/${s.private_.id}`, { paygrade: "E-1" })).body.data.paygrade).toBe("E-1");
    const form = new FormData();
    form.set("_method", "PUT");
    form.set("paygrade", "E-2");
    expect((await api.post(`/v2/ranks/${s.private_.id}`, form)).body.data.paygrade).toBe("E-2");
  });
  test("an image given as a data: URI is stored and downloadable", async () => {
    const q = (await api.get(`/v2/qualifications/${s.qualification.id}?include=image`)).body.data;
    expect(q.image.image_url).toMatch(/^http:\/\/muster\.test\/files\/images\/.+\.png$/);
    expect((await h.app.yoga.fetch(q.image.image_url)).headers.get("content-type")).toBe("image/png");
    const again = await api.post(`/v2/qualifications/${s.qualification.id}/image`, {
      name: "Second",
      image: "data:image/png;base64,iVBORw0K",
    });
    expect(again.status).toBe(409);
    expect(
      (await api.post(`/v2/qualifications/${s.qualification.id}/image`, { name: "x", image: "data:text/plain,hello" }))
        .status,
    ).toBe(409);
  });
});

describe("SQL statements do not grow with the page size", () => {
  const count = async (url: string) => {
    const before = h.db.statements.count;
    const r = await api.get(url);
    expect(r.status).toBe(200);
    return { statements: h.db.statements.count - before, rows: r.body.data.length };
  };
  test("GET /users/{user}/rank-records with every include", async () => {
    const all = "attachments,author,author.*,comments,comments.*,document,rank,rank.image";
    const small = await count(`/v2/users/${s.user.id}/rank-records?include=${all}&limit=5`);
    const large = await count(`/v2/users/${s.user.id}/rank-records?include=${all}&limit=50`);
    expect([small.rows, large.rows]).toEqual([5, 50]);
    expect(large.statements).toBe(small.statements);
  });
  test("GET /comments with every include", async () => {
    const small = await count("/v2/comments?include=author,commentable&limit=5");
    const large = await count("/v2/comments?include=author,commentable&limit=40");
    expect([small.rows, large.rows]).toEqual([5, 40]);
    expect(large.statements).toBe(small.statements);
  });
});

describe("REST and GraphQL agree", () => {
  test("the same rank records through both, with a typed GraphQL document", async () => {
    const rest = await api.get(`/v2/users/${s.user.id}/rank-records?include=rank.image,author&limit=20&page=2`);
    const document = readFileSync("test/operations/rank-records.graphql", "utf8");
    parse(document);
    const query = (variables: UserRankRecordsQueryVariables) =>
      api.send("POST", "/graphql", { query: document, operationName: "UserRankRecords", variables });
    // REST's page 2 of 20 is `offset: 20, first: 20`, and the page after the first 20 by cursor.
    const byOffset = await query({ user: s.user.id, offset: 20, first: 20 });
    expect(byOffset.status).toBe(200);
    const pageOne = (await query({ user: s.user.id, first: 20 })).body.data as UserRankRecordsQuery;
    const byCursor = await query({ user: s.user.id, first: 20, after: pageOne.user!.rankRecords!.pageInfo.endCursor });
    const types = ["PROMOTION", "DEMOTION", "LATERAL", "TRANSFER"];
    const expected = rest.body.data.map((r: RestRecord) => [
      r.id,
      r.text,
      types[r.type],
      r.created_at,
      r.rank?.name,
      r.rank?.image?.path ?? null,
      r.author?.name,
    ]);
    expect(expected).toHaveLength(20);
    for (const gql of [byOffset, byCursor]) {
      const data = gql.body.data as UserRankRecordsQuery;
      expect(data.user!.rowId).toBe(s.user.id);
      expect(data.user!.rankRecords!.totalCount).toBe(rest.body.meta.total);
      expect(data.user!.rankRecords!.pageInfo.hasNextPage).toBe(true);
      expect(
        data.user!.rankRecords!.nodes.map((n) => [
          n.rowId,
          n.text,
          n.type,
          n.createdAt,
          n.rank?.name,
          n.rank?.image?.path ?? null,
          n.author?.name,
        ]),
      ).toEqual(expected);
    }
  });
  test("GraphQL errors carry the same code, status and request ids", async () => {
    const r = await api.graphql("mutation { deleteRank(rowId: 999999) { rank { id } } }");
    expect(r.status).toBe(200);
    expect(r.body.errors[0].extensions).toMatchObject({
      code: "NOT_FOUND",
      status: 404,
      type: "NotFoundHttpException",
      request_id: expect.any(String),
    });
    const anonymous = await client(h, null).graphql("query { ranks { totalCount } }");
    expect(anonymous.body.errors[0].extensions.code).toBe("UNAUTHENTICATED");
  });
});

describe("GraphiQL", () => {
  test("is served at /graphql from installed packages, with no external scripts or styles", async () => {
    const r = await h.app.yoga.fetch("http://muster.test/graphql", { headers: { accept: "text/html" } });
    expect(r.status).toBe(200);
    const html = await r.text();
    expect(html).toContain("<title>Muster GraphQL</title>");
    expect(html).not.toMatch(/<(script|link)[^>]+(src|href)=["']?https?:/i);
    // The options go as JSON in the page (\u003c keeps "<" from closing the script element).
    expect(html).toContain("Bearer \\u003cyour API key>");
    for (const [, src] of html.matchAll(/(?:src|href)="([^"]+)"/g)) expect(src).toMatch(/^\/graphiql\//);
  });
});
