import type { Dialect, SqlStatement } from "./dialect.ts";
import type { SqlReader } from "./reader.ts";
import type { RowBudget } from "./row-budget.ts";
import type { SqlWriter } from "./writer.ts";

/*
 * The connections the store runs on (made for each database by src/db/prisma.ts): committed reads, the start of
 * Prisma's transactions, and connections of our own for direct transactions.
 */

/** How a transaction is started: the reader and writer on its connection, when the store can name that connection. */
export interface TransactionStart {
  /** The transaction's reader and writer, asked for as its callback starts (null: all of it stays Prisma's). */
  routes(): { reader: SqlReader; writer: SqlWriter } | null;
  /** Called once the callback has its routes, or the transaction failed to start. */
  started(): void;
}

/** A connection of our own for a direct transaction, with our reader and writer on it. */
export interface DirectConnection {
  reader: SqlReader;
  writer: SqlWriter;
  /** Starts the transaction (BEGIN may go out with its first statement). */
  begin(): void;
  /**
   * Ends it: COMMIT or ROLLBACK. `last` (where `sendsLastWithCommit`): the transaction's last statement, in the same
   * write as the COMMIT; its rows. When it or the COMMIT fails, the transaction has been rolled back and the error is
   * thrown as `RolledBack`.
   */
  end(sql: "COMMIT" | "ROLLBACK", last?: SqlStatement): Promise<unknown[][]>;
  /** Whether `end` takes the last statement (PostgreSQL); elsewhere it runs at once (`StoreTransaction.atCommit`). */
  sendsLastWithCommit: boolean;
  /** Gives the connection back; `broken`: it failed, and must be closed rather than reused. */
  release(broken?: Error): void;
}

export interface StoreConnections {
  provider: Dialect;
  /** Our SQL reader on committed data. */
  reader: SqlReader;
  /** Awaited before each Prisma interactive transaction starts: its reader and writer. */
  transaction(): Promise<TransactionStart>;
  /** A connection of our own for a direct transaction that must not commit after `timeoutMs`. */
  direct?: (timeoutMs?: number, awaitCompany?: boolean) => Promise<DirectConnection>;
  /** Runs one statement of our own on committed data, its rows counted against `budget`. */
  read(sql: string, params: unknown[], budget: RowBudget | null): Promise<unknown[][]>;
}
