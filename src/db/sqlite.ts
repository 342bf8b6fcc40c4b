import type { ReadDriver } from "./driver.ts";
import { openNativeConnection } from "./libsql-native.ts";
import { isBusyError } from "./sqlite-rows.mjs";
import { WriteQueue } from "./locks.ts";
import { LibsqlAdapterFactory } from "./libsql-client.ts";
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
  /** Settles when the direct transactions holding the connection have ended; null when none does. */
  #direct: Promise<void> | null = null;

  /** The current connection, pragmas applied, once no direct transaction (or group of them) holds it. */
  async #current(): Promise<Client> {
    while (this.#direct) await this.#direct;
    return this.#prepared();
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
    // A group of direct transactions left open for this one to join commits first (see `directTransaction`).
    await this.#endGroup();
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

  /**
   * A write transaction of the app's own on the connection, without Prisma's interactive transaction (whose machinery
   * costs more than a small write's statements): it waits for the connection's other transactions, and every statement
   * Prisma sends meanwhile waits for it. BEGIN IMMEDIATE waits while another process writes; after a busy failure the
   * connection is replaced, as in `transaction`.
   *
   * Group commit: direct transactions that queue behind one another share one BEGIN … COMMIT, each but the first in
   * a savepoint of its own (rolled back alone when it fails; the first rolls back the group, which holds only it), and each one's `end("COMMIT")` resolves once that COMMIT has. The
   * driver is synchronous, so each COMMIT stops the event loop for the WAL's write and fsync (0.4–0.5 ms here): under
   * concurrent writes one COMMIT now covers up to `GROUP_COMMIT_MAX` of them. A transaction's statements run within
   * one turn of the event loop, so another rarely waits when it ends: with `awaitCompany` (requests' writes) the first
   * of a group, finding none waiting, lets the loop turn once, and the writes of requests read meanwhile join it.
   * The group commits when no other direct transaction waits, when it is full, or when a Prisma transaction waits;
   * it is rolled back instead, its transactions failing busy (so `inTransaction` runs them again), when one of them
   * would commit after its `timeoutMs`, as a transaction never commits once its request has been answered 503.
   */
  async directTransaction(timeoutMs?: number, awaitCompany = false): Promise<DirectSqliteTransaction> {
    const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
    const release = await this.#transactions.acquire();
    let group: CommitGroup;
    // The first transaction of a group runs alone in it until it ends (the others join after it), so undoing it is
    // undoing the group: it needs no savepoint.
    const first = this.#group === null;
    try {
      group = this.#group ?? (await this.#beginGroup());
    } catch (error) {
      release();
      throw error;
    }
    const { connection } = group;
    if (!first) {
      try {
        await connection.execute("SAVEPOINT direct");
      } catch (error) {
        await this.#endGroup(error);
        release();
        throw error;
      }
    }
    let open = true;
    let left = false;
    let busy = false;
    const run = async (sql: string, params: unknown[]) => {
      if (!open) throw new LibsqlError("The transaction is closed", "TRANSACTION_CLOSED");
      await this.#breathe();
      try {
        return await connection.execute({ sql, args: params as InArgs });
      } catch (error) {
        busy ||= isBusyError(error);
        throw error;
      }
    };
    /** Ends this transaction's savepoint, commits the group when it is this one's turn to, and lets the next one in. */
    const leave = async (outcome: "COMMIT" | "ROLLBACK") => {
      open = false;
      left = true;
      let failure: unknown;
      if (!first) {
        try {
          if (outcome === "ROLLBACK") await connection.execute("ROLLBACK TO direct");
          await connection.execute("RELEASE direct");
        } catch (error) {
          // The savepoint is gone only when SQLite has rolled back the whole transaction: the group with it.
          failure = error;
        }
      }
      if (outcome === "COMMIT" && failure === undefined) {
        group.members++;
        group.commitBy = Math.min(group.commitBy, deadline);
      }
      group.replace ||= busy;
      // Once per group: the transactions that join it run within the turn it ends, one after another.
      if (first && awaitCompany && outcome === "COMMIT" && !busy && this.#transactions.waiting === 0) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      if (first && outcome === "ROLLBACK") {
        await this.#endGroup(undefined, "ROLLBACK");
      } else if (
        failure !== undefined ||
        busy ||
        group.members >= GROUP_COMMIT_MAX ||
        this.#transactions.waiting === 0
      ) {
        await this.#endGroup(failure);
      }
      release();
      if (outcome === "COMMIT") await group.committed;
    };
    return {
      driver: {
        dialect: "sqlite",
        all: async (sql, params) => (await run(sql, params)).rows.map((row) => Array.from(row as ArrayLike<unknown>)),
        close: async () => {},
      },
      end: async (sql) => {
        if (left) throw new LibsqlError("The transaction is closed", "TRANSACTION_CLOSED");
        await leave(sql);
      },
      release: () => {
        // Never left open: a transaction released without COMMIT or ROLLBACK (its work threw before either) rolls back.
        if (!left) void leave("ROLLBACK").catch(() => undefined);
      },
    };
  }

  /** The group of direct transactions in progress (see `directTransaction`); null when none is. */
  #group: CommitGroup | null = null;

  readonly commits: CommitCounts = { transactions: 0, commits: 0 };

  /** BEGIN IMMEDIATE of a new group; every statement Prisma sends waits until the group ends. */
  async #beginGroup(): Promise<CommitGroup> {
    let done!: () => void;
    this.#direct = new Promise<void>((resolve) => (done = resolve));
    try {
      const connection = await whileBusy(async () => {
        const current = await this.#prepared();
        try {
          await current.execute("BEGIN IMMEDIATE");
          return current;
        } catch (error) {
          if (isBusyError(error)) this.#replace(current);
          throw error;
        }
      });
      let settle!: (error?: unknown) => void;
      const committed = new Promise<void>(
        (resolve, reject) => (settle = (error) => (error === undefined ? resolve() : reject(error as Error))),
      );
      // Awaited by the transactions that committed into it only.
      committed.catch(() => undefined);
      return (this.#group = { connection, members: 0, commitBy: Infinity, committed, settle, replace: false, done });
    } catch (error) {
      this.#direct = null;
      done();
      throw error;
    }
  }

  /**
   * COMMIT of the open group, or ROLLBACK after `failure` or past a transaction's deadline; then Prisma's turn.
   * `"ROLLBACK"`: the group's only transaction (the first, without a savepoint) rolled back; nothing failed, so the
   * connection is kept unless a statement of it failed busy.
   */
  async #endGroup(failure?: unknown, end: "COMMIT" | "ROLLBACK" = "COMMIT"): Promise<void> {
    const group = this.#group;
    if (!group) return;
    this.#group = null;
    let error = failure;
    if (end === "COMMIT" && error === undefined && Date.now() > group.commitBy) {
      error = new LibsqlError(
        "A transaction committing with this one ran past its time, and the group was rolled back",
        "SQLITE_BUSY",
        5,
      );
    }
    if (end === "COMMIT" && error === undefined) {
      try {
        await group.connection.execute("COMMIT");
        this.commits.commits++;
        this.commits.transactions += group.members;
      } catch (commitError) {
        error = commitError;
      }
    }
    let rolledBack = true;
    if (end === "ROLLBACK" || error !== undefined)
      rolledBack = await group.connection.execute("ROLLBACK").then(
        () => true,
        () => false,
      );
    if (error !== undefined || !rolledBack || group.replace) this.#replace(group.connection);
    this.#direct = null;
    group.done();
    group.settle(error);
  }

  async sync(): Promise<void> {}

  close(): void {
    this.closed = true;
    this.#connection.close();
  }
}

/** Direct transactions committed, and the COMMITs they took (fewer under concurrent writes: group commit). */
export interface CommitCounts {
  transactions: number;
  commits: number;
}

/** Direct transactions that commit together: each `end("COMMIT")` resolves when their one COMMIT has. */
const GROUP_COMMIT_MAX = 16;

/** Direct transactions sharing one BEGIN IMMEDIATE … COMMIT, each in a savepoint of its own. */
interface CommitGroup {
  connection: Client;
  /** Transactions released into it (committed when it commits). */
  members: number;
  /** The earliest deadline of its members: past it, the group is rolled back rather than committed. */
  commitBy: number;
  /** Settles with the group's COMMIT, or rejects with what ended it otherwise. */
  committed: Promise<void>;
  settle(error?: unknown): void;
  /** A statement failed busy in it: the connection is replaced once it ends. */
  replace: boolean;
  /** Lets Prisma's statements have the connection again. */
  done(): void;
}

/** A direct transaction on `SqliteClient`'s connection: statements, then `end`, then `release` (always). */
export interface DirectSqliteTransaction {
  driver: ReadDriver;
  /** COMMIT or ROLLBACK; a failed COMMIT is rolled back. */
  end(sql: "COMMIT" | "ROLLBACK"): Promise<void>;
  /** Gives the connection back to Prisma and the next transaction. */
  release(): void;
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
