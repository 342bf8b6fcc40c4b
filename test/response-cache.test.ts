import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Redis } from "ioredis";
import { createApiKey } from "../src/auth/accounts.ts";
import { openDatabase, type Database } from "../src/db/prisma.ts";
import { createApp, type App } from "../src/server/app.ts";
import { requireRedis, testRedisUrl } from "./services.ts";
import { trustedDocuments } from "../src/http/trusted-documents.ts";
import { client, startHarness, type Client, type Harness, type Reply } from "./harness.ts";

/**
 * The shared cache of public reads (src/http/response-cache.ts) and the ETag / Cache-Control of every GET, through
 * `yoga.fetch`, counting the SQL statements each read issues.
 */
const redisService = await requireRedis();

let h: Harness;
let admin: Client;
let publishable: string;
const ids = { rank: 0, user: 0, unit: 0, group: 0 };
const PUBLIC_SCOPES =
  "view:user,view:rank,view:position,view:unit,view:group,view:image,view:status,view:specialty,view:attachment";

const ok = async (reply: Promise<Reply>) => {
  const r = await reply;
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  return r.body.data;
};

/** A GET through the full pipeline, and the statements it issued. */
async function read(key: string | null, url: string, headers: Record<string, string> = {}) {
  const before = h.db.statements.count;
  const reply = await client(h, key, headers).get(url);
  return { ...reply, statements: h.db.statements.count - before };
}

const rosterRankName = (body: { data: { units: { users: { rank: { name: string } | null }[] }[] }[] }) =>
  body.data[0].units[0].users[0].rank?.name;

beforeAll(async () => {
  h = await startHarness({ rateLimitPerMinute: 100_000 });
  admin = client(h, await h.key("alpha"));
  ids.rank = (await ok(admin.post("/v2/ranks", { name: "Private" }))).id;
  ids.unit = (await ok(admin.post("/v2/units", { name: "Bravo Company" }))).id;
  ids.user = (
    await ok(
      admin.post("/v2/users", { name: "Jo Smith", email: "jo@example.com", rank_id: ids.rank, unit_id: ids.unit }),
    )
  ).id;
  ids.group = (await ok(admin.post("/v2/groups", { name: "Line" }))).id;
  await ok(admin.post(`/v2/groups/${ids.group}/units/attach`, { resources: { [ids.unit]: { order: 1 } } }));
  publishable = (
    await createApiKey(h.db.store, {
      account: "alpha",
      scopes: PUBLIC_SCOPES,
      publishable: true,
      origins: ["https://unit.example"],
    })
  ).key;
});

afterAll(() => h?.close());

describe("ETag and Cache-Control", () => {
  test("a REST GET carries an ETag; If-None-Match with it is a 304 without a body, for an ordinary key too", async () => {
    const key = await h.key("alpha", "view:rank");
    const first = await client(h, key).get("/v2/ranks");
    expect(first.status).toBe(200);
    const etag = first.headers.get("etag");
    expect(etag).toMatch(/^W\/".+"$/);
    expect(first.headers.get("cache-control")).toBe("private, no-cache");
    expect(first.headers.get("vary")).toMatch(/Authorization/);
    expect(first.headers.get("vary")).toMatch(/X-Perscom-Id/);
    const response = await h.app.yoga.fetch("http://muster.test/v2/ranks", {
      headers: { accept: "application/json", authorization: `Bearer ${key}`, "if-none-match": etag! },
    });
    expect(response.status).toBe(304);
    expect(await response.text()).toBe("");
    expect(response.headers.get("etag")).toBe(etag);
    const other = await h.app.yoga.fetch("http://muster.test/v2/ranks", {
      headers: { accept: "application/json", authorization: `Bearer ${key}`, "if-none-match": 'W/"other"' },
    });
    expect(other.status).toBe(200);
  });

  test("a GraphQL GET of a persisted document carries an ETag and answers If-None-Match with a 304", async () => {
    const [id] = [...trustedDocuments].find(([, text]) => text.includes("RanksByOrder"))!;
    for (const key of [await h.key("alpha", "view:rank"), publishable]) {
      const url = `http://muster.test/graphql?documentId=${encodeURIComponent(id)}`;
      const headers = { accept: "application/json", authorization: `Bearer ${key}` };
      const first = await h.app.yoga.fetch(url, { headers });
      expect(first.status).toBe(200);
      expect((await first.json()).data.ranks.nodes.length).toBeGreaterThan(0);
      const etag = first.headers.get("etag");
      expect(etag).toBeTruthy();
      const again = await h.app.yoga.fetch(url, { headers: { ...headers, "if-none-match": etag! } });
      expect(again.status).toBe(304);
    }
  });

  test("a publishable key's read is public for RESPONSE_CACHE_MAX_AGE seconds", async () => {
    const reply = await read(publishable, "/v2/ranks");
    expect(reply.status).toBe(200);
    expect(reply.headers.get("cache-control")).toBe(`public, max-age=${h.config.responseCacheMaxAge}`);
    expect(reply.headers.get("etag")).toBeTruthy();
  });

  test("errors are not cacheable", async () => {
    const reply = await read(publishable, "/v2/ranks/999999");
    expect(reply.status).toBe(404);
    expect(reply.headers.get("cache-control")).toBe("no-store");
    expect(reply.headers.get("etag")).toBeNull();
  });
});

describe("the shared cache of public reads", () => {
  test("a hit from a page of the key's origin issues no SQL statement either, and carries its CORS headers", async () => {
    const page = { origin: "https://unit.example" };
    const first = await read(publishable, "/v2/ranks?page=1", page);
    expect(first.status).toBe(200);
    expect(first.headers.get("access-control-allow-origin")).toBe("https://unit.example");
    const second = await read(publishable, "/v2/ranks?page=1", page);
    expect(second.statements).toBe(0);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get("access-control-allow-origin")).toBe("https://unit.example");
    // Another origin is another entry, and the key is refused there.
    const elsewhere = await read(publishable, "/v2/ranks?page=1", { origin: "https://elsewhere.example" });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("a second identical public read issues no SQL statement; its headers are this request's", async () => {
    const first = await read(publishable, "/v2/roster");
    expect(first.status).toBe(200);
    expect(first.statements).toBeGreaterThan(0);
    const second = await read(publishable, "/v2/roster");
    expect(second.status).toBe(200);
    expect(second.statements).toBe(0);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get("etag")).toBe(first.headers.get("etag"));
    expect(second.headers.get("x-perscom-request-id")).not.toBe(first.headers.get("x-perscom-request-id"));
    expect(second.headers.get("x-content-type-options")).toBe("nosniff");
    expect(Number(second.headers.get("x-ratelimit-remaining"))).toBeLessThan(
      Number(first.headers.get("x-ratelimit-remaining")),
    );
    const notModified = await h.app.yoga.fetch("http://muster.test/v2/roster", {
      headers: {
        authorization: `Bearer ${publishable}`,
        accept: "application/json",
        "if-none-match": first.headers.get("etag")!,
      },
    });
    expect(notModified.status).toBe(304);
  });

  test("renaming a rank the roster shows makes the next read fresh; an unrelated write leaves it cached", async () => {
    await read(publishable, "/v2/roster");
    expect((await read(publishable, "/v2/roster")).statements).toBe(0);
    await ok(admin.post("/v2/announcements", { title: "Muster at dawn", content: "Bring boots.", color: "info" }));
    expect((await read(publishable, "/v2/roster")).statements).toBe(0);
    await ok(admin.patch(`/v2/ranks/${ids.rank}`, { name: "Corporal" }));
    const fresh = await read(publishable, "/v2/roster");
    expect(fresh.statements).toBeGreaterThan(0);
    expect(rosterRankName(fresh.body)).toBe("Corporal");
    expect((await read(publishable, "/v2/roster")).statements).toBe(0);
  });

  test("users?include=rank: a rank renamed is seen at once", async () => {
    const url = `/v2/users?include=rank`;
    await read(publishable, url);
    expect((await read(publishable, url)).statements).toBe(0);
    await ok(admin.patch(`/v2/ranks/${ids.rank}`, { name: "Sergeant" }));
    const fresh = await read(publishable, url);
    expect(fresh.statements).toBeGreaterThan(0);
    expect(fresh.body.data.find((u: { id: number }) => u.id === ids.user).rank.name).toBe("Sergeant");
  });

  test("detaching a unit from the group (a pivot write) makes the roster fresh", async () => {
    await read(publishable, "/v2/roster");
    expect((await read(publishable, "/v2/roster")).statements).toBe(0);
    await ok(admin.delete(`/v2/groups/${ids.group}/units/detach`, { resources: [ids.unit] }));
    const fresh = await read(publishable, "/v2/roster");
    expect(fresh.statements).toBeGreaterThan(0);
    expect(fresh.body.data[0].units).toEqual([]);
    await ok(admin.post(`/v2/groups/${ids.group}/units/attach`, { resources: { [ids.unit]: { order: 1 } } }));
    expect(rosterRankName((await read(publishable, "/v2/roster")).body)).toBe("Sergeant");
  });

  test("POST /v2/cache empties the account's entries", async () => {
    await read(publishable, "/v2/ranks");
    expect((await read(publishable, "/v2/ranks")).statements).toBe(0);
    const purged = await admin.post("/v2/cache");
    expect(purged.status).toBe(200);
    expect((await read(publishable, "/v2/ranks")).statements).toBeGreaterThan(0);
  });

  test("an ordinary key's read is never a hit", async () => {
    const key = await h.key("alpha", PUBLIC_SCOPES);
    for (let i = 0; i < 3; i++) {
      const reply = await read(key, "/v2/roster");
      expect(reply.status).toBe(200);
      expect(reply.statements).toBeGreaterThan(0);
    }
  });

  test("publishable keys, other origins and anonymous reads are separate entries", async () => {
    const other = (
      await createApiKey(h.db.store, {
        account: "alpha",
        scopes: "view:rank",
        publishable: true,
        origins: ["https://unit.example"],
      })
    ).key;
    await read(publishable, "/v2/ranks");
    expect((await read(publishable, "/v2/ranks")).statements).toBe(0);
    expect((await read(other, "/v2/ranks")).statements).toBeGreaterThan(0);
    expect((await read(publishable, "/v2/ranks", { accept: "application/vnd.api+json" })).statements).toBeGreaterThan(
      0,
    );
    // Anonymous: refused (401), and a refusal is never stored, so it is refused again, never served a key's entry.
    for (let i = 0; i < 2; i++) {
      const anonymous = await read(null, "/v2/ranks");
      expect(anonymous.status).toBe(401);
    }
  });

  test("an anonymous read is cached apart from a key's: the same URL without a key is not given the key's answer", async () => {
    const url = `/graphql?query=${encodeURIComponent("{ ranks { nodes { name } } }")}`;
    await read(publishable, url);
    const cached = await read(publishable, url);
    expect(cached.statements).toBe(0);
    expect(cached.body.data.ranks.nodes.length).toBeGreaterThan(0);
    const anonymous = await read(null, url);
    expect(anonymous.body.data ?? null).toBeNull();
    expect(anonymous.body.errors[0].extensions.code).toBe("UNAUTHENTICATED");
    const introspection = await read(null, "/graphql?query=%7B__typename%7D");
    expect(introspection.status).toBe(200);
    expect(introspection.headers.get("cache-control")).toBe(`public, max-age=${h.config.responseCacheMaxAge}`);
  });
});

redisService.describe("two instances sharing the cache in Redis", () => {
  const prefix = `muster-test:${randomUUID()}`;
  let a: Harness;
  let dbB: Database;
  let appB: App;
  let key: string;
  let rank: number;

  /** A public roster read through `app` on `db`, and the statements it issued there. */
  async function rosterOn(app: App, db: Database) {
    const before = db.statements.count;
    const response = await app.yoga.fetch("http://muster.test/v2/roster", {
      headers: { accept: "application/json", authorization: `Bearer ${key}` },
    });
    expect(response.status).toBe(200);
    const body = await response.json();
    return { statements: db.statements.count - before, rank: rosterRankName(body) };
  }

  beforeAll(async () => {
    a = await startHarness({ rateLimitPerMinute: 100_000, redisUrl: testRedisUrl, redisPrefix: prefix });
    dbB = await openDatabase(a.config.databaseUrl);
    appB = createApp({ db: dbB, config: a.config });
    const api = client(a, await a.key("bravo"));
    rank = (await ok(api.post("/v2/ranks", { name: "Private" }))).id;
    const unit = (await ok(api.post("/v2/units", { name: "Alpha Company" }))).id;
    await ok(api.post("/v2/users", { name: "Ray Lee", email: "ray@example.com", rank_id: rank, unit_id: unit }));
    const group = (await ok(api.post("/v2/groups", { name: "Line" }))).id;
    await ok(api.post(`/v2/groups/${group}/units/attach`, { resources: { [unit]: { order: 1 } } }));
    key = (
      await createApiKey(a.db.store, {
        account: "bravo",
        scopes: PUBLIC_SCOPES,
        publishable: true,
        origins: ["https://unit.example"],
      })
    ).key;
  });

  afterAll(async () => {
    await appB?.events.close();
    await appB?.rateLimit.close();
    await a?.app.rateLimit.close();
    await dbB?.close();
    await a?.close();
    const redis = new Redis(testRedisUrl);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  test("a read cached on both instances is fresh on B once a rank is renamed through A", async () => {
    expect((await rosterOn(a.app, a.db)).statements).toBeGreaterThan(0);
    // B finds A's entry: the cache is one for both.
    expect(await rosterOn(appB, dbB)).toEqual({ statements: 0, rank: "Private" });
    expect((await rosterOn(a.app, a.db)).statements).toBe(0);
    await ok(client(a, await a.key("bravo")).patch(`/v2/ranks/${rank}`, { name: "Corporal" }));
    const onB = await rosterOn(appB, dbB);
    expect(onB.statements).toBeGreaterThan(0);
    expect(onB.rank).toBe("Corporal");
    expect(await rosterOn(a.app, a.db)).toEqual({ statements: 0, rank: "Corporal" });
  });
});
