import { afterAll, beforeAll, expect, test } from "vitest";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { client, startHarness, type Harness } from "./harness.ts";
import { negotiateEncoding } from "../src/http/compression.ts";

let h: Harness;
let key: string;
beforeAll(async () => {
  h = await startHarness();
  key = await h.key();
  const api = client(h, key);
  for (let i = 0; i < 20; i++)
    await api.post("/v2/ranks", {
      name: `Rank ${i}`,
      abbreviation: `R${i}`,
      description: "A rank of the test organisation. ".repeat(4),
    });
});
afterAll(() => h.close());

const get = (path: string, headers: Record<string, string> = {}) =>
  h.app.yoga.fetch(`http://muster.test${path}`, { headers: { authorization: `Bearer ${key}`, ...headers } });

const decode = (encoding: string | null, bytes: Buffer) =>
  encoding === "br" ? brotliDecompressSync(bytes) : encoding === "gzip" ? gunzipSync(bytes) : bytes;

test("JSON over 1 KB goes brotli- or gzip-encoded as the client accepts, and decodes to the same document", async () => {
  const plain = await get("/v2/ranks?limit=20");
  expect(plain.headers.get("content-encoding")).toBeNull();
  const text = await plain.text();
  expect(Buffer.byteLength(text)).toBeGreaterThan(1024);
  for (const [accept, expected] of [
    ["gzip, deflate, br", "br"],
    ["gzip", "gzip"],
    ["br;q=0, gzip", "gzip"],
    ["gzip;q=0.4, br;q=0.8", "br"],
  ] as const) {
    const answer = await get("/v2/ranks?limit=20", { "accept-encoding": accept });
    expect([accept, answer.headers.get("content-encoding")]).toEqual([accept, expected]);
    expect(answer.headers.get("vary")).toMatch(/Accept-Encoding/);
    const bytes = Buffer.from(await answer.arrayBuffer());
    expect(Number(answer.headers.get("content-length"))).toBe(bytes.length);
    expect(bytes.length).toBeLessThan(Buffer.byteLength(text) / 2);
    expect(JSON.parse(decode(expected, bytes).toString()).data).toEqual(JSON.parse(text).data);
  }
});

test("the OpenAPI document and GraphQL answers are compressed too; small bodies and unknown encodings go as they are", async () => {
  const openapi = await get("/openapi.json", { "accept-encoding": "br" });
  expect(openapi.headers.get("content-encoding")).toBe("br");
  expect(JSON.parse(decode("br", Buffer.from(await openapi.arrayBuffer())).toString()).openapi).toMatch(/^3\./);
  const graphql = await h.app.yoga.fetch("http://muster.test/graphql", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "accept-encoding": "gzip" },
    body: JSON.stringify({ query: "{ ranks(first: 20) { nodes { id rowId name description } } }" }),
  });
  expect(graphql.headers.get("content-encoding")).toBe("gzip");
  expect(JSON.parse(decode("gzip", Buffer.from(await graphql.arrayBuffer())).toString()).data.ranks.nodes).toHaveLength(
    20,
  );
  const health = await get("/health", { "accept-encoding": "gzip, br" });
  expect(health.headers.get("content-encoding")).toBeNull();
  expect(await health.json()).toEqual({ status: "ok" });
  expect(
    (await get("/v2/ranks?limit=20", { "accept-encoding": "compress, zstd" })).headers.get("content-encoding"),
  ).toBeNull();
});

test("GraphiQL is a small page whose pieces are separate files with content-hashed, year-long cacheable URLs, served compressed", async () => {
  const page = await h.app.yoga.fetch("http://muster.test/graphql", { headers: { accept: "text/html" } });
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html.length).toBeLessThan(10_000);
  const urls = [...html.matchAll(/(?:src|href)="(\/graphiql\/[^"]+)"/g)].map((m) => m[1]);
  const listed = Object.values<string>(JSON.parse(/id="graphiql-assets">([^<]*)</.exec(html)![1]));
  expect(new Set([...urls, ...listed]).size).toBeGreaterThanOrEqual(6);
  let total = 0;
  for (const url of new Set([...urls, ...listed])) {
    expect(url).toMatch(/^\/graphiql\/[0-9a-f]{16}\/[\w.]+$/);
    const asset = await h.app.yoga.fetch(`http://muster.test${url}`, { headers: { "accept-encoding": "br, gzip" } });
    expect([url, asset.status]).toEqual([url, 200]);
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const bytes = Buffer.from(await asset.arrayBuffer());
    if (!url.endsWith(".ico") && bytes.length > 1024)
      expect([url, asset.headers.get("content-encoding")]).toEqual([url, "br"]);
    total += decode(asset.headers.get("content-encoding"), bytes).length;
  }
  // The pieces add up to what the one inlined page used to be.
  expect(total).toBeGreaterThan(5_000_000);
  const missing = await h.app.yoga.fetch("http://muster.test/graphiql/0000000000000000/graphiql.js");
  expect(missing.status).toBe(404);
});

test("Accept-Encoding negotiation follows q-values, with brotli preferred on a tie", () => {
  expect(negotiateEncoding(null)).toBeNull();
  expect(negotiateEncoding("identity")).toBeNull();
  expect(negotiateEncoding("*")).toBe("br");
  expect(negotiateEncoding("*;q=0.5, br;q=0")).toBe("gzip");
  expect(negotiateEncoding("GZIP")).toBe("gzip");
  expect(negotiateEncoding("gzip;q=0, br;q=0")).toBeNull();
});
