import type { InArgs } from "@libsql/client";
import pg from "pg";
import { NativeConnection } from "./libsql-native.ts";
import { SqliteReadThread } from "./sqlite-read-thread.ts";
import { readOnlyPragmas } from "./sqlite-rows.mjs";
import { batchable, query, queryBatch, type BatchStatement } from "./pg-pipeline.ts";
import type { SqlStatement } from "./dialect.ts";
import { RolledBack, type ReadDriver } from "./driver.ts";
import { refusedWriteError } from "./postgres-errors.ts";
import { isBusyError, whileBusy } from "./sqlite.ts";
import type { TransactionTrackingPool } from "./adapter-pg-checkout.ts";

/**
 * SQLite reads on connections of their own beside the one Prisma writes through: in WAL mode they see committed data
 * only, never the open transaction of a concurrent write. Statements run on the read thread (SqliteReadThread); a
 * `lookup` (a row or two by key) on a connection of the main thread's, where it costs less than the messages to and
 * from the thread (bench/FINDINGS.md, "Reads on a thread").
 */
export function sqliteReadDriver(file: string): ReadDriver {
  const thread = new SqliteReadThread(file);
  let connection: Promise<NativeConnection> | null = null;
  const open = async () => {
    const opened = new NativeConnection(file);
    for (const pragma of readOnlyPragmas) await opened.execute(pragma);
    return opened;
  };
  const drop = () => {
    const dropped = connection;
    connection = null;
    // Unusable already when it fails to close: replaced either way.
    void dropped?.then((c) => c.close()).catch(() => undefined);
  };
  return {
    dialect: "sqlite",
    all: (sql, params) => whileBusy(() => thread.all(sql, params)),
    lookup: (sql, params) =>
      whileBusy(async () => {
        try {
          const opened = await (connection ??= open());
          return (await opened.execute({ sql, args: params as InArgs })).rows as unknown as unknown[][];
        } catch (error) {
          // A statement that failed busy is never reset by the driver (tursodatabase/libsql-js#237).
          if (isBusyError(error)) drop();
          throw error;
        }
      }),
    close: async () => (drop(), await thread.close()),
  };
}

/** PostgreSQL reads on the pool Prisma's adapter uses, as named (server-side prepared) statements, several to a write. */
export function postgresReadDriver(pool: TransactionTrackingPool): ReadDriver {
  const pipeline = new ReadPipeline(pool);
  return { dialect: "postgresql", all: (sql, params) => pipeline.read(sql, params), close: async () => {} };
}

/** Statements at most in one write of `ReadPipeline`: more go out in several, on as many connections, side by side. */
const MAX_READS_PER_WRITE = 8;

/**
 * PostgreSQL reads asked for in one turn of the event loop (the I/O callbacks of one poll: the requests that arrived and
 * the statements answered, and whatever each of them asks for next) go out together on one pooled connection, in one
 * write answered by one round trip (`queryBatch`), instead of one connection, write and round trip each. Under load,
 * each write wakes a PostgreSQL backend that then runs on the same two cores as the service, and both sides pay per
 * round trip: on W1, this took PostgreSQL's CPU per request from 0.49 to 0.35 ms and the service's throughput up by a
 * tenth (bench/FINDINGS.md, "Reads in one write").
 *
 * A statement not yet prepared on the connection (its first time there) goes ahead of the others, alone. One that fails
 * answers with its error; the statements after it (PostgreSQL skips the rest of a batch) are sent again, each alone.
 */
export class ReadPipeline {
  #queued: BatchStatement[] = [];

  constructor(readonly pool: TransactionTrackingPool) {}

  read(sql: string, params: unknown[]): Promise<unknown[][]> {
    return new Promise((resolve, reject) => {
      if (this.#queued.push({ sql, params, resolve, reject }) === 1) setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    const queued = this.#queued;
    this.#queued = [];
    const writes = Math.ceil(queued.length / MAX_READS_PER_WRITE);
    for (let i = 0; i < writes; i++) {
      const statements = queued.slice(
        Math.floor((i * queued.length) / writes),
        Math.floor(((i + 1) * queued.length) / writes),
      );
      if (statements.length === 1) this.#alone(statements[0]);
      else this.#together(statements);
    }
  }

  #alone(statement: BatchStatement): void {
    query(this.pool, statement.sql, statement.params).then(statement.resolve, statement.reject);
  }

  #together(statements: BatchStatement[]): void {
    this.pool.checkout().then(
      // As pg's pool does after a failed statement, the connection is then closed rather than reused.
      (client) => this.#on(client, statements).then((failure) => client.release(failure as Error | undefined)),
      (error) => statements.forEach((s) => s.reject(error)),
    );
  }

  /**
   * `statements` on `client`: those not yet prepared there one at a time (which prepares them), then the rest in one
   * write. After a failure, what is left goes alone: a connection lost mid-way fails only the statement it was running.
   * The first failure, if any, is the answer.
   */
  async #on(client: pg.PoolClient, statements: BatchStatement[]): Promise<unknown> {
    let failure: unknown;
    const answered = (s: BatchStatement): BatchStatement => ({
      ...s,
      reject: (error) => ((failure ??= error), s.reject(error)),
    });
    const ready = statements.filter((s) => batchable(client, s.sql));
    const unprepared = statements.filter((s) => !ready.includes(s));
    // A batch of one is a statement alone.
    const together = ready.length > 1 ? ready : [];
    for (const s of together.length ? unprepared : [...unprepared, ...ready]) {
      if (failure) this.#alone(s);
      else await query(client, s.sql, s.params).then(s.resolve, answered(s).reject);
    }
    if (failure) together.forEach((s) => this.#alone(s));
    else if (together.length)
      await queryBatch(client, together.map(answered), false, (skipped) => skipped.forEach((s) => this.#alone(s)));
    return failure;
  }
}

/**
 * Statements on the connection of a transaction Prisma started; a refused write aborts it (see `ReadDriver.refused`).
 * Each goes out at once: Prisma ends the transaction without a word to us, and a statement held back to join others
 * could go out after its ROLLBACK, outside any transaction.
 */
export function postgresTransactionDriver(client: pg.PoolClient): ReadDriver {
  return postgresDirectTransaction(client, false).driver;
}

export interface DirectTransactionDriver {
  driver: ReadDriver;
  /** Starts the transaction: BEGIN goes out with its first statement, in the same write and round trip. */
  begin(): void;
  /**
   * COMMIT or ROLLBACK; nothing when no statement ever started the transaction. `last`: the transaction's last
   * statement, run with the COMMIT; its rows. When it or the COMMIT fails, the transaction is rolled back and the
   * error thrown as `RolledBack`.
   */
  end(sql: "COMMIT" | "ROLLBACK", last?: SqlStatement): Promise<unknown[][]>;
  /** Whether `end` takes a last statement; it does on PostgreSQL. */
  sendsLastWithCommit: boolean;
}

/**
 * Statements of a transaction on `client`. With `batching` (our own transactions, whose `end` sends what is held
 * before it) the statements asked for within one tick (the checks of a write run side by side: a route's parent and
 * the rows its body refers to) go out together, in one write and round trip, when each is already prepared on the
 * connection (`queryBatch`); otherwise one at a time, in order. Never two submissions at once on the client: pg 8
 * queues a second one with a deprecation warning, and pg 9 refuses it.
 */
export function postgresDirectTransaction(client: pg.PoolClient, batching = true): DirectTransactionDriver {
  let previous: Promise<unknown> = Promise.resolve();
  let beginPending = false;
  let queued: BatchStatement[] = [];
  const takeBegin = () => {
    const begin = beginPending;
    beginPending = false;
    return begin;
  };
  const send = async (statements: BatchStatement[]) => {
    if (statements.length > 1 && statements.every((s) => batchable(client, s.sql)))
      return queryBatch(client, statements, takeBegin());
    for (const s of statements) await query(client, s.sql, s.params, takeBegin()).then(s.resolve, s.reject);
  };
  const flush = () => {
    if (!queued.length) return;
    const statements = queued;
    queued = [];
    previous = previous.then(() => send(statements));
  };
  const next = (sql: string, params: unknown[], commit = false) => {
    flush();
    const rows = previous.then(() => query(client, sql, params, takeBegin(), commit));
    previous = rows.catch(() => undefined);
    return rows;
  };
  const all = batching
    ? (sql: string, params: unknown[]) =>
        new Promise<unknown[][]>((resolve, reject) => {
          if (queued.push({ sql, params, resolve, reject }) === 1) process.nextTick(flush);
        })
    : (sql: string, params: unknown[]) => next(sql, params);
  return {
    driver: { dialect: "postgresql", all, refused: refusedWriteError, close: async () => {} },
    sendsLastWithCommit: true,
    begin: () => {
      beginPending = true;
    },
    end: async (sql, last) => {
      flush();
      await previous;
      if (last && sql === "COMMIT") {
        // The last statement and COMMIT in one write and one round trip. If either fails the transaction is left
        // aborted (the statement) or already ended (the COMMIT): ROLLBACK ends it in both cases.
        try {
          return await next(last.sql, last.params, true);
        } catch (error) {
          await next("ROLLBACK", []);
          throw new RolledBack(error);
        }
      }
      if (beginPending) {
        beginPending = false;
        return [];
      }
      await next(sql, []);
      return [];
    },
  };
}
