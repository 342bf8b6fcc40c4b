import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { loadConfig } from "../src/core/config.ts";
import { client, startHarness, type Harness, type Reply } from "./harness.ts";
import { createApiKey } from "../src/auth/accounts.ts";

const LIMIT = 5;
const THROTTLED = "You have exceeded the API rate limit. Please wait a minute before trying again.";

/** Headers every response of a limited request carries. */
function expectHeaders(reply: Reply, remaining: number) {
  expect(reply.headers.get("x-ratelimit-limit")).toBe(String(LIMIT));
  expect(reply.headers.get("x-ratelimit-remaining")).toBe(String(remaining));
}

function expectThrottled(reply: Reply) {
  expect(reply.status).toBe(429);
  expect(reply.body).toEqual({
    error: {
      message: THROTTLED,
      type: "ThrottleRequestsException",
      request_id: expect.any(String),
      trace_id: expect.any(String),
    },
  });
  expect(reply.body.error.request_id).toBe(reply.headers.get("x-perscom-request-id"));
  expectHeaders(reply, 0);
  const retryAfter = Number(reply.headers.get("retry-after"));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  const reset = Number(reply.headers.get("x-ratelimit-reset"));
  expect(Math.abs(reset - (Math.floor(Date.now() / 1000) + retryAfter))).toBeLessThanOrEqual(2);
}

describe("rate limits", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ rateLimitPerMinute: LIMIT });
  });
  afterAll(() => h.close());

  test("RATE_LIMIT_PER_MINUTE sets the allowance; 1000 by default", () => {
    expect(loadConfig({}).rateLimitPerMinute).toBe(1000);
    expect(loadConfig({ RATE_LIMIT_PER_MINUTE: "60" }).rateLimitPerMinute).toBe(60);
    expect(() => loadConfig({ RATE_LIMIT_PER_MINUTE: "0" })).toThrow();
  });

  test("every response carries the allowance and what is left of it, success or error, REST or GraphQL", async () => {
    const api = client(h, await h.key("headers"));
    const created = await api.post("/v2/ranks", { name: "Private" });
    expect(created.status).toBe(200);
    expectHeaders(created, LIMIT - 1);
    expect(created.headers.get("retry-after")).toBeNull();
    expect(created.headers.get("x-ratelimit-reset")).toBeNull();
    const missing = await api.get("/v2/ranks/999999");
    expect(missing.status).toBe(404);
    expectHeaders(missing, LIMIT - 2);
    const invalid = await api.post("/v2/ranks", {});
    expect(invalid.status).toBe(422);
    expectHeaders(invalid, LIMIT - 3);
    // Answered before any root field runs: the allowance is reported, not consumed.
    for (const url of ["/v2/no-such-route", "/v9/ranks", "/v2/ranks?include=nonsense"]) {
      const r = await api.get(url);
      expect(r.status, url).toBeGreaterThanOrEqual(400);
      expectHeaders(r, LIMIT - 3);
    }
    const syntax = await api.graphql("{ ranks { nodes { id ");
    // GraphQL over HTTP: a document that does not parse is a 200 under Accept: application/json, with no data.
    expect(syntax.status).toBe(200);
    expect(syntax.body.data).toBeUndefined();
    expectHeaders(syntax, LIMIT - 3);
    const ok = await api.graphql("{ ranks { nodes { id name } } }");
    expect(ok.status).toBe(200);
    expect(ok.body.data.ranks.nodes).toHaveLength(1);
    expectHeaders(ok, LIMIT - 4);
    const forbidden = await client(h, await h.key("headers", "view:user")).get("/v2/ranks");
    expect(forbidden.status).toBe(403);
    expectHeaders(forbidden, LIMIT - 1);
  });

  test(`request ${LIMIT + 1} in a minute is a 429 with PERSCOM's body, Retry-After and X-RateLimit-Reset`, async () => {
    const api = client(h, await h.key("throttled"));
    for (let i = 1; i <= LIMIT; i++) {
      const r = await api.get("/v2/ranks");
      expect(r.status).toBe(200);
      expectHeaders(r, LIMIT - i);
    }
    expectThrottled(await api.get("/v2/ranks"));
    expectThrottled(await api.post("/v2/ranks", { name: "Too late" }));
    expectThrottled(await api.get("/v1/ranks/1"));
    const graphql = await api.graphql("{ ranks { nodes { id } } }");
    // The refused root field is null and its error says 429 (the response has data: GraphQL over HTTP makes it a 200).
    expect(graphql.status).toBe(200);
    expect(graphql.body.data).toEqual({ ranks: null });
    expect(graphql.body.errors[0]).toMatchObject({
      message: THROTTLED,
      path: ["ranks"],
      extensions: { code: "RATE_LIMITED", status: 429, type: "ThrottleRequestsException" },
    });
    expect(graphql.headers.get("retry-after")).toMatch(/^\d+$/);
    expectHeaders(graphql, 0);
    // Nothing ran: the refused write left no rank behind.
    const other = client(h, await h.key("throttled"));
    expect((await other.get("/v2/ranks")).body.data.map((r: { name: string }) => r.name)).not.toContain("Too late");
  });

  test("each API key has its own allowance", async () => {
    const a = client(h, await h.key("separate-a"));
    const b = client(h, await h.key("separate-a"));
    const c = client(h, await h.key("separate-b"));
    for (let i = 0; i < LIMIT; i++) expect((await a.get("/v2/ranks")).status).toBe(200);
    expect((await a.get("/v2/ranks")).status).toBe(429);
    const fromB = await b.get("/v2/ranks");
    expect(fromB.status).toBe(200);
    expectHeaders(fromB, LIMIT - 1);
    const fromC = await c.get("/v2/ranks");
    expect(fromC.status).toBe(200);
    expectHeaders(fromC, LIMIT - 1);
  });

  test("REST and /graphql draw on one allowance", async () => {
    const api = client(h, await h.key("shared"));
    expect((await api.get("/v2/ranks")).status).toBe(200);
    expectHeaders(await api.graphql("{ ranks { nodes { id } } }"), LIMIT - 2);
    expectHeaders(await api.post("/v2/ranks", { name: "Corporal" }), LIMIT - 3);
    const created = await api.graphql('mutation { createRank(input: { name: "Sergeant" }) { rank { rowId name } } }');
    expect(created.body).toEqual({ data: { createRank: { rank: { rowId: expect.any(Number), name: "Sergeant" } } } });
    expectHeaders(created, LIMIT - 4);
    expectHeaders(await api.get("/v2/ranks"), 0);
    expectThrottled(await api.get("/v2/ranks"));
    expect((await api.graphql("{ ranks { nodes { id } } }")).body.errors[0].extensions.code).toBe("RATE_LIMITED");
  });

  test("a GraphQL document pays for each of its root fields, so aliases do not multiply the allowance", async () => {
    const api = client(h, await h.key("aliases"));
    const three = await api.graphql("{ a: ranks { totalCount } b: ranks { totalCount } c: statuses { totalCount } }");
    expect(three.status).toBe(200);
    expect(Object.keys(three.body.data)).toEqual(["a", "b", "c"]);
    expectHeaders(three, LIMIT - 3);
    // Two fields left in the allowance, three asked: the third is refused, the first two answered.
    const over = await api.graphql("{ a: ranks { totalCount } b: ranks { totalCount } c: ranks { totalCount } }");
    expect(over.status).toBe(200);
    expect(over.body.data).toEqual({ a: { totalCount: 0 }, b: { totalCount: 0 }, c: null });
    expect(
      over.body.errors.map((e: { path: string[]; extensions: { code: string } }) => [e.path, e.extensions.code]),
    ).toEqual([[["c"], "RATE_LIMITED"]]);
    expectHeaders(over, 0);
    expect(over.headers.get("retry-after")).toMatch(/^\d+$/);
    expectThrottled(await api.get("/v2/ranks"));
  });

  test("mutations in one document are counted one by one and stop at the limit", async () => {
    const api = client(h, await h.key("mutations"));
    const doc = Array.from(
      { length: LIMIT + 2 },
      (_, i) => `m${i}: createRank(input: { name: "R${i}" }) { rank { rowId } }`,
    ).join(" ");
    const r = await api.graphql(`mutation { ${doc} }`);
    // Each mutation past the allowance is refused on its own; the five before it committed and keep their ids.
    expect(
      r.body.errors.map((e: { path: string[]; extensions: { code: string } }) => [e.path, e.extensions.code]),
    ).toEqual([
      [[`m${LIMIT}`], "RATE_LIMITED"],
      [[`m${LIMIT + 1}`], "RATE_LIMITED"],
    ]);
    expect(r.status).toBe(200);
    const ids = Object.values(r.body.data).map((m) => (m as { rank: { rowId: number } } | null)?.rank.rowId ?? null);
    expect(ids.slice(0, LIMIT).every((id) => typeof id === "number")).toBe(true);
    expect(ids.slice(LIMIT)).toEqual([null, null]);
    expectHeaders(r, 0);
    const reader = client(h, await h.key("mutations"));
    expect((await reader.get("/v2/ranks?limit=100")).body.data.map((r: { name: string }) => r.name)).toEqual([
      "R0",
      "R1",
      "R2",
      "R3",
      "R4",
    ]);
  });
});

describe("rate limits without a key", () => {
  let h: Harness;
  let server: Server;
  let base: string;
  beforeAll(async () => {
    h = await startHarness({ rateLimitPerMinute: LIMIT });
    server = createServer((req, res) => void h.app.yoga(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await h.close();
  });

  test("requests without a usable key are counted per client address and throttled before they are refused", async () => {
    const get = async (headers: Record<string, string> = {}) => {
      const response = await fetch(`${base}/v2/ranks`, { headers: { accept: "application/json", ...headers } });
      return { status: response.status, body: await response.json(), headers: response.headers } as Reply;
    };
    const graphql = async (query: string) => {
      const response = await fetch(`${base}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query }),
      });
      return { status: response.status, body: await response.json(), headers: response.headers } as Reply;
    };
    for (let i = 1; i < LIMIT; i++) {
      const r = await get(i % 2 ? {} : { authorization: "Bearer not-a-key" });
      expect(r.status).toBe(401);
      expectHeaders(r, LIMIT - i);
    }
    // One unit per keyless request, however many root fields it names.
    const keylessGraphql = await graphql("{ a: ranks { totalCount } b: ranks { totalCount } }");
    expect(keylessGraphql.body.errors[0].extensions.code).toBe("UNAUTHENTICATED");
    expectHeaders(keylessGraphql, 0);
    const throttledGraphql = await graphql("{ ranks { totalCount } }");
    expect(throttledGraphql.status).toBe(429);
    expect(throttledGraphql.body.errors[0].extensions.code).toBe("RATE_LIMITED");
    expectThrottled(await get());
    // A valid key from the same address has its own allowance.
    const keyed = await get({ authorization: `Bearer ${await h.key()}` });
    expect(keyed.status).toBe(200);
    expectHeaders(keyed, LIMIT - 1);
  });
});

describe("rate limits of publishable keys", () => {
  const PUBLIC_LIMIT = 3;
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ rateLimitPerMinute: LIMIT, publicRateLimitPerMinute: PUBLIC_LIMIT, trustProxy: true });
  });
  afterAll(() => h.close());

  const publishable = async () =>
    (
      await createApiKey(h.db.store, {
        account: "alpha",
        scopes: "view:rank",
        publishable: true,
        origins: ["https://unit.example"],
      })
    ).key;
  const from = (key: string, address: string) => client(h, key, { "x-forwarded-for": address });

  test("PUBLIC_RATE_LIMIT_PER_MINUTE sets the allowance per address; 300 by default", () => {
    expect(loadConfig({}).publicRateLimitPerMinute).toBe(300);
    expect(loadConfig({ PUBLIC_RATE_LIMIT_PER_MINUTE: "60" }).publicRateLimitPerMinute).toBe(60);
    expect(() => loadConfig({ PUBLIC_RATE_LIMIT_PER_MINUTE: "-1" })).toThrow();
  });

  test("one address's requests with publishable keys share one allowance; other addresses and ordinary keys keep theirs", async () => {
    const [first, second] = [await publishable(), await publishable()];
    for (let i = 1; i <= PUBLIC_LIMIT; i++) {
      const reply = await from(i % 2 ? first : second, "203.0.113.7").get("/v2/ranks");
      expect(reply.status).toBe(200);
      expect(reply.headers.get("x-ratelimit-limit")).toBe(String(PUBLIC_LIMIT));
      expect(reply.headers.get("x-ratelimit-remaining")).toBe(String(PUBLIC_LIMIT - i));
    }
    for (const refused of [
      await from(first, "203.0.113.7").get("/v2/ranks"),
      await from(second, "203.0.113.7").get("/v2/ranks"),
    ]) {
      expect(refused.status).toBe(429);
      expect(refused.body.error.message).toBe(THROTTLED);
      expect(refused.body.error.type).toBe("ThrottleRequestsException");
      expect(refused.headers.get("x-ratelimit-limit")).toBe(String(PUBLIC_LIMIT));
      expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    const graphql = await from(first, "203.0.113.7").graphql("{ ranks { totalCount } }");
    expect(graphql.status).toBe(429);
    expect(graphql.body.errors[0].extensions.code).toBe("RATE_LIMITED");

    const elsewhere = await from(first, "198.51.100.2").get("/v2/ranks");
    expect(elsewhere.status).toBe(200);
    const ordinary = await from(await h.key(), "203.0.113.7").get("/v2/ranks");
    expect(ordinary.status).toBe(200);
    expect(ordinary.headers.get("x-ratelimit-limit")).toBe(String(LIMIT));
  });

  test("each publishable key still has its own per-key allowance", async () => {
    const key = await publishable();
    for (let i = 0; i < LIMIT; i++) expect((await from(key, `192.0.2.${i}`).get("/v2/ranks")).status).toBe(200);
    expect((await from(key, "192.0.2.200").get("/v2/ranks")).status).toBe(429);
  });
});

describe("rate limits when Redis is unreachable", () => {
  let h: Harness;
  const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
  beforeAll(async () => {
    // Nothing listens on port 1: every Redis command fails at once.
    h = await startHarness({ rateLimitPerMinute: LIMIT, redisUrl: "redis://127.0.0.1:1" });
  });
  afterAll(async () => {
    await h.app.rateLimit.close();
    await h.close();
    warn.mockRestore();
  });

  test("each instance counts in memory with the same allowance, and says so once", async () => {
    expect(await h.app.rateLimit.ready(300)).toBe(false);
    const api = client(h, await h.key());
    for (let i = 1; i <= LIMIT; i++) {
      const r = await api.get("/v2/ranks");
      expect(r.status).toBe(200);
      expectHeaders(r, LIMIT - i);
    }
    expectThrottled(await api.get("/v2/ranks"));
    const expectHeadersOnPeek = await api.get("/v2/no-such-route");
    expectHeaders(expectHeadersOnPeek, 0);
    const warnings = warn.mock.calls.map((c) => String(c[0])).filter((m) => m.startsWith("Redis unavailable"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("counted in memory");
  });
});
