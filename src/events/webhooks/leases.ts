import type { Database } from "../../db/prisma.ts";
import { mayRunTwice, type TransactionSql } from "../../db/transaction.ts";
import { statement } from "../../db/statement-params.ts";
import { deleteOlderThan } from "../retention.ts";
import { visibleOnPostgres, type FeedPosition } from "../feed.ts";

/**
 * The dispatcher's statements on the Webhook table: claiming webhooks that have events to deliver (a lease, so that
 * each is worked by one instance at a time), recording an attempt, moving a cursor, giving a webhook back, and
 * pruning the delivery log.
 *
 * Each runs in a transaction of the app's own (`store.transaction(..., { direct: true })`: on PostgreSQL, BEGIN goes out with
 * the first statement on a connection Prisma is kept out of), with the statements written out: Prisma's interactive
 * transactions cost more than the delivery they record. Times are the dispatcher's clock, written as each database
 * stores Prisma's DateTimes (an ISO string on SQLite, a `timestamp(3)` in UTC on PostgreSQL), so they compare with what
 * Prisma writes. Instances' clocks are assumed to agree to well within a lease.
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

type Db = Pick<Database, "provider" | "prisma" | "store">;

/** How long a statement of the dispatcher may wait for the app's write transactions (one at a time on SQLite). */
const WAIT_MS = 10_000;

/** `work` in one short transaction, with a way to write out its statements. */
function inTransaction<T>(db: Db, work: (sql: TransactionSql) => Promise<T>): Promise<T> {
  return db.store.transaction(
    mayRunTwice((tx) => work(tx.sql)),
    { direct: true, maxWait: WAIT_MS, timeout: WAIT_MS },
  );
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

function toClaimed([
  id,
  accountId,
  url,
  secret,
  events,
  cursorTxid,
  cursorId,
  attempts,
  failingSince,
]: unknown[]): ClaimedWebhook {
  return {
    id: Number(id),
    accountId: Number(accountId),
    url: String(url),
    secret: String(secret),
    events: parseEvents(events),
    cursor: { txid: BigInt(cursorTxid as bigint | number | string).toString(), id: Number(cursorId) },
    attempts: Number(attempts),
    failingSince: parseTime(failingSince),
  };
}

const RETURNED = [
  "id",
  "accountId",
  "url",
  "secret",
  "events",
  "cursorTxid",
  "cursorId",
  "attempts",
  "failingSince",
].map((c) => `"${c}"`);

/**
 * Claims up to `limit` enabled webhooks that are due (no retry pending, or its time has come), not leased to anyone,
 * and have an event to deliver after their cursor; leases them to `instance` until `until`. Least recently worked
 * first, so that busy webhooks do not starve the others.
 *
 * On PostgreSQL the rows are picked with `FOR UPDATE SKIP LOCKED` in the statement that leases them: instances
 * claiming at the same moment skip each other's rows instead of waiting for them or taking them twice. On SQLite one
 * statement writes at a time, which is enough.
 */
export async function claimWebhooks(
  db: Db,
  instance: string,
  now: Date,
  until: Date,
  limit: number,
): Promise<ClaimedWebhook[]> {
  const q = statement(db);
  // In the order of the SQL text: SQLite's placeholders are numbered by where they stand.
  const lease = `"claimedBy" = ${q.value(instance)}, "claimedUntil" = ${q.time(until)}`;
  const enabled = q.bool(true);
  const at = q.time(now);
  /** Whether the webhook has an event past its cursor, of those `beyond` describes. */
  const pending = (beyond: string) =>
    `SELECT 1 FROM "ChangeEvent" e WHERE e."accountId" = w."accountId" AND ${beyond} AND e."notify" = ${q.bool(true)}`;
  const due = `w."enabled" = ${enabled} AND (w."nextAttemptAt" IS NULL OR w."nextAttemptAt" <= ${at})
    AND (w."claimedUntil" IS NULL OR w."claimedUntil" <= ${q.pg ? at : q.time(now)})
    AND ${
      q.pg
        ? `EXISTS (${pending(`(e."txid", e."id") > (w."cursorTxid", w."cursorId") AND ${visibleOnPostgres("e")}`)})`
        : // A row comparison seeks on txid alone on SQLite, where every event's is 0 (see `feedQuery` in ../feed.ts).
          `(EXISTS (${pending(`e."txid" = w."cursorTxid" AND e."id" > w."cursorId"`)}) OR EXISTS (${pending(`e."txid" > w."cursorTxid"`)}))`
    }`;
  const order = `ORDER BY w."claimedUntil" ASC NULLS FIRST, w."id" LIMIT ${q.value(limit)}`;
  const sql = q.pg
    ? `WITH picked AS (SELECT w."id" FROM "Webhook" w WHERE ${due} ${order} FOR UPDATE OF w SKIP LOCKED)
       UPDATE "Webhook" u SET ${lease} FROM picked WHERE u."id" = picked."id" RETURNING ${RETURNED.map((c) => `u.${c}`).join(", ")}`
    : `UPDATE "Webhook" SET ${lease} WHERE "id" IN (SELECT w."id" FROM "Webhook" w WHERE ${due} ${order}) RETURNING ${RETURNED.join(", ")}`;
  const rows = await inTransaction(db, (tx) => tx.all(sql, q.params));
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

/**
 * `UPDATE "Webhook" SET <set> WHERE` the row is still as `instance` holds it: its lease, enabled, the cursor where this
 * instance left it (a lease that ran out and came back after another instance moved the cursor is not taken for this
 * one's). It returns the row's id when it changed it.
 */
function updateHeld(q: ReturnType<typeof statement>, webhook: ClaimedWebhook, instance: string, set: string[]): string {
  return `UPDATE "Webhook" SET ${set.join(", ")}
    WHERE "id" = ${q.value(webhook.id)} AND "claimedBy" = ${q.value(instance)} AND "enabled" = ${q.bool(true)}
      AND "cursorTxid" = ${q.txid(webhook.cursor.txid)} AND "cursorId" = ${q.value(webhook.cursor.id)}
    RETURNING "id"`;
}

/**
 * Logs an attempt and moves the webhook to `state`, in one transaction. The row changes only while `instance` holds
 * it (`updateHeld`); false when it no longer does (the lease ran out and another instance took it over, the webhook
 * was disabled or deleted): the caller then stops working it. The attempt is logged either way, since it was made.
 */
export async function recordAttempt(
  db: Db,
  webhook: ClaimedWebhook,
  instance: string,
  log: AttemptLog,
  state: WebhookState,
  now: Date,
): Promise<boolean> {
  const update = statement(db);
  const set = [
    `"cursorTxid" = ${update.txid(state.cursor.txid)}`,
    `"cursorId" = ${update.value(state.cursor.id)}`,
    `"attempts" = ${update.value(state.attempts)}`,
    `"failingSince" = ${update.time(state.failingSince)}`,
    `"nextAttemptAt" = ${update.time(state.nextAttemptAt)}`,
    `"updatedAt" = ${update.time(now)}`,
  ];
  if (state.disabledReason !== undefined)
    set.push(`"enabled" = ${update.bool(false)}`, `"disabledReason" = ${update.value(state.disabledReason)}`);
  if (state.claimedUntil) set.push(`"claimedUntil" = ${update.time(state.claimedUntil)}`);
  else set.push(`"claimedBy" = NULL`, `"claimedUntil" = ${update.time(now)}`);
  const updateSql = updateHeld(update, webhook, instance, set);

  const insert = statement(db);
  const values = [
    insert.value(webhook.id),
    insert.value(webhook.accountId),
    insert.value(log.eventId),
    insert.value(log.eventType),
    insert.value(log.deliveryId),
    insert.value(log.attempt),
    insert.value(log.statusCode),
    insert.value(log.durationMs),
    insert.value(log.error),
    insert.bool(log.succeeded),
    insert.time(now),
  ];
  const insertSql = `INSERT INTO "WebhookDelivery" ("webhookId", "accountId", "eventId", "eventType", "deliveryId", "attempt", "statusCode", "durationMs", "error", "succeeded", "createdAt")
    VALUES (${values.join(", ")})`;

  return inTransaction(db, async (tx) => {
    const updated = await tx.all(updateSql, update.params);
    // A webhook deleted meanwhile has no log to write to.
    if (
      updated.length ||
      (await tx.all(`SELECT 1 FROM "Webhook" WHERE "id" = ${insert.pg ? "$1" : "?"}`, [webhook.id])).length
    )
      await tx.all(insertSql, insert.params);
    return updated.length === 1;
  });
}

/** Moves the cursor past events the webhook does not subscribe to, renewing the lease; false when the lease is lost. */
export async function moveCursor(
  db: Db,
  webhook: ClaimedWebhook,
  instance: string,
  cursor: FeedPosition,
  claimedUntil: Date,
): Promise<boolean> {
  const q = statement(db);
  const sql = updateHeld(q, webhook, instance, [
    `"cursorTxid" = ${q.txid(cursor.txid)}`,
    `"cursorId" = ${q.value(cursor.id)}`,
    `"claimedUntil" = ${q.time(claimedUntil)}`,
  ]);
  return (await inTransaction(db, (tx) => tx.all(sql, q.params))).length === 1;
}

/** Gives the webhook back: any instance may claim it again at once. Its claim time is kept, for the claim order. */
export async function releaseWebhook(db: Db, webhookId: number, instance: string, now: Date): Promise<void> {
  const q = statement(db);
  const sql = `UPDATE "Webhook" SET "claimedBy" = NULL, "claimedUntil" = ${q.time(now)} WHERE "id" = ${q.value(webhookId)} AND "claimedBy" = ${q.value(instance)}`;
  await inTransaction(db, (tx) => tx.all(sql, q.params));
}

/** Deletes up to `limit` delivery-log rows written before `before`; how many it deleted. */
export const pruneDeliveries = (db: Db, before: Date, limit: number): Promise<number> =>
  deleteOlderThan(db.prisma, "WebhookDelivery", before, limit);
