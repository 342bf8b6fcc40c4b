import Database from "libsql";
import { LibsqlError, type Client, type InStatement, type ResultSet, type Row } from "@libsql/client";

/** Prepared statements kept per connection: Prisma's and the writer's SQL text repeats with the shape of a query. */
const STATEMENT_CACHE = 500;

interface Prepared {
  statement: Database.Statement;
  /** Null for a statement that returns no rows. */
  columns: string[] | null;
  columnTypes: string[];
}

const toSql = (value: unknown): unknown => {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value instanceof Date) return value.valueOf();
  if (value instanceof ArrayBuffer) return Buffer.from(value);
  if (value === undefined) throw new TypeError("undefined cannot be passed as argument to the database");
  return value;
};

/** A value as the client gives it: a number for an integer (checked when read as BigInt), an ArrayBuffer for a blob. */
const fromSql = (value: unknown): unknown => {
  if (typeof value === "bigint") {
    if (value < BigInt(Number.MIN_SAFE_INTEGER) || value > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new RangeError("Received integer which cannot be safely represented as a JavaScript number");
    }
    return Number(value);
  }
  return value instanceof Buffer ? value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength) : value;
};

/** The driver's rows as the client gives them, converted where they need it: no new array per row. */
function converted(rows: unknown[][]): unknown[][] {
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
const readsBigIntegers = (columnTypes: string[]) => columnTypes.some((type) => /BIGINT/i.test(type));

function libsqlError(error: unknown): unknown {
  const e = error as { message?: string; code?: string; rawCode?: number };
  return typeof e?.code === "string" ? new LibsqlError(e.message ?? String(error), e.code, e.rawCode, error as Error) : error;
}

/**
 * The part of @libsql/client's `Client` the Prisma adapter and `SqliteClient` use, on the native driver directly: the
 * client prepares every statement anew, asks for its columns twice and turns each row into an object of
 * non-enumerable properties; here statements stay prepared, with their columns, and rows are the driver's arrays
 * (the adapter reads rows by index). Numbers as `intMode: "number"`.
 */
export class NativeConnection {
  readonly protocol = "file";
  closed = false;
  readonly #db: Database.Database;
  readonly #statements = new Map<string, Prepared>();

  constructor(file: string) {
    this.#db = new Database(file);
  }

  #prepare(sql: string): Prepared {
    let prepared = this.#statements.get(sql);
    if (prepared) return prepared;
    const statement = this.#db.prepare(sql);
    let columns: string[] | null = null;
    let columnTypes: string[] = [];
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
    prepared = { statement, columns, columnTypes };
    if (this.#statements.size >= STATEMENT_CACHE) this.#statements.delete(this.#statements.keys().next().value!);
    this.#statements.set(sql, prepared);
    return prepared;
  }

  async execute(stmt: InStatement | string): Promise<ResultSet> {
    const { sql, args } = typeof stmt === "string" ? { sql: stmt, args: [] as unknown[] } : stmt;
    if (args !== undefined && !Array.isArray(args)) throw new TypeError("Named arguments are not supported on this connection");
    try {
      const { statement, columns, columnTypes } = this.#prepare(sql);
      const values = (args ?? []).map(toSql);
      if (columns) {
        const rows = converted(statement.all(values) as unknown[][]);
        return result(columns, columnTypes, rows as unknown as Row[], 0, undefined);
      }
      const info = statement.run(values);
      return result([], [], [], info.changes, BigInt(info.lastInsertRowid));
    } catch (error) {
      throw libsqlError(error);
    }
  }

  /** All of `stmts` in one transaction, as the client's `batch` does. */
  async batch(stmts: InStatement[], mode: "write" | "read" | "deferred" = "deferred"): Promise<ResultSet[]> {
    await this.execute(mode === "write" ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
    try {
      const results: ResultSet[] = [];
      for (const stmt of stmts) results.push(await this.execute(stmt));
      await this.execute("COMMIT");
      return results;
    } catch (error) {
      await this.execute("ROLLBACK").catch(() => undefined);
      throw error;
    }
  }

  async executeMultiple(sql: string): Promise<void> {
    try {
      this.#db.exec(sql);
    } catch (error) {
      throw libsqlError(error);
    }
  }

  close(): void {
    this.closed = true;
    this.#statements.clear();
    this.#db.close();
  }
}

function result(columns: string[], columnTypes: string[], rows: Row[], rowsAffected: number, lastInsertRowid: bigint | undefined): ResultSet {
  return { columns, columnTypes, rows, rowsAffected, lastInsertRowid, toJSON: () => ({ columns, columnTypes, rows, rowsAffected }) };
}

export const openNativeConnection = (file: string) => new NativeConnection(file) as unknown as Client;
