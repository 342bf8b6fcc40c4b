import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { openDatabase, type Database } from "../src/db/prisma.ts";
import { createApp, type App } from "../src/server/app.ts";
import { startHarness, type Harness } from "./harness.ts";
import { requireRedis, testRedisUrl } from "./services.ts";

const REDIS_URL = testRedisUrl;
const LIMIT = 5;
const PREFIX = `muster-test:${randomUUID()}`;

const redisService = await requireRedis();

/** A real HTTP server in front of one app instance, on an ephemeral port. */
async function serve(app: App): Promise<{ server: Server; base: string }> {
  const server = createServer((req, res) => void app.yoga(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function call(base: string, key: string, path: string, init: RequestInit = {}) {
  const response = await fetch(`${base}${path}`, {
    ...init,
    headers: {
      accept: "application/json",
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      ...init.headers,
    },
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}
const remaining = (r: { headers: Headers }) => Number(r.headers.get("x-ratelimit-remaining"));

redisService.describe("rate limits shared through Redis by two instances", () => {
  let h: Harness;
  let dbB: Database;
  let appB: App;
  let a: { server: Server; base: string };
  let b: { server: Server; base: string };
  let redis: Redis;

  beforeAll(async () => {
    redis = new Redis(REDIS_URL);
    // Instance A and instance B: two apps, two HTTP servers, one SQLite file, one Redis.
    h = await startHarness({ rateLimitPerMinute: LIMIT, redisUrl: REDIS_URL, redisPrefix: PREFIX });
    dbB = await openDatabase(h.config.databaseUrl);
    appB = createApp({ db: dbB, config: h.config });
    expect(await h.app.rateLimit.ready()).toBe(true);
    expect(await appB.rateLimit.ready()).toBe(true);
    a = await serve(h.app);
    b = await serve(appB);
  });

  afterAll(async () => {
    await Promise.all([a, b].map(({ server }) => new Promise((resolve) => server.close(resolve))));
    await h.app.rateLimit.close();
    await appB.rateLimit.close();
    await dbB.close();
    await h.close();
    const keys = await redis.keys(`${PREFIX}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  test("requests through A and B together exhaust one allowance", async () => {
    const key = await h.key("shared-redis");
    const seen: number[] = [];
    for (let i = 0; i < LIMIT; i++) {
      const r = await call(i % 2 ? b.base : a.base, key, "/v2/ranks");
      expect(r.status).toBe(200);
      seen.push(remaining(r));
    }
    expect(seen).toEqual([4, 3, 2, 1, 0]);
    for (const base of [a.base, b.base]) {
      const r = await call(base, key, "/v2/ranks");
      expect(r.status).toBe(429);
      expect(r.body.error).toMatchObject({
        message: "You have exceeded the API rate limit. Please wait a minute before trying again.",
        type: "ThrottleRequestsException",
      });
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(r.headers.get("x-ratelimit-reset")).toMatch(/^\d+$/);
    }
    const stored = (await redis.keys(`${PREFIX}:rl:key:*`)).length;
    expect(stored).toBeGreaterThan(0);
    // Another key, through either instance, is untouched.
    const other = await h.key("shared-redis");
    expect(remaining(await call(b.base, other, "/v2/ranks"))).toBe(LIMIT - 1);
  });

  test("GraphQL on one instance and REST on the other draw on the same allowance", async () => {
    const key = await h.key("mixed-redis");
    const graphql = await call(a.base, key, "/graphql", {
      method: "POST",
      body: JSON.stringify({ query: "{ x: ranks { totalCount } y: statuses { totalCount } }" }),
    });
    expect(graphql.status).toBe(200);
    expect(remaining(graphql)).toBe(LIMIT - 2);
    expect(
      remaining(await call(b.base, key, "/v2/ranks", { method: "POST", body: JSON.stringify({ name: "Major" }) })),
    ).toBe(LIMIT - 3);
    // What B wrote, A reads: the instances share the database, not just the allowance.
    const read = await call(a.base, key, "/v2/ranks");
    expect(read.body.data.map((r: { name: string }) => r.name)).toContain("Major");
    expect(remaining(read)).toBe(LIMIT - 4);
    const ttl = await redis.pttl(
      `${PREFIX}:rl:key:${(await h.db.prisma.apiKey.findFirst({ orderBy: { id: "desc" } }))!.id}`,
    );
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  test("a Redis outage falls back to counting per instance, without errors, and sharing resumes when Redis returns", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    // Instance C reaches Redis through a TCP proxy the test can cut.
    const { hostname, port } = new URL(REDIS_URL);
    const sockets = new Set<net.Socket>();
    const proxy = net.createServer((socket) => {
      const upstream = net.connect(Number(port || 6379), hostname);
      sockets.add(socket).add(upstream);
      socket.pipe(upstream).pipe(socket);
      for (const s of [socket, upstream]) {
        s.on("error", () => {});
        s.on("close", () => (socket.destroy(), upstream.destroy(), sockets.delete(s)));
      }
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const proxyPort = (proxy.address() as AddressInfo).port;
    const dbC = await openDatabase(h.config.databaseUrl);
    const appC = createApp({ db: dbC, config: { ...h.config, redisUrl: `redis://127.0.0.1:${proxyPort}` } });
    const c = await serve(appC);
    try {
      expect(await appC.rateLimit.ready()).toBe(true);
      const key = await h.key("outage");
      expect(remaining(await call(c.base, key, "/v2/ranks"))).toBe(LIMIT - 1);
      expect(remaining(await call(a.base, key, "/v2/ranks"))).toBe(LIMIT - 2);

      await new Promise((resolve) => {
        proxy.close(resolve);
        for (const s of sockets) s.destroy();
      });
      // C now counts alone, in memory; nothing fails.
      for (let i = 1; i <= LIMIT; i++) {
        const r = await call(c.base, key, "/v2/ranks");
        expect(r.status).toBe(200);
        expect(remaining(r)).toBe(LIMIT - i);
      }
      expect((await call(c.base, key, "/v2/ranks")).status).toBe(429);
      expect(warn.mock.calls.filter(([m]) => String(m).startsWith("Redis unavailable"))).toHaveLength(1);

      await new Promise<void>((resolve) => proxy.listen(proxyPort, "127.0.0.1", resolve));
      expect(await appC.rateLimit.ready(10_000)).toBe(true);
      expect(warn.mock.calls.some(([m]) => String(m).startsWith("Redis reachable again"))).toBe(true);
      // Back on the shared count: A's and C's earlier requests are both there.
      expect(remaining(await call(c.base, key, "/v2/ranks"))).toBe(LIMIT - 3);
    } finally {
      warn.mockRestore();
      await new Promise((resolve) => c.server.close(resolve));
      await appC.rateLimit.close();
      proxy.close();
      for (const s of sockets) s.destroy();
      await dbC.close();
    }
  });
});
