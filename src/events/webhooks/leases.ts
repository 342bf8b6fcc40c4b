import type { Database } from "../../db/prisma.ts";
import type { FeedPosition } from "../feed.ts";

/**
 * The dispatcher's statements on the Webhook table: claiming webhooks that have events to deliver (a lease, so that
 * each is worked by one instance at a time), recording an attempt, moving a cursor, giving a webhook back, and
 * pruning the delivery log.
 *
 * Times are the dispatcher's clock, written as each database stores Prisma's DateTimes (an ISO string on SQLite, a
 * `timestamp(3)` in UTC on PostgreSQL), so they compare with what Prisma writes. Instances' clocks are assumed to agree
 * to well within a lease.
 */

/** A webhook as the dispatcher works it: what it was claimed with. */
export interface ClaimedWebhook {
  id: number;
  accountId: number;
  url: string;
  secret: string;
  /** Subscribed types, or `*` among them for all. */
  events: string[];
  cursor: FeedPosition;
  /** Failed attempts at the event after the cursor. */
  attempts: number;
  failingSince: Date | null;
}

const pgTime = (date: Date) => date.toISOString().slice(0, 23);
const sqliteTime = (date: Date) => date.toISOString().replace("Z", "+00:00");

function timeParam(db: Pick<Database, "provider">, date: Date): string {
  return db.provider === "postgresql" ? pgTime(date) : sqliteTime(date);
}

function parseTime(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value;
  if (typeof value === "number" || typeof value === "bigint") return new Date(Number(value));
  const text = String(value).replace(" ", "T");
  return new Date(/[zZ]$|[+-]\d\d:?\d\d$/.test(text) ? text : `${text}Z`);
}

function parseEvents(value: unknown): string[] {
  const list = typeof value === "string" ? JSON.parse(value) : value;
  return Array.isArray(list) ? list.filter((t): t is string => typeof t === "string") : [];
}

function toClaimed(row: Record<string, unknown>): ClaimedWebhook {
  return {
    id: Number(row.id),
    accountId: Number(row.accountId),
    url: String(row.url),
    secret: String(row.secret),
    events: parseEvents(row.events),
    cursor: { txid: BigInt(row.cursorTxid as bigint | number | string).toString(), id: Number(row.cursorId) },
    attempts: Number(row.attempts),
    failingSince: parseTime(row.failingSince),
  };
}

const RETURNED = `"id", "accountId", "url", "secret", "events", "cursorTxid", "cursorId", "attempts", "failingSince"`;

/**
 * Claims up to `limit` enabled webhooks that are due (no retry pending, or its time has come), not leased to anyone,
 * and have an event to deliver after their cursor; leases them to `instance` until `until`. Least recently worked
 * first, so that busy webhooks do not starve the others.
 *
 * On PostgreSQL the rows are picked with `FOR UPDATE SKIP LOCKED` in the statement that leases them: instances
 * claiming at the same moment skip each other's rows instead of waiting for them or taking them twice. On SQLite one
 * statement writes at a time, which is enough.
 */
export async function claimWebhooks(db: Pick<Database, "provider" | "prismaOnly">, instance: string, now: Date, until: Date, limit: number): Promise<ClaimedWebhook[]> {
  const pg = db.provider === "postgresql";
  const rows = pg
    ? await db.prismaOnly.$queryRawUnsafe<Record<string, unknown>[]>(
        `WITH picked AS (
           SELECT w."id" FROM "Webhook" w
           WHERE w."enabled" AND (w."nextAttemptAt" IS NULL OR w."nextAttemptAt" <= $1::timestamp(3))
             AND (w."claimedUntil" IS NULL OR w."claimedUntil" <= $1::timestamp(3))
             AND EXISTS (
               SELECT 1 FROM "ChangeEvent" e
               WHERE e."accountId" = w."accountId" AND (e."txid", e."id") > (w."cursorTxid", w."cursorId") AND e."notify"
                 AND e."txid" < pg_snapshot_xmin(pg_current_snapshot())::text::bigint)
           ORDER BY w."claimedUntil" ASC NULLS FIRST, w."id"
           LIMIT $2
           FOR UPDATE OF w SKIP LOCKED)
         UPDATE "Webhook" u SET "claimedBy" = $3, "claimedUntil" = $4::timestamp(3)
         FROM picked WHERE u."id" = picked."id"
         RETURNING ${RETURNED.split(", ").map((c) => `u.${c}`).join(", ")}`,
        pgTime(now), limit, instance, pgTime(until),
      )
    : await db.prismaOnly.$queryRawUnsafe<Record<string, unknown>[]>(
        `UPDATE "Webhook" SET "claimedBy" = ?, "claimedUntil" = ?
         WHERE "id" IN (
           SELECT w."id" FROM "Webhook" w
           WHERE w."enabled" = 1 AND (w."nextAttemptAt" IS NULL OR w."nextAttemptAt" <= ?)
             AND (w."claimedUntil" IS NULL OR w."claimedUntil" <= ?)
             AND EXISTS (
               SELECT 1 FROM "ChangeEvent" e
               WHERE e."accountId" = w."accountId" AND (e."txid", e."id") > (w."cursorTxid", w."cursorId") AND e."notify" = 1)
           ORDER BY w."claimedUntil" ASC NULLS FIRST, w."id"
           LIMIT ?)
         RETURNING ${RETURNED}`,
        instance, sqliteTime(until), sqliteTime(now), sqliteTime(now), limit,
      );
  return rows.map(toClaimed);
}

/** One attempt at one event, as the delivery log keeps it. */
export interface AttemptLog {
  eventId: number | null;
  eventType: string;
  deliveryId: string;
  attempt: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  succeeded: boolean;
}

/** What the webhook's row becomes after an attempt. */
export interface WebhookState {
  cursor: FeedPosition;
  attempts: number;
  failingSince: Date | null;
  nextAttemptAt: Date | null;
  /** Set when the service disables the webhook. */
  disabledReason?: string;
  /** Lease renewed until then; null gives the webhook back (a retry is pending, or it was disabled). */
  claimedUntil: Date | null;
}

function stateData(state: WebhookState, now: Date) {
  return {
    cursorTxid: BigInt(state.cursor.txid),
    cursorId: state.cursor.id,
    attempts: state.attempts,
    failingSince: state.failingSince,
    nextAttemptAt: state.nextAttemptAt,
    ...(state.disabledReason === undefined ? {} : { enabled: false, disabledReason: state.disabledReason }),
    ...(state.claimedUntil ? { claimedUntil: state.claimedUntil } : { claimedBy: null, claimedUntil: now }),
  };
}

/**
 * The webhook's row while `instance` holds it as it was claimed: its lease, enabled, the cursor where this instance
 * left it (a lease that ran out and came back after another instance moved the cursor is not taken for this one's).
 */
const heldBy = (webhook: ClaimedWebhook, instance: string) => ({
  id: webhook.id, claimedBy: instance, enabled: true, cursorTxid: BigInt(webhook.cursor.txid), cursorId: webhook.cursor.id,
});

/**
 * Logs an attempt and moves the webhook to `state`, in one transaction. The row changes only while `instance` holds
 * it (`heldBy`); false when it no longer does (the lease ran out and another instance took it over, the webhook was
 * disabled or deleted): the caller then stops working it. The attempt is logged either way,
 * since it was made.
 */
export async function recordAttempt(
  db: Pick<Database, "prismaOnly">, webhook: ClaimedWebhook, instance: string, log: AttemptLog, state: WebhookState, now: Date,
): Promise<boolean> {
  const [, updated] = await db.prismaOnly.$transaction([
    db.prismaOnly.webhookDelivery.createMany({ data: [{ webhookId: webhook.id, accountId: webhook.accountId, ...log, createdAt: now }] }),
    db.prismaOnly.webhook.updateMany({ where: heldBy(webhook, instance), data: stateData(state, now) }),
  ]);
  return updated.count === 1;
}

/** Moves the cursor past events the webhook does not subscribe to, renewing the lease; false when the lease is lost. */
export async function moveCursor(db: Pick<Database, "prismaOnly">, webhook: ClaimedWebhook, instance: string, cursor: FeedPosition, claimedUntil: Date): Promise<boolean> {
  const { count } = await db.prismaOnly.webhook.updateMany({
    where: heldBy(webhook, instance),
    data: { cursorTxid: BigInt(cursor.txid), cursorId: cursor.id, claimedUntil },
  });
  return count === 1;
}

/** Gives the webhook back: any instance may claim it again at once. Its claim time is kept, for the claim order. */
export async function releaseWebhook(db: Pick<Database, "prismaOnly">, webhookId: number, instance: string, now: Date): Promise<void> {
  await db.prismaOnly.webhook.updateMany({ where: { id: webhookId, claimedBy: instance }, data: { claimedBy: null, claimedUntil: now } });
}

/** Deletes up to `limit` delivery-log rows written before `before`; how many it deleted. */
export async function pruneDeliveries(db: Pick<Database, "provider" | "prismaOnly">, before: Date, limit: number): Promise<number> {
  const pg = db.provider === "postgresql";
  return db.prismaOnly.$executeRawUnsafe(
    pg
      ? `DELETE FROM "WebhookDelivery" WHERE "id" IN (SELECT "id" FROM "WebhookDelivery" WHERE "createdAt" < $1::timestamp(3) ORDER BY "createdAt" LIMIT $2)`
      : `DELETE FROM "WebhookDelivery" WHERE "id" IN (SELECT "id" FROM "WebhookDelivery" WHERE "createdAt" < ? ORDER BY "createdAt" LIMIT ?)`,
    timeParam(db, before), limit,
  );
}
