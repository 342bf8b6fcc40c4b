/**
 * CORS (issue 42, item 7): the origins registered by enabled OAuth clients, and those the operator lists in
 * `CORS_ORIGINS`, get CORS headers on every route (preflight answered, `Authorization` allowed, never credentials);
 * any other origin gets none. Through the app's own HTTP pipeline (`yoga.fetch`), on the test database.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { client, startHarness, type Harness } from "./harness.ts";
import { readEventStream } from "./support/event-stream.ts";
import { createApiKey } from "../src/auth/accounts.ts";

const APP = "https://app.example";
const OTHER_APP = "https://other-app.example";
const UNKNOWN = "https://unknown.example";

const preflight = (h: Harness, path: string, origin: string, method = "POST") =>
  h.app.yoga.fetch(`http://muster.test${path}`, {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": method,
      "access-control-request-headers": "authorization,content-type,x-perscom-id",
    },
  });

/** The `Access-Control-*` headers of a response. */
const corsHeadersOf = (answer: { headers: Headers }) =>
  Object.fromEntries([...answer.headers].filter(([name]) => name.startsWith("access-control-")));

const listOf = (value: string | null) => (value ?? "").split(",").map((v) => v.trim().toLowerCase());

/** A public OAuth client of `account` allowing `allowedOrigins`, made through `/v2/oauth-clients`; its row id. */
async function createClient(h: Harness, account: string, allowedOrigins: string[]): Promise<number> {
  const made = await client(h, await h.key(account)).post("/v2/oauth-clients", {
    name: `${account}'s app`,
    public: true,
    redirect_uris: allowedOrigins.map((o) => `${o}/callback`),
    allowed_origins: allowedOrigins,
    scopes: ["*"],
  });
  expect(made.status).toBe(200);
  return made.body.data.id;
}

function expectAllowed(response: Response, origin: string) {
  expect(response.headers.get("access-control-allow-origin")).toBe(origin);
  expect(listOf(response.headers.get("vary"))).toContain("origin");
  expect(response.headers.has("access-control-allow-credentials")).toBe(false);
}

function expectPreflightAllowed(response: Response, origin: string) {
  expect(response.status).toBe(204);
  expectAllowed(response, origin);
  const headers = listOf(response.headers.get("access-control-allow-headers"));
  for (const name of ["authorization", "content-type", "x-perscom-id", "x-perscom-notifications"])
    expect(headers).toContain(name);
  const methods = listOf(response.headers.get("access-control-allow-methods"));
  for (const method of ["get", "post", "put", "patch", "delete"]) expect(methods).toContain(method);
  expect(Number(response.headers.get("access-control-max-age"))).toBeGreaterThan(0);
}

describe("origins of OAuth clients", () => {
  let h: Harness;
  let key: string;
  let app: number;
  let admin: ReturnType<typeof client>;
  beforeAll(async () => {
    h = await startHarness();
    key = await h.key("alpha");
    app = await createClient(h, "alpha", [APP, "http://127.0.0.1:5173"]);
    admin = client(h, key);
    await createClient(h, "bravo", [OTHER_APP]);
  });
  afterAll(() => h.close());

  test("a registered origin's preflight is answered for REST and GraphQL, Authorization allowed, no credentials", async () => {
    expectPreflightAllowed(await preflight(h, "/v2/ranks", APP), APP);
    expectPreflightAllowed(await preflight(h, "/v2/ranks/1", APP, "PATCH"), APP);
    expectPreflightAllowed(await preflight(h, "/graphql", APP), APP);
    expectPreflightAllowed(await preflight(h, "/v2/ranks", "http://127.0.0.1:5173"), "http://127.0.0.1:5173");
  });

  test("a registered origin's real requests carry the headers, with the id and rate-limit headers exposed", async () => {
    const api = client(h, key, { origin: APP });
    const rest = await api.get("/v2/ranks");
    const graphql = await api.graphql("{ ranks { totalCount } }");
    expect(rest.status).toBe(200);
    expect(graphql.body.data.ranks.totalCount).toBe(0);
    for (const reply of [rest, graphql]) {
      expect(reply.headers.get("access-control-allow-origin")).toBe(APP);
      expect(reply.headers.has("access-control-allow-credentials")).toBe(false);
      const exposed = listOf(reply.headers.get("access-control-expose-headers"));
      for (const name of ["x-ratelimit-remaining", "x-ratelimit-limit", "retry-after", "x-perscom-request-id"])
        expect(exposed).toContain(name);
    }
    // A refusal is readable too, so the page can show why.
    const refused = await client(h, null, { origin: APP }).get("/v2/ranks");
    expect(refused.status).toBe(401);
    expect(refused.headers.get("access-control-allow-origin")).toBe(APP);
  });

  test("the origin of another account's enabled client is allowed too (a preflight names no account)", async () => {
    expectPreflightAllowed(await preflight(h, "/v2/ranks", OTHER_APP), OTHER_APP);
    expect(
      (await client(h, key, { origin: OTHER_APP }).get("/v2/ranks")).headers.get("access-control-allow-origin"),
    ).toBe(OTHER_APP);
  });

  test("an unknown origin gets no CORS header at all, on the preflight and on the request", async () => {
    for (const origin of [UNKNOWN, "null", `${APP}.evil.example`, "http://app.example", `${APP}:8443`]) {
      const answer = await preflight(h, "/v2/ranks", origin);
      expect(corsHeadersOf(answer)).toEqual({});
      expect(listOf(answer.headers.get("vary"))).toContain("origin");
      const reply = await client(h, key, { origin }).get("/v2/ranks");
      expect(reply.status).toBe(200);
      expect(corsHeadersOf(reply)).toEqual({});
      expect(listOf(reply.headers.get("vary"))).toContain("origin");
    }
    expect(corsHeadersOf(await client(h, key).get("/v2/ranks"))).toEqual({});
  });

  test("disabling the client, removing the origin from it, or deleting it takes effect on the next request", async () => {
    const api = client(h, key, { origin: APP });
    expect((await api.get("/v2/ranks")).headers.get("access-control-allow-origin")).toBe(APP);
    expect((await admin.patch(`/v2/oauth-clients/${app}`, { disabled_at: new Date().toISOString() })).status).toBe(200);
    expect(corsHeadersOf(await preflight(h, "/v2/ranks", APP))).toEqual({});
    expect((await api.get("/v2/ranks")).headers.has("access-control-allow-origin")).toBe(false);

    expect((await admin.patch(`/v2/oauth-clients/${app}`, { disabled_at: null })).status).toBe(200);
    expectPreflightAllowed(await preflight(h, "/v2/ranks", APP), APP);

    const narrowed = await admin.patch(`/v2/oauth-clients/${app}`, { allowed_origins: ["http://127.0.0.1:5173"] });
    expect(narrowed.status).toBe(200);
    expect(corsHeadersOf(await preflight(h, "/v2/ranks", APP))).toEqual({});
    expect((await api.graphql("{ ranks { totalCount } }")).headers.has("access-control-allow-origin")).toBe(false);
    expectPreflightAllowed(await preflight(h, "/graphql", "http://127.0.0.1:5173"), "http://127.0.0.1:5173");

    expect((await admin.delete(`/v2/oauth-clients/${app}`)).status).toBe(200);
    expect(corsHeadersOf(await preflight(h, "/graphql", "http://127.0.0.1:5173"))).toEqual({});
    app = await createClient(h, "alpha", [APP, "http://127.0.0.1:5173"]);
  });

  test("subscriptions over SSE, the OpenAPI document and the file routes follow the same rule", async () => {
    const sse = (origin: string) =>
      h.app.yoga.fetch("http://muster.test/graphql", {
        method: "POST",
        headers: {
          origin,
          accept: "text/event-stream",
          authorization: `Bearer ${key}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({ query: "subscription { rankChanged { rowId } }" }),
      });
    const allowed = readEventStream(await sse(APP));
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get("access-control-allow-origin")).toBe(APP);
    await allowed.close();
    const refused = readEventStream(await sse(UNKNOWN));
    expect(refused.status).toBe(200);
    expect(refused.headers.has("access-control-allow-origin")).toBe(false);
    await refused.close();

    for (const path of ["/openapi.json", "/files/nowhere.png"]) {
      const get = (origin: string) => h.app.yoga.fetch(`http://muster.test${path}`, { headers: { origin } });
      expectAllowed(await get(APP), APP);
      expect(corsHeadersOf(await get(UNKNOWN))).toEqual({});
      expectPreflightAllowed(await preflight(h, path, APP, "GET"), APP);
    }
  });

  test("a page of the server's own origin needs, and gets, no CORS header", async () => {
    const answer = await client(h, key, { origin: "http://muster.test" }).graphql("{ ranks { totalCount } }");
    expect(answer.status).toBe(200);
    expect(answer.headers.has("access-control-allow-origin")).toBe(false);
  });
});

describe("origins of publishable keys", () => {
  const SITE = "https://unit.example";
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  const publishable = async (origins: string[], expiresAt: Date | null = null) =>
    createApiKey(h.db.store, { account: "alpha", scopes: "view:rank", publishable: true, origins, expiresAt });

  test("a listed origin gets CORS headers and reads; another origin gets none and, with the key, a 403", async () => {
    const made = await publishable([SITE]);
    expectPreflightAllowed(await preflight(h, "/v2/ranks", SITE, "GET"), SITE);
    expectPreflightAllowed(await preflight(h, "/graphql", SITE), SITE);
    const rest = await client(h, made.key, { origin: SITE }).get("/v2/ranks");
    expect(rest.status).toBe(200);
    expect(rest.headers.get("access-control-allow-origin")).toBe(SITE);

    expect(corsHeadersOf(await preflight(h, "/v2/ranks", UNKNOWN, "GET"))).toEqual({});
    const elsewhere = client(h, made.key, { origin: UNKNOWN });
    const refused = await elsewhere.get("/v2/ranks");
    expect(refused.status).toBe(403);
    expect(refused.body.error.type).toBe("HttpException");
    expect(refused.body.error.message).toContain(UNKNOWN);
    expect(refused.body.error.request_id).toEqual(expect.any(String));
    expect(corsHeadersOf(refused)).toEqual({});
    const graphql = await elsewhere.graphql("{ ranks { totalCount } }");
    expect(graphql.status).toBe(403);
    expect(graphql.body.data ?? null).toBeNull();
    expect(graphql.body.errors[0].extensions.code).toBe("FORBIDDEN");
    // A server names no Origin: the key is public anyway, so it reads.
    expect((await client(h, made.key).get("/v2/ranks")).status).toBe(200);
    // An ordinary key from an unknown origin is not subject to the rule.
    expect((await client(h, await h.key(), { origin: UNKNOWN }).get("/v2/ranks")).status).toBe(200);
  });

  test("revoking or expiring the key takes its origins away at once", async () => {
    const origin = "https://revoked.example";
    const made = await publishable([origin]);
    expectPreflightAllowed(await preflight(h, "/v2/ranks", origin, "GET"), origin);
    await h.db.prisma.apiKey.update({ where: { id: made.id }, data: { revokedAt: new Date() } });
    expect(corsHeadersOf(await preflight(h, "/v2/ranks", origin, "GET"))).toEqual({});

    const later = "https://expired.example";
    const expiring = await publishable([later], new Date(Date.now() + 3_600_000));
    expectPreflightAllowed(await preflight(h, "/v2/ranks", later, "GET"), later);
    await h.db.prisma.apiKey.update({ where: { id: expiring.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect(corsHeadersOf(await preflight(h, "/v2/ranks", later, "GET"))).toEqual({});
  });

  test("an ordinary key's row holding origins gives them no CORS headers", async () => {
    const origin = "https://ordinary.example";
    const made = await createApiKey(h.db.store, { account: "alpha", scopes: "view:rank" });
    await h.db.prisma.apiKey.update({ where: { id: made.id }, data: { allowedOrigins: [origin] } });
    expect(corsHeadersOf(await preflight(h, "/v2/ranks", origin, "GET"))).toEqual({});
  });
});

describe("CORS_ORIGINS", () => {
  test("lists origins the operator allows besides the clients' ones", async () => {
    const h = await startHarness({ corsOrigins: ["https://allowed.example.org"] });
    try {
      await createClient(h, "alpha", [APP]);
      expectPreflightAllowed(
        await preflight(h, "/v2/ranks", "https://allowed.example.org"),
        "https://allowed.example.org",
      );
      expectPreflightAllowed(await preflight(h, "/v2/ranks", APP), APP);
      expect(corsHeadersOf(await preflight(h, "/v2/ranks", UNKNOWN))).toEqual({});
    } finally {
      await h.close();
    }
  });

  test("`*` allows any origin, still without credentials", async () => {
    const h = await startHarness({ corsOrigins: ["*"] });
    try {
      expectPreflightAllowed(await preflight(h, "/graphql", UNKNOWN), UNKNOWN);
      const reply = await client(h, await h.key(), { origin: UNKNOWN }).get("/v2/ranks");
      expect(reply.headers.get("access-control-allow-origin")).toBe(UNKNOWN);
      expect(reply.headers.has("access-control-allow-credentials")).toBe(false);
    } finally {
      await h.close();
    }
  });

  test("is empty by default: without a client, no origin gets CORS headers", async () => {
    const h = await startHarness();
    try {
      expect(h.config.corsOrigins).toEqual([]);
      expect(corsHeadersOf(await preflight(h, "/v2/ranks", APP))).toEqual({});
    } finally {
      await h.close();
    }
  });
});
