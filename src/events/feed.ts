import type { Database } from "../db/prisma.ts";
import { models } from "../db/datamodel.ts";
import { decode, quote } from "../db/dialect.ts";
import type { ChangeEventRecord } from "../core/events.ts";

/**
 * Where a reader of the outbox stands: the last event it has seen, by the events' order key (txid, id).
 *
 * Why not `id` alone: on PostgreSQL, writes that no other write can invalidate commit side by side
 * (src/data/independent-writes.ts), so event 101 may commit before event 100, and a reader that took 101 and moved on
 * would never see 100. So each event also carries, in `txid`, a horizon: the greater of one past the highest
 * transaction id completed when it was written (`pg_snapshot_xmax`) and one past its own transaction's id
 * (src/data/outbox.ts, `POSTGRES_EVENT_HORIZON`). Events are read in (txid, id) order, and only those whose horizon
 * every still-running transaction is past (`txid <= pg_snapshot_xmin` of the reader's snapshot). Any event not
 * visible yet belongs to a transaction that was running when the reader's snapshot was taken (its id at least that
 * xmin) or that had no id yet (its id will be at least the snapshot's xmax): either way its horizon, above its own
 * id, is above the reader's xmin, and it sorts after everything shown. Two writes to the same row keep their order:
 * the second waits for the first's commit, so the highest completed id it sees is at least the first's, and its
 * horizon and id are not below the first's. On SQLite one transaction writes at a time, txid is 0 and ids are in
 * commit order.
 */
export interface FeedPosition {
  txid: string;
  id: number;
}

export const START: FeedPosition = { txid: "0", id: 0 };

/** A position a client holds: also when its event was written, to tell a cursor older than the retention period. */
export interface Cursor extends FeedPosition {
  createdAt: number;
}

const CURSOR_VERSION = "c1";

export function encodeCursor(event: Pick<ChangeEventRecord, "txid" | "id" | "createdAt">): string {
  return Buffer.from(`${CURSOR_VERSION}:${event.txid}:${event.id}:${event.createdAt.getTime()}`).toString("base64url");
}

/** The cursor `text` stands for, or null when it is not one of ours. */
export function decodeCursor(text: string): Cursor | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(text)) return null;
  const match = /^c1:(\d{1,19}):(\d{1,15}):(\d{1,15})$/.exec(Buffer.from(text, "base64url").toString("utf8"));
  if (!match) return null;
  const [, txid, id, createdAt] = match;
  if (
    BigInt(txid) > 9223372036854775807n ||
    !Number.isSafeInteger(Number(id)) ||
    !Number.isSafeInteger(Number(createdAt))
  )
    return null;
  return { txid: BigInt(txid).toString(), id: Number(id), createdAt: Number(createdAt) };
}

const model = models.get("ChangeEvent")!;
const columns = model.scalars.map((s) => quote(s.name)).join(", ");

export interface ReadOptions {
  accountId: number;
  after: FeedPosition;
  limit: number;
  /** Only these types (all when absent or empty). */
  types?: readonly string[];
  /** Only events that may call webhooks (`notify`). */
  notifying?: boolean;
}

/**
 * Shown to readers on PostgreSQL: only events whose horizon every running transaction is past (see above). `alias` is
 * the ChangeEvent table's name in the statement, when it has one.
 */
export const visibleOnPostgres = (alias = "") =>
  `${alias ? `${alias}.` : ""}"txid" <= pg_snapshot_xmin(pg_current_snapshot())::text::bigint`;

type Reader = Pick<Database, "read" | "provider">;

/** What every read of the feed starts from: the account's visible events, of `types` and `notifying` when given. */
function feedQuery(db: Reader, options: Pick<ReadOptions, "accountId" | "types" | "notifying">) {
  const pg = db.provider === "postgresql";
  const params: unknown[] = [];
  const param = (value: unknown) => (params.push(value), pg ? `$${params.length}` : "?");
  /** The conditions, their parameters added where they stand (SQLite numbers `?` by position: a second copy adds them again). */
  const conditions = () => {
    const where = [`"accountId" = ${param(options.accountId)}`];
    if (pg) where.push(visibleOnPostgres());
    if (options.types?.length) where.push(`"type" IN (${options.types.map(param).join(", ")})`);
    if (options.notifying) where.push(`"notify" = ${pg ? "true" : "1"}`);
    return where;
  };
  const select = (where: string[]) => `SELECT ${columns} FROM "ChangeEvent" WHERE ${where.join(" AND ")}`;
  const txid = (position: FeedPosition) => param(pg ? position.txid : Number(position.txid));
  /**
   * The events after (`>`) or before (`<`) `position` in (txid, id) order, at most `limit`, the nearest first.
   *
   * On SQLite, `("txid", "id") > (?, ?)` seeks the index on `txid` alone and filters `id` row by row, and there every
   * event has txid 0: each read walked the account's whole log (6.9 ms at 100,000 events, every webhook's every
   * claim and read). So there it is written as the events of the position's own txid past its id and those of the
   * txids beyond, each one seek of the index, merged in order. PostgreSQL takes the row comparison as an index condition.
   */
  const rows = async (order: "ASC" | "DESC", limit: number, beyond?: { op: ">" | "<"; position: FeedPosition }) => {
    const ordered = `ORDER BY "txid" ${order}, "id" ${order}`;
    let sql: string;
    if (!beyond) sql = `${select(conditions())} ${ordered}`;
    else if (pg)
      sql = `${select([...conditions(), `("txid", "id") ${beyond.op} (${txid(beyond.position)}, ${param(beyond.position.id)})`])} ${ordered}`;
    else {
      const sameTxid = select([
        ...conditions(),
        `"txid" = ${txid(beyond.position)}`,
        `"id" ${beyond.op} ${param(beyond.position.id)}`,
      ]);
      const laterTxids = select([...conditions(), `"txid" ${beyond.op} ${txid(beyond.position)}`]);
      sql = `SELECT * FROM (${sameTxid} UNION ALL ${laterTxids}) ${ordered}`;
    }
    return (await db.read(`${sql} LIMIT ${param(limit)}`, params)).map((row) => toRecord(pg, row));
  };
  return { params, conditions, rows };
}

/** The account's events after `after`, in order, at most `limit`: only those no running transaction can precede. */
export async function readEvents(db: Reader, options: ReadOptions): Promise<ChangeEventRecord[]> {
  return feedQuery(db, options).rows("ASC", options.limit, { op: ">", position: options.after });
}

function toRecord(pg: boolean, row: unknown[]): ChangeEventRecord {
  const event: Record<string, unknown> = Object.fromEntries(
    model.scalars.map((s, i) => [s.name, decode(pg ? "postgresql" : "sqlite", s, row[i])]),
  );
  event.txid = String(event.txid);
  // ChangeEvent's columns, decoded by the datamodel as every row of the store is.
  return event as unknown as ChangeEventRecord;
}

/** The event with `id` in the account, or null (redelivery, tests). */
export async function eventById(db: Reader, accountId: number, id: number): Promise<ChangeEventRecord | null> {
  const pg = db.provider === "postgresql";
  const rows = await db.read(
    `SELECT ${columns} FROM "ChangeEvent" WHERE "accountId" = ${pg ? "$1" : "?"} AND "id" = ${pg ? "$2" : "?"}`,
    [accountId, id],
  );
  return rows[0] ? toRecord(pg, rows[0]) : null;
}

/**
 * The account's last `limit` events before `before` (the newest shown when absent), in order: the same events
 * `readEvents` shows, read from the other end (a change feed read backwards, `changes(last:)`).
 */
export async function readEventsBefore(
  db: Reader,
  options: Omit<ReadOptions, "after"> & { before?: FeedPosition },
): Promise<ChangeEventRecord[]> {
  const beyond = options.before && { op: "<" as const, position: options.before };
  return (await feedQuery(db, options).rows("DESC", options.limit, beyond)).reverse();
}

/** How many of the account's events `readEvents` would show from the start (of `types`, when given). */
export async function countEvents(db: Reader, options: Pick<ReadOptions, "accountId" | "types">): Promise<number> {
  const { conditions, params } = feedQuery(db, options);
  const [row] = await db.read(`SELECT COUNT(*) FROM "ChangeEvent" WHERE ${conditions().join(" AND ")}`, params);
  return Number(row[0]);
}
