// @ts-check
/*
 * Statements and rows on libsql's native (synchronous) driver, shared by the main thread's connection
 * (libsql-native.ts) and the read thread (sqlite-read-worker.mjs). Plain JavaScript: a worker thread loads its file
 * with plain Node, without our TypeScript loader or the bundle. Types: sqlite-rows.d.mts.
 */

/** A statement argument as the driver binds it. */
export function toSql(value) {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value instanceof Date) return value.valueOf();
  if (value instanceof ArrayBuffer) return Buffer.from(value);
  if (value instanceof Uint8Array && !Buffer.isBuffer(value))
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (value === undefined) throw new TypeError("undefined cannot be passed as argument to the database");
  return value;
}

/** A value as the client gives it: a number for an integer (checked when read as BigInt), an ArrayBuffer for a blob. */
function fromSql(value) {
  if (typeof value === "bigint") {
    if (value < BigInt(Number.MIN_SAFE_INTEGER) || value > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new RangeError("Received integer which cannot be safely represented as a JavaScript number");
    }
    return Number(value);
  }
  return value instanceof Buffer ? value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength) : value;
}

/** The driver's rows as the client gives them, converted where they need it: no new array per row. */
export function converted(rows) {
  for (const row of rows) {
    for (let i = 0; i < row.length; i++) {
      const value = row[i];
      if (typeof value === "bigint" || (typeof value === "object" && value !== null)) row[i] = fromSql(value);
    }
  }
  return rows;
}

/**
 * Whether a statement's integers are read as BigInt (each then checked to fit a number): when one of its columns is
 * declared BIGINT, which may hold integers past 2^53. INTEGER columns hold Prisma's 32-bit `Int`s and row ids, and
 * the rest are read as numbers directly: a BigInt per integer was a tenth of a 20-row page's statement time and most
 * of what the driver allocated.
 */
const readsBigIntegers = (columnTypes) => columnTypes.some((type) => /BIGINT/i.test(type));

/** `sql` prepared on `db`, rows as arrays; `columns` null for a statement that returns no rows. */
export function prepare(db, sql) {
  const statement = db.prepare(sql);
  let columns = null;
  let columnTypes = [];
  try {
    statement.raw(true);
    const described = statement.columns();
    columns = described.map((c) => c.name);
    columnTypes = described.map((c) => c.type ?? "");
  } catch {
    // raw() refuses a statement that returns no rows.
  }
  // Decided from the columns it reads (a write's RETURNING columns included); one that reads none needs neither.
  statement.safeIntegers(readsBigIntegers(columnTypes));
  return { statement, columns, columnTypes };
}

/** SQLITE_BUSY (and its extended codes) or SQLITE_LOCKED, from the driver or as Prisma reports it (P1008). */
export function isBusyError(error) {
  for (let e = error, depth = 0; e && depth < 5; e = e.cause, depth++) {
    if (typeof e.rawCode === "number" && ((e.rawCode & 0xff) === 5 || (e.rawCode & 0xff) === 6)) return true;
    if (typeof e.code === "string" && (/^SQLITE_(BUSY|LOCKED)/.test(e.code) || e.code === "P1008")) return true;
    if (typeof e.message === "string" && /database is locked|database table is locked|SQLITE_BUSY/.test(e.message))
      return true;
  }
  return false;
}

/** A connection that only reads: busy is reported at once and waited out on the main thread (sqlite.ts, `whileBusy`). */
export const readOnlyPragmas = ["PRAGMA busy_timeout = 0", "PRAGMA query_only = 1"];

/**
 * Prepared statements kept per connection, least recently prepared dropped first past `limit`: Prisma's, the reader's
 * and the writer's SQL text repeats with the shape of a query.
 */
export class StatementCache {
  constructor(db, limit = 500) {
    this.db = db;
    this.limit = limit;
    this.statements = new Map();
  }

  get(sql) {
    let prepared = this.statements.get(sql);
    if (prepared) return prepared;
    prepared = prepare(this.db, sql);
    if (this.statements.size >= this.limit) this.statements.delete(this.statements.keys().next().value);
    this.statements.set(sql, prepared);
    return prepared;
  }

  clear() {
    this.statements.clear();
  }
}
