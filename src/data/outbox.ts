import { actorOf, type Context } from "../request/context.ts";
import type { ResourceDef } from "../resources/define.ts";
import { eventAttributes } from "./attributes.ts";
import type { Row, StoredRow } from "../db/models-by-name.ts";
import type { StoreTransaction } from "../db/transaction.ts";
import { storedDateTime } from "../db/dialect.ts";
import { eventTypeOf } from "../resources/event-types.ts";
import type { ChangeAction, ChangeEventRecord, PublishedEvent } from "../core/events.ts";

/**
 * The transactional outbox: every write that changes a record appends an event in the same transaction
 * (src/data/write.ts calls these), so a rolled-back write leaves none and a committed one cannot lose its events.
 * Events wait in memory until the transaction's work is done and are written by `writeEvents` as the transaction's
 * last statement (`StoreTransaction.atCommit`); once committed they are announced on the bus (`announceEvents`).
 */
interface PendingEvent {
  def: ResourceDef;
  action: ChangeAction;
  /** The row after the change; before it, for a deletion. */
  row: StoredRow;
  /** An update's row before it. */
  before?: Row;
}

declare module "../db/transaction.ts" {
  interface TransactionCarry {
    /** The events its writes have recorded, in order, until `writeEvents` writes them. */
    events: PendingEvent[];
  }
}

const attributesByResource = new Map<ResourceDef, (row: Row, ctx: Context) => Record<string, unknown>>();
const shown = (ctx: Context, def: ResourceDef, row: Row) => {
  let attributes = attributesByResource.get(def);
  if (!attributes) attributesByResource.set(def, (attributes = eventAttributes(def)));
  return attributes(row, ctx);
};

function append(tx: StoreTransaction, event: PendingEvent): void {
  if (event.def.silent) return;
  (tx.carry.events ??= []).push(event);
}

export function recordCreated(tx: StoreTransaction, def: ResourceDef, row: StoredRow): void {
  append(tx, { def, action: "created", row });
}

export function recordUpdated(tx: StoreTransaction, def: ResourceDef, before: Row, after: StoredRow): void {
  append(tx, { def, action: "updated", row: after, before });
}

/** `rows`: the deleted rows as they were, in the order they are reported. */
export function recordDeleted(tx: StoreTransaction, def: ResourceDef, rows: StoredRow[]): void {
  for (const row of rows) append(tx, { def, action: "deleted", row });
}

/** Attributes that change with every write and say nothing of what changed. */
const BOOKKEEPING = new Set(["updated_at"]);

/** What an event stores: the record as REST shows it, and an update's changes; null for an update that changed nothing. */
function contentOf(ctx: Context, event: PendingEvent): Pick<ChangeEventRecord, "data" | "changes"> | null {
  const data = shown(ctx, event.def, event.row);
  if (!event.before) return { data, changes: null };
  const old = shown(ctx, event.def, event.before);
  const changes: Record<string, { old: unknown; new: unknown }> = {};
  for (const [key, value] of Object.entries(data)) {
    if (BOOKKEEPING.has(key)) continue;
    const before = old[key];
    // Most attributes are strings, numbers or null: equal ones are compared without encoding them.
    if (value !== before && JSON.stringify(value) !== JSON.stringify(before))
      changes[key] = { old: before ?? null, new: value };
  }
  return Object.keys(changes).length ? { data, changes } : null;
}

const COLUMNS = [
  "accountId",
  "type",
  "resource",
  "recordId",
  "data",
  "changes",
  "requestId",
  "traceId",
  "notify",
  "actor",
  "txid",
  "automationRunId",
  "depth",
  "createdAt",
];
/** Rows per INSERT: at most 12 parameters each stays under both databases' limits on parameters per statement. */
const ROWS_PER_STATEMENT = 500;

/**
 * The horizon an event is written with on PostgreSQL (src/events/feed.ts says why): past every transaction completed
 * when it is written (`pg_snapshot_xmax` is one past the highest completed id) and past its own transaction's id. The
 * second matters: while no transaction numbered at or above this one's has completed, xmax is at most this one's own
 * id, which a reader's xmin can reach while this transaction is still running; that reader would then show a
 * later-numbered event of the same horizon and move past this one before it committed (a webhook delivery was lost
 * that way under 32 concurrent writes in `npm run bench`).
 */
export const POSTGRES_EVENT_HORIZON =
  "GREATEST(pg_snapshot_xmax(pg_current_snapshot())::text::bigint, pg_current_xact_id()::text::bigint + 1)";

/** The events of a transaction as stored, known once it has committed. */
export interface WrittenEvents {
  stored: Promise<ChangeEventRecord[]>;
}

const NONE: WrittenEvents = { stored: Promise.resolve([]) };

/**
 * Writes the transaction's pending events, in the order they were recorded, as the work's last step: the last (or
 * only) statement goes with the COMMIT (`StoreTransaction.atCommit`), so `stored` settles once the transaction has
 * committed. On PostgreSQL each event carries the horizon of the moment it was written (`POSTGRES_EVENT_HORIZON`). The
 * transaction has written already (each event stands for a write), so it holds a transaction id below that horizon.
 */
export async function writeEvents(ctx: Context, tx: StoreTransaction): Promise<WrittenEvents> {
  const recorded = tx.carry.events;
  if (!recorded?.length) return NONE;
  tx.carry.events = undefined;
  // An update that changed no attribute records nothing.
  const pending = recorded.flatMap((event) => {
    const content = contentOf(ctx, event);
    return content ? [{ ...event, ...content }] : [];
  });
  if (!pending.length) return NONE;
  const sql = tx.sql;
  const pg = sql.dialect === "postgresql";
  const createdAt = new Date();
  const accountId = ctx.auth!.accountId;
  const actor = actorOf(ctx.auth);
  const actorJson = actor && JSON.stringify(actor);
  // Integers the runner set (src/events/automations), written as literals: no parameter more per row.
  const runId = ctx.automation ? String(Math.trunc(ctx.automation.runId)) : "NULL";
  const depth = ctx.automation ? Math.trunc(ctx.automation.depth) : 0;
  const stored: ChangeEventRecord[] = [];
  const keep = (chunk: typeof pending, rows: unknown[][]) => {
    // One INSERT numbers its rows in the order of VALUES; RETURNING need not list them in that order.
    rows.sort((a, b) => Number(a[0]) - Number(b[0]));
    chunk.forEach((event, i) => {
      const [id, txid] = rows[i];
      stored.push({
        id: Number(id),
        accountId,
        type: eventTypeOf(event.def, event.action),
        resource: event.def.name,
        recordId: event.row.id,
        data: event.data,
        changes: event.changes,
        requestId: ctx.requestId,
        traceId: ctx.traceId,
        notify: ctx.notify,
        actor,
        txid: String(txid),
        automationRunId: ctx.automation?.runId ?? null,
        depth,
        createdAt,
      });
    });
  };
  for (let start = 0; ; start += ROWS_PER_STATEMENT) {
    const chunk = pending.slice(start, start + ROWS_PER_STATEMENT);
    const params: unknown[] = [];
    const param = (value: unknown, cast = "") => (params.push(value), pg ? `$${params.length}${cast}` : "?");
    const values = chunk.map((event) => {
      const row = [
        param(accountId),
        param(eventTypeOf(event.def, event.action)),
        param(event.def.name),
        param(event.row.id),
        param(JSON.stringify(event.data), "::jsonb"),
        event.changes ? param(JSON.stringify(event.changes), "::jsonb") : "NULL",
        param(ctx.requestId),
        param(ctx.traceId),
        pg ? param(ctx.notify, "::boolean") : param(ctx.notify ? 1 : 0),
        actorJson ? param(actorJson, "::jsonb") : "NULL",
        pg ? POSTGRES_EVENT_HORIZON : "0",
        runId,
        String(depth),
        param(storedDateTime(sql.dialect, createdAt), pg ? "::timestamp(3)" : ""),
      ];
      return `(${row.join(", ")})`;
    });
    const insert = `INSERT INTO "ChangeEvent" (${COLUMNS.map((c) => `"${c}"`).join(", ")}) VALUES ${values.join(", ")} RETURNING "id", "txid"`;
    if (start + ROWS_PER_STATEMENT < pending.length) {
      keep(chunk, await sql.all(insert, params));
      continue;
    }
    const written = tx.atCommit(insert, params).then((rows) => (keep(chunk, rows), stored));
    // Awaited once the transaction has committed; if it fails, its own failure is what the caller sees.
    written.catch(() => undefined);
    return { stored: written };
  }
}

/** Tells subscriptions and the webhook dispatcher (of every instance, with Redis) that `events` have committed. */
export function announceEvents(ctx: Context, events: ChangeEventRecord[]): void {
  if (!events.length) return;
  const published: PublishedEvent[] = events.map((e) => ({ ...e, createdAt: e.createdAt.toISOString() }));
  ctx.events.publish({ accountId: events[0].accountId, events: published });
}
