/**
 * Failed password sign-ins are limited per person and per client address (issue 42, item 3), counted where the rate
 * limits are: in memory, or in Redis shared by every instance. Through the module's interface (`app.signInAttempts`,
 * as the sign-in pages use it); the sign-in page's own answers are in test/sign-in.test.ts.
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openDatabase, type Database } from "../src/db/prisma.ts";
import { createApp, type App } from "../src/server/app.ts";
import { addressKey, createSignInAttempts, type SignInAttempts } from "../src/auth/sign-in-attempts.ts";
import { startHarness, type Harness } from "./harness.ts";
import { requireRedis, testRedisUrl } from "./services.ts";

const PER_PERSON = 3;
const PER_ADDRESS = 6;
const WINDOW_MINUTES = 15;
const limits = {
  signInFailuresPerPerson: PER_PERSON,
  signInFailuresPerAddress: PER_ADDRESS,
  signInFailureWindowMinutes: WINDOW_MINUTES,
};

const attempt = (email: string, address = "203.0.113.7", accountId = 1) => ({ accountId, email, address });

async function failTimes(attempts: SignInAttempts, n: number, ...args: Parameters<typeof attempt>) {
  for (let i = 0; i < n; i++) await attempts.failed(attempt(...args));
}

/** The behaviour every store must have: `instance()` gives the attempts of the app under test. */
function limitsBehaviour(instance: () => SignInAttempts) {
  test("a person is refused after their limit of failures, with the time left; other people are not", async () => {
    const attempts = instance();
    const dee = attempt(`dee-${randomUUID()}@example.com`);
    await failTimes(attempts, PER_PERSON - 1, dee.email);
    expect(await attempts.check(dee)).toEqual({ allowed: true });
    await attempts.failed(dee);
    const refused = await attempts.check(dee);
    expect(refused.allowed).toBe(false);
    if (refused.allowed) return;
    expect(refused.retryAfterSeconds).toBeGreaterThan(0);
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(WINDOW_MINUTES * 60);
    // The same email typed otherwise is the same person; from another address too.
    expect((await attempts.check(attempt(` ${dee.email.toUpperCase()} `))).allowed).toBe(false);
    expect((await attempts.check(attempt(dee.email, "198.51.100.9"))).allowed).toBe(false);
    // Another email, or the same email in another account, is another person.
    expect(await attempts.check(attempt(`eve-${randomUUID()}@example.com`))).toEqual({ allowed: true });
    expect(await attempts.check(attempt(dee.email, "203.0.113.7", 2))).toEqual({ allowed: true });
  });

  test("an address is refused after its limit of failures, whatever the emails; other addresses are not", async () => {
    const attempts = instance();
    const address = `192.0.2.${Math.floor(Math.random() * 200) + 1}`;
    for (let i = 0; i < PER_ADDRESS; i++) {
      expect((await attempts.check(attempt(`person${i}-${randomUUID()}@example.com`, address))).allowed).toBe(true);
      await attempts.failed(attempt(`person${i}-${randomUUID()}@example.com`, address));
    }
    const fresh = `new-${randomUUID()}@example.com`;
    expect((await attempts.check(attempt(fresh, address))).allowed).toBe(false);
    expect(await attempts.check(attempt(fresh, "198.51.100.77"))).toEqual({ allowed: true });
  });

  test("the addresses of one IPv6 /64 count as one; IPv4-mapped addresses as their IPv4 one", async () => {
    const attempts = instance();
    const network = `2001:db8:${Math.floor(Math.random() * 0xffff).toString(16)}:1`;
    for (let i = 0; i < PER_ADDRESS; i++)
      await attempts.failed(attempt(`p${i}-${randomUUID()}@example.com`, `${network}::${(i + 1).toString(16)}`));
    expect((await attempts.check(attempt(`q-${randomUUID()}@example.com`, `${network}:ffff:1:2:3`))).allowed).toBe(
      false,
    );
    expect(
      (await attempts.check(attempt(`q-${randomUUID()}@example.com`, `${network.slice(0, -1)}2::1`))).allowed,
    ).toBe(true);
    expect(addressKey("::ffff:203.0.113.9")).toBe("203.0.113.9");
    expect(addressKey("2001:db8:0:1:aaaa::1")).toBe(addressKey("2001:0db8::1:ffff:0:0:2"));
  });

  test("a successful sign-in forgets the person's failures, not the address's", async () => {
    const attempts = instance();
    const address = `198.18.0.${Math.floor(Math.random() * 200) + 1}`;
    const dee = attempt(`dee-${randomUUID()}@example.com`, address);
    await failTimes(attempts, PER_PERSON, dee.email, address);
    expect((await attempts.check(dee)).allowed).toBe(false);
    await attempts.succeeded(dee);
    expect(await attempts.check(dee)).toEqual({ allowed: true });
    await failTimes(attempts, PER_ADDRESS - PER_PERSON, `other-${randomUUID()}@example.com`, address);
    expect((await attempts.check(attempt(`third-${randomUUID()}@example.com`, address))).allowed).toBe(false);
  });
}

describe("in memory", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(limits);
  });
  afterAll(() => h.close());

  limitsBehaviour(() => h.app.signInAttempts);

  test("the refusal ends with its window", async () => {
    const attempts = createSignInAttempts(h.app.rateLimit.counter, {
      failuresPerPerson: 1,
      failuresPerAddress: 100,
      windowSeconds: 1,
    });
    const dee = attempt("dee@example.com");
    await attempts.failed(dee);
    const refused = await attempts.check(dee);
    expect(refused).toEqual({ allowed: false, retryAfterSeconds: 1 });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await attempts.check(dee)).toEqual({ allowed: true });
  });

  test("the defaults: 5 per person and 20 per address in 15 minutes", async () => {
    const d = await startHarness();
    try {
      expect(d.config).toMatchObject({
        signInFailuresPerPerson: 5,
        signInFailuresPerAddress: 20,
        signInFailureWindowMinutes: 15,
      });
    } finally {
      await d.close();
    }
  });
});

const redisService = await requireRedis();

redisService.describe("in Redis, shared by two instances", () => {
  const prefix = `muster-test:${randomUUID()}`;
  let h: Harness;
  let dbB: Database;
  let appB: App;
  let redis: Redis;
  let turn = 0;
  beforeAll(async () => {
    redis = new Redis(testRedisUrl);
    h = await startHarness({ ...limits, redisUrl: testRedisUrl, redisPrefix: prefix });
    dbB = await openDatabase(h.config.databaseUrl);
    appB = createApp({ db: dbB, config: h.config });
    expect(await h.app.rateLimit.ready()).toBe(true);
    expect(await appB.rateLimit.ready()).toBe(true);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await appB.rateLimit.close();
    await appB.events.close();
    await dbB.close();
    await h.app.rateLimit.close();
    await h.close();
  });

  // Each call goes to the other instance than the last: what one counted the other sees.
  const next = () => (turn++ % 2 === 0 ? h.app : appB).signInAttempts;
  limitsBehaviour(() => ({
    check: (a) => next().check(a),
    failed: (a) => next().failed(a),
    succeeded: (a) => next().succeeded(a),
  }));

  test("failures counted on one instance refuse on the other; the store holds no email", async () => {
    const dee = attempt(`dee-${randomUUID()}@example.com`, "203.0.113.200");
    await failTimes(h.app.signInAttempts, PER_PERSON, dee.email, dee.address);
    expect((await appB.signInAttempts.check(dee)).allowed).toBe(false);
    const keys = await redis.keys(`${prefix}:sign-in:*`);
    expect(keys.some((k) => k.startsWith(`${prefix}:sign-in:person:`))).toBe(true);
    expect(keys.some((k) => k === `${prefix}:sign-in:address:203.0.113.200`)).toBe(true);
    expect(keys.join(" ")).not.toContain("example.com");
    await appB.signInAttempts.succeeded(dee);
    expect(await h.app.signInAttempts.check(dee)).toEqual({ allowed: true });
  });
});
