import type { Dialect } from "./dialect.ts";

/** The connections our SQL runs on (src/db/read-drivers.ts, src/db/sqlite.ts), as the reader and writer use them. */

export interface ReadDriver {
  readonly dialect: Dialect;
  /** The rows of one statement, each as an array of its columns. */
  all(sql: string, params: unknown[]): Promise<unknown[][]>;
  /** The rows of a statement that looks up a row or two by key, where that costs least; `all` when absent. */
  lookup?(sql: string, params: unknown[]): Promise<unknown[][]>;
  /**
   * For a write the database refused, the error to throw. Without it (SQLite, which undoes just the refused statement)
   * the write is handed to Prisma, whose own error answers it; with it (PostgreSQL, where the refusal aborts the
   * transaction) the write cannot be run again.
   */
  refused?(error: unknown): unknown;
  close(): Promise<void>;
}

/**
 * A transaction's end failed at `cause` (its last statement, or the COMMIT sent with it), and the transaction has been
 * rolled back: the connection is sound and goes back to its pool.
 */
export class RolledBack extends Error {
  constructor(cause: unknown) {
    super("The transaction was rolled back", { cause });
  }
}

export interface ReadOptions {
  /** Called with each statement's SQL before it runs (statement counts, logs). */
  onStatement?: (sql: string) => void;
}
