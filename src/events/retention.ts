import type { Database } from "../db/prisma.ts";
import type { Config } from "../core/config.ts";

/** Rows one DELETE removes: a long backlog is pruned in steps, never one statement holding the write lock for long. */
const BATCH = 5000;
/** Steps per run: the rest waits for the next run, so one run's work is bounded. */
const STEPS = 20;

/** The oldest time a kept event (or delivery-log row) may have: older ones are pruned. */
export const retentionCutoff = (config: Pick<Config, "eventRetentionDays">, now = Date.now()): Date =>
  new Date(now - config.eventRetentionDays * 86_400_000);

/**
 * The statement of one step: the oldest `limit` rows of `table` created before `$1`. Picked in `createdAt` order, a
 * range of its index; in `id` order SQLite walked the whole table by rowid to find them, holding the write lock
 * (25 ms at 100,000 events, none of them old).
 */
export const deleteOlderThanSql = (table: "ChangeEvent" | "WebhookDelivery", limit: number): string =>
  `DELETE FROM "${table}" WHERE "id" IN (SELECT "id" FROM "${table}" WHERE "createdAt" < $1 ORDER BY "createdAt" LIMIT ${limit})`;

/** One bounded step: deletes up to `limit` rows of `table` created before `before`; answers how many. */
export function deleteOlderThan(
  client: Pick<Database["prisma"], "$executeRawUnsafe">,
  table: "ChangeEvent" | "WebhookDelivery",
  before: Date,
  limit: number,
): Promise<number> {
  return client.$executeRawUnsafe(deleteOlderThanSql(table, limit), before);
}

/** Deletes events older than the retention period; answers how many. */
export async function pruneEvents(
  db: Pick<Database, "prisma">,
  config: Pick<Config, "eventRetentionDays">,
  now = Date.now(),
): Promise<number> {
  const before = retentionCutoff(config, now);
  let pruned = 0;
  for (let step = 0; step < STEPS; step++) {
    const deleted = await deleteOlderThan(db.prisma, "ChangeEvent", before, BATCH);
    pruned += deleted;
    if (deleted < BATCH) break;
  }
  return pruned;
}

const HOUR = 3_600_000;

/** Prunes now and every hour until stopped; a failed run is reported and the next one tries again. */
export const startEventPruning = (
  db: Pick<Database, "prisma">,
  config: Pick<Config, "eventRetentionDays">,
  onError: (error: unknown) => void,
) => everyHour(() => pruneEvents(db, config), onError);

/** Runs `prune` now and every hour until stopped; a failed run is reported and the next one tries again. */
export function everyHour(prune: () => Promise<unknown>, onError: (error: unknown) => void) {
  let running: Promise<unknown> = Promise.resolve();
  const run = () => {
    running = prune().catch(onError);
  };
  const timer = setInterval(run, HOUR);
  timer.unref();
  run();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
