/**
 * Two deployments (two databases) sharing one Redis, each under its own REDIS_PREFIX: their databases number API keys
 * and accounts alike, yet neither's subscriptions hear the other's events and neither's requests spend the other's
 * rate-limit allowance.
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, test } from "vitest";
import { loadConfig } from "../src/core/config.ts";
import { client, startHarness, type Harness } from "./harness.ts";
import { requireRedis, testRedisUrl } from "./services.ts";
import { readEventStream } from "./support/event-stream.ts";

const LIMIT = 1000;
const PREFIX = `muster-test:${randomUUID()}`;
const redisService = await requireRedis();

test("REDIS_PREFIX is `muster` unless set, and a prefix Redis keys should not carry is refused at start-up", () => {
  expect(loadConfig({}).redisPrefix).toBe("muster");
  expect(loadConfig({ REDIS_PREFIX: "tenant-7:prod" }).redisPrefix).toBe("tenant-7:prod");
  expect(() => loadConfig({ REDIS_PREFIX: "two words" })).toThrow(
    'REDIS_PREFIX must be 1 to 64 letters, digits or ":_.-", got "two words"',
  );
  expect(() => loadConfig({ REDIS_PREFIX: "x".repeat(65) })).toThrow(/REDIS_PREFIX must be 1 to 64/);
});

redisService.describe("two deployments on one Redis, each with its own REDIS_PREFIX", () => {
  let x: Harness;
  let y: Harness;

  beforeAll(async () => {
    x = await startHarness({ rateLimitPerMinute: LIMIT, redisUrl: testRedisUrl, redisPrefix: `${PREFIX}:x` });
    y = await startHarness({ rateLimitPerMinute: LIMIT, redisUrl: testRedisUrl, redisPrefix: `${PREFIX}:y` });
    expect(await x.app.rateLimit.ready()).toBe(true);
    expect(await y.app.rateLimit.ready()).toBe(true);
  });

  afterAll(async () => {
    for (const h of [x, y]) {
      await h?.app.rateLimit.close();
      await h?.close();
    }
    const redis = new Redis(testRedisUrl);
    const keys = await redis.keys(`${PREFIX}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  /** A key of account `account` in each deployment, with the same key id and account id in both (else nothing could mix). */
  async function twins(account: string) {
    const keys = { x: await x.key(account), y: await y.key(account) };
    const [rowX, rowY] = await Promise.all(
      [x, y].map((h) => h.db.prisma.apiKey.findFirstOrThrow({ orderBy: { id: "desc" } })),
    );
    expect(rowX.id).toBe(rowY.id);
    expect(rowX.accountId).toBe(rowY.accountId);
    return keys;
  }

  test("a subscription hears its own deployment's writes and never the other's", async () => {
    const keys = await twins("alpha");
    const stream = readEventStream(
      await y.app.yoga.fetch("http://muster.test/graphql", {
        method: "POST",
        headers: { accept: "text/event-stream", "content-type": "application/json", authorization: `Bearer ${keys.y}` },
        body: JSON.stringify({ query: "subscription { rankChanged { action data } }" }),
      }),
    );
    expect(stream.status).toBe(200);
    // The subscription is in place once Redis has confirmed it: until then write through both, X first each time.
    const [onX, onY] = [client(x, keys.x), client(y, keys.y)];
    let first: { data?: { rankChanged?: unknown } } | undefined;
    for (let i = 0; first === undefined && i < 100; i++) {
      expect((await onX.post("/v2/ranks", { name: `X ${i}`, abbreviation: "X" })).status).toBe(200);
      expect((await onY.post("/v2/ranks", { name: `Y ${i}`, abbreviation: "Y" })).status).toBe(200);
      first = await stream.next(300).catch(() => undefined);
    }
    expect(first?.data?.rankChanged).toMatchObject({
      action: "CREATED",
      data: { name: expect.stringMatching(/^Y \d+$/) },
    });
    // Both deployments went on writing; whatever else arrived is Y's too.
    expect((await onX.post("/v2/ranks", { name: "X last", abbreviation: "X" })).status).toBe(200);
    expect((await onY.post("/v2/ranks", { name: "Y last", abbreviation: "Y" })).status).toBe(200);
    for (;;) {
      const next = (await stream.next()).data.rankChanged;
      expect(next.data.name).toMatch(/^Y /);
      if (next.data.name === "Y last") break;
    }
    await stream.close();
  });

  test("the same key id in both deployments has an allowance in each", async () => {
    const keys = await twins("bravo");
    const remaining = async (h: Harness, key: string) =>
      Number((await client(h, key).get("/v2/ranks")).headers.get("x-ratelimit-remaining"));
    for (let i = 1; i <= 5; i++) expect(await remaining(x, keys.x)).toBe(LIMIT - i);
    expect(await remaining(y, keys.y)).toBe(LIMIT - 1);
    expect(await remaining(x, keys.x)).toBe(LIMIT - 6);
  });
});
