import type { Database } from "../../db/prisma.ts";
import { mayRunTwice } from "../../db/transaction.ts";
import { statement } from "../../db/statement-params.ts";
import { visibleOnPostgres, type FeedPosition } from "../feed.ts";
import type { AutomationAction } from "../../resources/automation-actions.ts";

/**
 * The runner's statements on the Automation table: claiming automations that have work (events after their cursor,
 * or a schedule that is due) with a lease, so that each is worked by one instance at a time, moving a cursor or a due
 * time while the lease is held, and giving an automation back. As src/events/webhooks/leases.ts, whose claim this
 * follows: on PostgreSQL `FOR UPDATE SKIP LOCKED`, on SQLite one writer at a time.
 */

type Db = Pick<Database, "provider" | "prisma" | "store">;

/** An automation as the runner works it: what it was claimed with. */
export interface ClaimedAutomation {
  id: number;
  accountId: number;
  name: string;
  triggers: string[];
  schedule: string | null;
  condition: string | null;
  priority: number;
  actions: AutomationAction[];
  ownerKeyId: number | null;
  ownerUserId: number | null;
  ownerScopes: string[];
  secret: string;
  cursor: FeedPosition;
  /** Failed attempts at the run after the cursor (or at the due run). */
  attempts: number;
  nextRunAt: Date | null;
}

const WAIT_MS = 10_000;

const jsonOf = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : value);
const strings = (value: unknown): string[] => {
  const list = jsonOf(value);
  return Array.isArray(list) ? list.filter((t): t is string => typeof t === "string") : [];
};

/** The claimed rows, read back whole (the claim returns their ids). */
async function claimedRows(db: Db, ids: number[]): Promise<ClaimedAutomation[]> {
  if (!ids.length) return [];
  const rows = await db.prisma.automation.findMany({ where: { id: { in: ids } }, orderBy: { id: "asc" } });
  return rows.map((row) => ({
    id: row.id,
    accountId: row.accountId,
    name: row.name,
    triggers: strings(row.triggers),
    schedule: row.schedule,
    condition: row.condition,
    priority: row.priority,
    actions: (jsonOf(row.actions) as AutomationAction[] | null) ?? [],
    ownerKeyId: row.ownerKeyId,
    ownerUserId: row.ownerUserId,
    ownerScopes: strings(row.ownerScopes),
    secret: row.secret,
    cursor: { txid: row.cursorTxid.toString(), id: row.cursorId },
    attempts: row.attempts,
    nextRunAt: row.nextRunAt,
  }));
}

/**
 * Claims up to `limit` enabled automations that have work and are not leased to anyone (nor waiting for a retry):
 * `events`, those triggered by events with one after their cursor; `schedules`, those with a schedule due by `now`.
 * Leases them to `instance` until `until`, least recently worked first.
 */
export async function claimAutomations(
  db: Db,
  kind: "events" | "schedules",
  instance: string,
  now: Date,
  until: Date,
  limit: number,
): Promise<ClaimedAutomation[]> {
  /** The claimable automations' conditions, their parameters added to `q` where they stand. */
  const claimable = (q: ReturnType<typeof statement>) => {
    const free = `a."enabled" = ${q.bool(true)} AND (a."nextAttemptAt" IS NULL OR a."nextAttemptAt" <= ${q.time(now)})
      AND (a."claimedUntil" IS NULL OR a."claimedUntil" <= ${q.time(now)})`;
    if (kind === "schedules")
      return `${free} AND a."schedule" IS NOT NULL AND a."nextRunAt" IS NOT NULL AND a."nextRunAt" <= ${q.time(now)}`;
    const pending = (beyond: string) =>
      `SELECT 1 FROM "ChangeEvent" e WHERE e."accountId" = a."accountId" AND ${beyond}`;
    return `${free} AND a."schedule" IS NULL AND ${
      q.pg
        ? `EXISTS (${pending(`(e."txid", e."id") > (a."cursorTxid", a."cursorId") AND ${visibleOnPostgres("e")}`)})`
        : `(EXISTS (${pending(`e."txid" = a."cursorTxid" AND e."id" > a."cursorId"`)}) OR EXISTS (${pending(`e."txid" > a."cursorTxid"`)}))`
    }`;
  };
  // Looked for on committed data first: a claim is a write, and on SQLite every write waits for the one writer, so
  // the claims that every commit sets off are written only when there is something to claim.
  const probe = statement(db);
  const probeSql = `SELECT 1 FROM "Automation" a WHERE ${claimable(probe)} LIMIT 1`;
  if ((await db.store.read(probeSql, probe.params)).length === 0) return [];
  const q = statement(db);
  const lease = `"claimedBy" = ${q.value(instance)}, "claimedUntil" = ${q.time(until)}`;
  const where = claimable(q);
  const order = `ORDER BY a."claimedUntil" ASC NULLS FIRST, a."priority" DESC, a."id" LIMIT ${q.value(limit)}`;
  const sql = q.pg
    ? `WITH picked AS (SELECT a."id" FROM "Automation" a WHERE ${where} ${order} FOR UPDATE OF a SKIP LOCKED)
       UPDATE "Automation" u SET ${lease} FROM picked WHERE u."id" = picked."id" RETURNING u."id"`
    : `UPDATE "Automation" SET ${lease} WHERE "id" IN (SELECT a."id" FROM "Automation" a WHERE ${where} ${order}) RETURNING "id"`;
  const rows = await db.store.transaction(
    mayRunTwice((tx) => tx.sql.all(sql, q.params)),
    { direct: true, maxWait: WAIT_MS, timeout: WAIT_MS },
  );
  return claimedRows(
    db,
    rows.map((row) => Number(row[0])),
  );
}

/** The Automation row as `instance` holds it: its lease, enabled, its cursor and due time where this instance left them. */
export const heldWhere = (automation: ClaimedAutomation, instance: string) => ({
  id: automation.id,
  claimedBy: instance,
  enabled: true,
  cursorTxid: BigInt(automation.cursor.txid),
  cursorId: automation.cursor.id,
  nextRunAt: automation.nextRunAt,
});

/** Moves the cursor past events the automation is not triggered by, renewing the lease; false when the lease is lost. */
export async function moveCursor(
  db: Db,
  automation: ClaimedAutomation,
  instance: string,
  cursor: FeedPosition,
  claimedUntil: Date,
): Promise<boolean> {
  const { count } = await db.store.transaction((tx) =>
    tx.prisma.automation.updateMany({
      where: heldWhere(automation, instance),
      data: { cursorTxid: BigInt(cursor.txid), cursorId: cursor.id, claimedUntil },
    }),
  );
  if (count === 1) automation.cursor = cursor;
  return count === 1;
}

/** Renews the lease while a run is under way (a slow action); false when it is lost. */
export async function renewLease(
  db: Db,
  automation: ClaimedAutomation,
  instance: string,
  claimedUntil: Date,
): Promise<boolean> {
  const { count } = await db.store.transaction((tx) =>
    tx.prisma.automation.updateMany({ where: heldWhere(automation, instance), data: { claimedUntil } }),
  );
  return count === 1;
}

/** Gives the automation back: any instance may claim it again at once. Its claim time is kept, for the claim order. */
export async function releaseAutomation(db: Db, automationId: number, instance: string, now: Date): Promise<void> {
  await db.store.transaction((tx) =>
    tx.prisma.automation.updateMany({
      where: { id: automationId, claimedBy: instance },
      data: { claimedBy: null, claimedUntil: now },
    }),
  );
}
