import { afterAll, beforeAll, expect, test } from "vitest";
import { startHarness, type Harness } from "./harness.ts";
import pkg from "../package.json" with { type: "json" };

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const get = (accept: string | null, method = "GET") =>
  h.app.yoga.fetch("http://muster.test/", { method, headers: accept === null ? {} : { accept } });

test("a browser gets a small page naming the service and version, linking the docs, GraphiQL, the OpenAPI document and health, and saying how to get a key", async () => {
  const answer = await get("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8");
  expect(answer.status).toBe(200);
  expect(answer.headers.get("content-type")).toMatch(/^text\/html/);
  expect(answer.headers.get("content-security-policy")).toContain("default-src 'none'");
  const html = await answer.text();
  expect(html).toContain("<title>Muster");
  expect(html).toContain(pkg.version);
  for (const href of ["/docs", "/graphql", "/openapi.json", "/health"]) expect(html).toContain(`href="${href}"`);
  expect(html).toContain("keys:create");
  expect(html).not.toMatch(/<script/i);
  // Every link the page offers answers without a key (GraphiQL: to a browser).
  for (const [, href] of html.matchAll(/href="([^"]+)"/g)) {
    const linked = await h.app.yoga.fetch(`http://muster.test${href}`, { headers: { accept: "text/html" } });
    expect(linked.status, href).toBe(200);
  }
});

test("an API client gets the same facts as JSON; no Accept header at all gets the page", async () => {
  const answer = await get("application/json");
  expect(answer.status).toBe(200);
  expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
  const body = await answer.json();
  expect(body).toMatchObject({ name: "Muster", version: pkg.version });
  expect(Object.values(body.links as Record<string, { href: string }>).map((l) => l.href)).toEqual(
    expect.arrayContaining(["/docs", "/graphql", "/openapi.json", "/health"]),
  );
  expect(body.authentication.get_a_key).toContain("keys:create");
  expect((await get(null)).headers.get("content-type")).toMatch(/^text\/html/);
  expect((await get("text/html, application/json")).headers.get("content-type")).toMatch(/^text\/html/);
});

test("HEAD answers headers only; other methods are 405 in PERSCOM's error shape", async () => {
  const head = await get("application/json", "HEAD");
  expect(head.status).toBe(200);
  expect(await head.text()).toBe("");
  const post = await get("application/json", "POST");
  expect(post.status).toBe(405);
  expect((await post.json()).error.type).toBeTruthy();
  expect(post.headers.get("allow")).toBe("GET, HEAD");
});
