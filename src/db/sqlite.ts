import type { ReadDriver } from "./driver.ts";
import { openNativeConnection } from "./libsql-native.ts";
import { isBusyError } from "./sqlite-rows.mjs";
import { WriteQueue } from "./locks.ts";
import { LibsqlAdapterFactory } from "./libsql-client.ts";
import { GroupCommit } from "./sqlite-group-commit.ts";
import {
  LibsqlError,
  type Client,
  type Config as LibsqlConfig,
  type InArgs,
  type InStatement,
  type ResultSet,
  type Transaction,
  type TransactionMode,
} from "@libsql/client";

// Written in sqlite-rows.mjs, which the read thread loads without TypeScript; exported here for the rest of the app.
export { isBusyError };

/**
 * SQLite answers "busy" at once (no busy handler): the libsql driver is synchronous, so SQLite's own
 * busy wait would stop the whole event loop, including the transaction that holds the lock when it
 * is ours. Busy statements are waited for here, asynchronously, instead.
 */
const connectionPragmas = ["PRAGMA foreign_keys = ON", "PRAGMA busy_timeout = 0"];

/** How long a statement waits for another connection's write lock before the busy error is reported. */
export const lockWaitMs = 10_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The driver is synchronous and Prisma chains its statements through promises alone, so a long
 * transaction (a batch of a thousand rows) would never give the event loop a turn: no connection
 * accepted, no timer (execution timeout, transaction timeout) and no signal handled until it ends.
 * A statement that comes after more than this many milliseconds of such work waits one turn first.
 */
const busyLoopMs = 20;

/** Runs `attempt` until it is not busy, backing off up to 50 ms between tries, for at most `waitMs`. */
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
 * The client the libsql adapter talks to: one SQLite connection at a time, with the driver's
 * defaults changed where they break under concurrency.
 *
 * - Write transactions begin `IMMEDIATE`: they take the write lock before their first read, so a
 *   check-then-insert (attach without duplicates, a computed `order`, a unique check) cannot
 *   interleave with another connection's, and no transaction fails half-way on a stale snapshot.
 *   Inside one process the adapter already runs one transaction at a time and holds every other
 *   statement back while one is open, so transactions run on the client's own connection. (The
 *   driver would hand its connection to each transaction and open a new one, never closing the
 *   old: a leaked connection per write.)
 * - Busy statements outside a transaction, `BEGIN` included, are retried by `whileBusy`. A script
 *   (`executeMultiple`) is not: it may have run in part.
 * - A statement that failed busy is never reset by the driver (tursodatabase/libsql-js#237), and a
 *   connection with a statement in progress can commit nothing until the garbage collector gets to
 *   it. So the connection is replaced after a busy failure, and after a failed `COMMIT`, which is
 *   also rolled back (so no abandoned `BEGIN` keeps the write lock).
 * - Each new connection gets the pragmas first: SQLite turns foreign keys off on every connection.
 */
export class SqliteClient {
  readonly protocol = "file";
  closed = false;
  #connection: Client;
  #ready: Promise<void> | null = null;
  #turn = performance.now();

  constructor(private readonly open: () => Client) {
    this.#connection = open();
  }

  /** Lets the event loop run when statements have kept it busy for `busyLoopMs`. */
  async #breathe() {
    if (performance.now() - this.#turn < busyLoopMs) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.#turn = performance.now();
  }

  /**
   * Transactions on the connection, Prisma's and direct ones, one at a time: the adapter serialises only its own
   * statements, and a direct transaction is not one of them.
   */
  #transactions = new WriteQueue();

  /**
   * The app's own write transactions on this connection, without Prisma's interactive transaction, committed in groups
   * (src/db/sqlite-group-commit.ts); every statement Prisma sends waits while a group holds the connection.
   */
  readonly groupCommit = new GroupCommit({
    transactions: this.#transactions,
    beginImmediate: () => this.#beginImmediate(),
    breathe: () => this.#breathe(),
    replace: (connection) => this.#replace(connection),
  });

  /** The current connection, pragmas applied, once no direct transaction (or group of them) holds it. */
  async #current(): Promise<Client> {
    while (this.groupCommit.holding) await this.groupCommit.holding;
    return this.#prepared();
  }

  /** BEGIN IMMEDIATE on the current connection (held or not), waiting while another process writes. */
  #beginImmediate(): Promise<Client> {
    return whileBusy(async () => {
      const current = await this.#prepared();
      try {
        await current.execute("BEGIN IMMEDIATE");
        return current;
      } catch (error) {
        if (isBusyError(error)) this.#replace(current);
        throw error;
      }
    });
  }

  /** The current connection, pragmas applied. */
  async #prepared(): Promise<Client> {
    await this.#breathe();
    const connection = this.#connection;
    this.#ready ??= (async () => {
      for (const pragma of connectionPragmas) await connection.execute(pragma);
    })().catch((error) => {
      this.#ready = null;
      throw error;
    });
    await this.#ready;
    return connection;
  }

  #replace(connection: Client) {
    if (connection !== this.#connection || this.closed) return;
    this.#connection = this.open();
    this.#ready = null;
    try {
      connection.close();
    } catch {
      // Already closed or unusable: it is dropped either way.
    }
  }

  /** Runs one autocommit step, waiting while another connection holds the lock. */
  #autocommit<T>(work: (connection: Client) => Promise<T>): Promise<T> {
    return whileBusy(async () => {
      const connection = await this.#current();
      try {
        return await work(connection);
      } catch (error) {
        if (isBusyError(error)) this.#replace(connection);
        throw error;
      }
    });
  }

  execute(stmt: InStatement, args?: InArgs): Promise<ResultSet> {
    const statement = typeof stmt === "string" ? { sql: stmt, args: args ?? [] } : stmt;
    return this.#autocommit((c) => c.execute(statement));
  }

  batch(stmts: InStatement[], mode?: TransactionMode): Promise<ResultSet[]> {
    return this.#autocommit((c) => c.batch(stmts, mode));
  }

  async executeMultiple(sql: string): Promise<void> {
    return (await this.#current()).executeMultiple(sql);
  }

  /** The transaction in progress: the adapter runs one at a time and holds every other statement back meanwhile. */
  openTransaction: Transaction | null = null;

  async transaction(mode: TransactionMode = "write"): Promise<Transaction> {
    const begin = mode === "read" ? "BEGIN DEFERRED" : "BEGIN IMMEDIATE";
    const release = await this.#transactions.acquire();
    // A group of direct transactions left open for this one to join commits first (`GroupCommit.directTransaction`).
    await this.groupCommit.end();
    let connection: Client;
    try {
      connection = await this.#autocommit(async (c) => (await c.execute(begin), c));
    } catch (error) {
      release();
      throw error;
    }
    let open = true;
    const closed = () => {
      if (open) release();
      open = false;
      if (this.openTransaction === transaction) this.openTransaction = null;
    };
    let busy = false;
    const run = async (stmt: InStatement) => {
      if (!open) throw new LibsqlError("The transaction is closed", "TRANSACTION_CLOSED");
      await this.#breathe();
      if (!open) throw new LibsqlError("The transaction is closed", "TRANSACTION_CLOSED");
      try {
        return await connection.execute(stmt);
      } catch (error) {
        busy ||= isBusyError(error);
        throw error;
      }
    };
    const end = async (failed: boolean) => {
      closed();
      await connection.execute("ROLLBACK").catch(() => undefined);
      if (failed || busy) this.#replace(connection);
    };
    const transaction = {
      execute: run,
      batch: async (stmts: InStatement[]) => {
        const results: ResultSet[] = [];
        for (const stmt of stmts) results.push(await run(stmt));
        return results;
      },
      executeMultiple: async () => {
        throw new LibsqlError("A script cannot run inside this transaction", "TRANSACTION_CLOSED");
      },
      commit: async () => {
        await run("COMMIT").then(
          () => {
            closed();
            if (busy) this.#replace(connection);
          },
          async (error) => {
            await end(true);
            throw error;
          },
        );
      },
      rollback: async () => {
        if (open) await end(false);
      },
      close: () => {
        if (open) void end(false);
      },
      get closed() {
        return !open;
      },
    } satisfies Transaction;
    this.openTransaction = transaction;
    return transaction;
  }

  async sync(): Promise<void> {}

  close(): void {
    this.closed = true;
    this.#connection.close();
  }
}

/** The database file of a `file:` URL, or null for any other URL. */
export function sqliteFileOf(url: string): string | null {
  if (url.startsWith("file:")) return url.slice("file:".length).split("?")[0];
  return null;
}

/** The libsql driver adapter for Prisma, over `SqliteClient`. */
export class SqliteAdapterFactory extends LibsqlAdapterFactory {
  client: SqliteClient | null = null;

  protected openClient(config: LibsqlConfig, standard: () => Client): SqliteClient {
    const file = sqliteFileOf(config.url);
    const open = file !== null && file !== ":memory:" ? () => openNativeConnection(file) : standard;
    this.client = new SqliteClient(open);
    return this.client;
  }

  /** Direct SQL on the transaction in progress (one at a time, see SqliteClient); null outside one. */
  transactionDriver(): ReadDriver | null {
    const tx = this.client?.openTransaction;
    if (!tx) return null;
    return {
      dialect: "sqlite",
      all: async (sql, params) => {
        if (tx.closed) throw new LibsqlError("The transaction is closed", "TRANSACTION_CLOSED");
        const result = await tx.execute({ sql, args: params as InArgs });
        return result.rows.map((row) => Array.from(row as ArrayLike<unknown>));
      },
      close: async () => {},
    };
  }
}
