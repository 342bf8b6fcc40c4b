import { PrismaLibSQL } from "@prisma/adapter-libsql";
import { LibsqlError, type Client, type Config as LibsqlConfig, type InStatement, type Transaction, type TransactionMode } from "@libsql/client";

/**
 * SQLite answers "busy" at once (no busy handler): the libsql driver is synchronous, so SQLite's own
 * busy wait would stop the whole event loop, including the transaction that holds the lock when it
 * is ours. Busy statements are waited for here, asynchronously, instead.
 */
const connectionPragmas = ["PRAGMA foreign_keys = ON", "PRAGMA busy_timeout = 0"];

/** How long a statement waits for another connection's write lock before the busy error is reported. */
export const lockWaitMs = 10_000;

/** SQLITE_BUSY (and its extended codes) or SQLITE_LOCKED, from the driver or wrapped by Prisma. */
export function isBusyError(error: unknown): boolean {
  for (let e = error as { rawCode?: unknown; code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.rawCode === "number" && ((e.rawCode & 0xff) === 5 || (e.rawCode & 0xff) === 6)) return true;
    if (typeof e.code === "string" && /^SQLITE_(BUSY|LOCKED)/.test(e.code)) return true;
    if (typeof e.message === "string" && /database is locked|database table is locked|SQLITE_BUSY/.test(e.message)) return true;
  }
  return false;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `attempt` until it is not busy, backing off up to 50 ms between tries, for at most `lockWaitMs`. */
export async function whileBusy<T>(attempt: () => Promise<T>, waitMs = lockWaitMs): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (let delay = 1; ; delay = Math.min(delay * 2, 50)) {
    try {
      return await attempt();
    } catch (error) {
      if (!isBusyError(error) || Date.now() + delay > deadline) throw error;
    }
    await sleep(delay * (0.5 + Math.random()));
  }
}

/**
 * The libsql adapter over one connection per client, with three changes to the driver's defaults:
 *
 * - Write transactions begin `IMMEDIATE`: they take the write lock before their first read, so a
 *   check-then-insert (attach without duplicates, a computed `order`, a unique check) cannot
 *   interleave with another connection's, and no transaction has to be failed half-way for a stale
 *   snapshot. Inside one process the adapter already runs one transaction at a time.
 * - A transaction runs on the client's own connection. The driver hands its connection to each
 *   transaction, opens a new one and never closes the old: a file descriptor pair leaked per write.
 *   The adapter's lock keeps every other statement off the connection while a transaction is open.
 * - Busy statements outside a transaction (and `BEGIN`, `COMMIT`) are retried by `whileBusy`; a script
 *   (`executeMultiple`) is not, as it may have run in part. The per-connection pragmas (foreign keys
 *   are off on every new SQLite connection) are applied before the first statement.
 */
export class SqliteAdapterFactory extends PrismaLibSQL {
  createClient(config: LibsqlConfig): Client {
    const client: Client = (PrismaLibSQL.prototype as unknown as { createClient(c: LibsqlConfig): Client }).createClient.call(this, config);
    const execute = client.execute.bind(client) as (stmt: InStatement) => ReturnType<Client["execute"]>;
    const batch = client.batch.bind(client);
    const executeMultiple = client.executeMultiple.bind(client);
    let prepared: Promise<void> | null = null;
    const prepare = () =>
      (prepared ??= (async () => {
        for (const pragma of connectionPragmas) await execute(pragma);
      })().catch((error) => {
        prepared = null;
        throw error;
      }));
    const autocommit = <T>(work: () => Promise<T>) => whileBusy(async () => (await prepare(), work()));

    const transaction = async (mode: TransactionMode = "write"): Promise<Transaction> => {
      await autocommit(() => execute(mode === "read" ? "BEGIN DEFERRED" : "BEGIN IMMEDIATE"));
      let open = true;
      const check = () => {
        if (!open) throw new LibsqlError("The transaction is closed", "TRANSACTION_CLOSED");
      };
      const end = async (sql: "COMMIT" | "ROLLBACK") => {
        open = false;
        await execute(sql).catch(() => undefined);
      };
      return {
        execute: async (stmt: InStatement) => (check(), execute(stmt)),
        batch: async (stmts: InStatement[]) => {
          const results = [];
          for (const stmt of stmts) results.push((check(), await execute(stmt)));
          return results;
        },
        executeMultiple: async () => {
          throw new LibsqlError("executeMultiple is not supported in a transaction", "TRANSACTION_CLOSED");
        },
        commit: async () => {
          check();
          try {
            await whileBusy(() => execute("COMMIT"));
            open = false;
          } catch (error) {
            await end("ROLLBACK");
            throw error;
          }
        },
        rollback: async () => {
          if (open) await end("ROLLBACK");
        },
        close: () => {
          if (open) void end("ROLLBACK");
        },
        get closed() {
          return !open;
        },
      } as Transaction;
    };

    return Object.assign(client, {
      execute: ((stmtOrSql: InStatement, args?: unknown) =>
        autocommit(() => execute(typeof stmtOrSql === "string" && args ? ({ sql: stmtOrSql, args } as InStatement) : stmtOrSql))) as Client["execute"],
      batch: ((...args: Parameters<Client["batch"]>) => autocommit(() => batch(...args))) as Client["batch"],
      executeMultiple: async (sql: string) => (await prepare(), executeMultiple(sql)),
      transaction: transaction as Client["transaction"],
    });
  }
}
