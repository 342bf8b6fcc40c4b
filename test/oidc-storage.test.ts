import { afterAll, beforeAll, expect, test } from "vitest";
import { pruneExpiredRecords } from "../src/auth/oidc/adapter.ts";
import { startHarness, type Harness } from "./harness.ts";

/*
 * The OpenID provider's records (sessions, codes, tokens) expire where they are stored: reads ignore expired ones
 * (test/oidc.test.ts), and every instance prunes them hourly (src/server/main.ts) in bounded steps.
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

test("pruning deletes the expired records and keeps the live ones and those without an expiry", async () => {
  const now = new Date("2026-12-03T12:00:00.000Z");
  const record = (key: string, expiresAt: Date | null) => ({ key, model: "AccessToken", payload: "{}", expiresAt });
  await h.db.prisma.oidcRecord.createMany({
    data: [
      record("AccessToken:old", new Date("2026-12-03T11:59:59.000Z")),
      record("AccessToken:older", new Date("2026-11-01T00:00:00.000Z")),
      record("AccessToken:live", new Date("2026-12-03T12:00:01.000Z")),
      record("AccessToken:forever", null),
    ],
  });
  expect(await pruneExpiredRecords(h.db, now)).toBe(2);
  const left = await h.db.prisma.oidcRecord.findMany({ where: { key: { startsWith: "AccessToken:" } } });
  expect(left.map((r) => r.key).sort()).toEqual(["AccessToken:forever", "AccessToken:live"]);
  expect(await pruneExpiredRecords(h.db, now)).toBe(0);
});
