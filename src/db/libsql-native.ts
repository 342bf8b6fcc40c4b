import Database from "libsql";
import { LibsqlError, type Client, type InStatement, type ResultSet, type Row } from "@libsql/client";
import { converted, StatementCache, toSql } from "./sqlite-rows.mjs";

function libsqlError(error: unknown): unknown {
  const e = error as { message?: string; code?: string; rawCode?: number };
  return typeof e?.code === "string"
    ? new LibsqlError(e.message ?? String(error), e.code, e.rawCode, error as Error)
    : error;
}

/**
 * The part of @libsql/client's `Client` the Prisma adapter and `SqliteClient` use, on the native driver directly: the
 * client prepares every statement anew, asks for its columns twice and turns each row into an object of
 * non-enumerable properties; here statements stay prepared, with their columns, and rows are the driver's arrays
 * (the adapter reads rows by index: a contract of src/db/libsql-client.ts, checked by test/library-contracts.test.ts).
 * Numbers as `intMode: "number"`.
 */
export class NativeConnection {
  readonly protocol = "file";
  closed = false;
  readonly #db: Database.Database;
  readonly #statements: StatementCache;

  constructor(file: string) {
    this.#db = new Database(file);
    this.#statements = new StatementCache(this.#db);
  }

  async execute(stmt: InStatement): Promise<ResultSet> {
    const { sql, args } = typeof stmt === "string" ? { sql: stmt, args: [] as unknown[] } : stmt;
    if (args !== undefined && !Array.isArray(args))
      throw new TypeError("Named arguments are not supported on this connection");
    try {
      const { statement, columns, columnTypes } = this.#statements.get(sql);
      const values = (args ?? []).map(toSql);
      if (columns) {
        const rows = converted(statement.all(values) as unknown as unknown[][]);
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

function result(
  columns: string[],
  columnTypes: string[],
  rows: Row[],
  rowsAffected: number,
  lastInsertRowid: bigint | undefined,
): ResultSet {
  return {
    columns,
    columnTypes,
    rows,
    rowsAffected,
    lastInsertRowid,
    toJSON: () => ({ columns, columnTypes, rows, rowsAffected }),
  };
}

export const openNativeConnection = (file: string) => new NativeConnection(file) as unknown as Client;
