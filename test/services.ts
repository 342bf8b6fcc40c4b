import { describe, test } from "vitest";

/** Set by CI: an unreachable service is then a failure, not a skip. */
export const servicesRequired = process.env.MUSTER_REQUIRE_SERVICES === "1";

export interface Service {
  available: boolean;
  /** Why the probe failed; null when the service answered. */
  reason: string | null;
  /**
   * `describe` for suites that need the service. When it is unreachable the suite is skipped with the reason in its
   * title, or, with `MUSTER_REQUIRE_SERVICES=1`, replaced by one failing test that says what is missing.
   */
  describe(title: string, body: () => void): void;
}

/**
 * Probes an external service (Redis, PostgreSQL...) once, at collection time. `probe` resolves when the service
 * answers and throws otherwise; it should give up within a few seconds.
 */
export async function requireService(name: string, probe: () => Promise<unknown>): Promise<Service> {
  let reason: string | null = null;
  try {
    await probe();
  } catch (error) {
    reason = error instanceof Error ? error.message : String(error);
  }
  const available = reason === null;
  return {
    available,
    reason,
    describe(title, body) {
      if (available) return describe(title, body);
      const missing = `${name} is unreachable (${reason})`;
      if (servicesRequired) {
        return describe(title, () => {
          test(`${name} is reachable (MUSTER_REQUIRE_SERVICES=1)`, () => {
            throw new Error(`${missing}; MUSTER_REQUIRE_SERVICES=1 requires it.`);
          });
        });
      }
      console.warn(`Skipping "${title}": ${missing}. Set MUSTER_REQUIRE_SERVICES=1 to make this a failure.`);
      return describe.skip(`${title} [skipped: ${missing}]`, body);
    },
  };
}

/** The Redis the Redis suites use (TEST_REDIS_URL, or the local default). */
export const testRedisUrl = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** `requireService` for the Redis at `testRedisUrl`: it answers a PING within a few seconds. */
export async function requireRedis(): Promise<Service> {
  const { Redis } = await import("ioredis");
  return requireService(`Redis at ${testRedisUrl}`, async () => {
    const probe = new Redis(testRedisUrl, {
      lazyConnect: true,
      connectTimeout: 2000,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    let cause: Error | undefined;
    probe.on("error", (error: Error) => (cause ??= error));
    try {
      await probe.connect();
      await probe.ping();
    } catch (error) {
      throw cause ?? error;
    } finally {
      probe.disconnect();
    }
  });
}
