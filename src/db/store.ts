import type { Prisma, PrismaClient } from "../generated/prisma/client.ts";
import type { StoreConnections, DirectConnection } from "./connections.ts";
import { models } from "./datamodel.ts";
import type { Dialect, SqlStatement } from "./dialect.ts";
import { RolledBack } from "./driver.ts";
import { delegateName, type Reading } from "./models-by-name.ts";
import type { Args } from "./translation.ts";
import type { RowBudget } from "./row-budget.ts";
import { WriteQueue } from "./locks.ts";
import { StoreReads } from "./store-reads.ts";
import { NeedsPrisma, ranLast, StoreTransaction, type LastStatement, type RerunnableWork } from "./transaction.ts";

/**
 * The data store: the service's reads, its transactions and their single-row writes go through its named methods, each
 * saying which path it takes. Prisma stays the schema, the migrations and the typed model; where going around it is worth the
 * code (its query compiler costs about 1 ms of CPU per statement), the store runs our own per-dialect SQL
 * (`SqlReader`, `SqlWriter`, src/db/reader.ts and writer.ts, over the models of src/db/datamodel.ts and the SQL of
 * src/db/dialect.ts) on drivers of our own (src/db/read-drivers.ts, src/db/driver.ts), and falls back to Prisma,
 * visibly, for arguments that SQL does not translate. What only Prisma does (batch writes,
 * upserts, aggregates, nested writes, raw SQL) is asked of the Prisma client by name: `store.prisma`, `tx.prisma`.
 *
 * This module runs transactions; the reads the store shares with them are `StoreReads` (src/db/store-reads.ts), a
 * transaction is a `StoreTransaction` (src/db/transaction.ts), and what each database gives the store is in
 * src/db/connections.ts.
 */

export interface TransactionOptions {
  /** How long to wait for a connection and for the transaction to start (Prisma's `maxWait`), in ms. */
  maxWait?: number;
  /** How long the transaction may run (Prisma's `timeout`), in ms. */
  timeout?: number;
  /**
   * Run `work` on a connection of our own with BEGIN and COMMIT sent directly, without Prisma's interactive
   * transaction (which costs more than the statements of a small write): a pooled connection on PostgreSQL, the
   * adapter's own connection on SQLite (src/db/sqlite-group-commit.ts, `GroupCommit.directTransaction`). If `work` needs Prisma, the direct transaction is rolled back and `work` runs again in Prisma's, so
   * it must have no effect outside the database before it commits.
   */
  direct?: boolean;
  /**
   * A direct transaction on SQLite that ends with no other write waiting gives the event loop one turn before it
   * commits, so that writes already received can join its group and share its COMMIT (`GroupCommit.directTransaction`, src/db/sqlite-group-commit.ts).
   * For requests' writes, where throughput under concurrent writes is worth one turn of latency.
   */
  awaitCompany?: boolean;
}

/** One model's reads of the store, called as Prisma's delegate is (see `Store.readDelegates`). */
export type ReadDelegate = Record<Exclude<Reading, "groupBy">, (args: Args) => Promise<unknown>>;

/**
 * The store outside a transaction: reads on committed data (see `StoreReads`), transactions, and statements of our own.
 * `prisma` is the plain Prisma client, for what only Prisma answers; transactions are started here, never on it (the
 * store must see each Prisma transaction start to name its connection).
 */
export class Store extends StoreReads {
  readonly provider: Dialect;
  /**
   * The store's reads in the shape of Prisma's model delegates (`readDelegates.rankRecord.findUnique(args)` is
   * `store.findUnique("RankRecord", args)`), reads only: the client given to Pothos's prisma plugin, for the queries
   * it makes itself (a relation its parent's query did not load, such as a second alias of a nested connection; a
   * connection's totalCount), so they take the store's path as every other read does. Made when first asked for:
   * a request's store is made for each request, and most never need them.
   */
  get readDelegates(): Record<string, ReadDelegate> {
    return (this.#readDelegates ??= Object.fromEntries(
      [...models.keys()].map((model) => [
        delegateName(model),
        {
          findMany: (args?: Args) => this.findMany(model, args),
          findFirst: (args?: Args) => this.findFirst(model, args),
          findUnique: (args: Args) => this.findUnique(model, args),
          findFirstOrThrow: (args?: Args) => this.findFirstOrThrow(model, args),
          findUniqueOrThrow: (args: Args) => this.findUniqueOrThrow(model, args),
          count: (args?: Args) => this.count(model, args),
        },
      ]),
    ));
  }

  #readDelegates: Record<string, ReadDelegate> | undefined;

  constructor(
    readonly prisma: PrismaClient,
    readonly connections: StoreConnections,
    budget: RowBudget | null = null,
    /**
     * The write transactions of this process that wait their turn (src/db/locks.ts): one queue for the store and every
     * request's budgeted view of it, so a waiting write holds no pooled connection.
     */
    readonly writeQueue: WriteQueue = new WriteQueue(),
  ) {
    super(connections.reader, budget);
    this.provider = connections.provider;
  }

  /** This store for one request: every read through it, and through the transactions it starts, counts against `budget`. */
  withBudget(budget: RowBudget): Store {
    return new Store(this.prisma, this.connections, budget, this.writeQueue);
  }

  /**
   * The rows of one read statement of our own (`?` placeholders on SQLite, `$n` on PostgreSQL), on committed data,
   * counted against the budget.
   */
  read(sql: string, params: unknown[]): Promise<unknown[][]> {
    return this.connections.read(sql, params, this.budget);
  }

  /**
   * The rows of one read statement of our own (as `read`) that reads keys for the condition of a read to come (the ids
   * a search matches, src/data/search.ts), on committed data. Not counted against the budget: that read's rows are.
   */
  readKeys(sql: string, params: unknown[]): Promise<unknown[][]> {
    return this.connections.read(sql, params, null);
  }

  /**
   * `work` in one write transaction. With `direct` where the store has connections of its own, on one of them (see
   * `TransactionOptions.direct`); otherwise in Prisma's interactive transaction, with the reader and writer on its
   * connection when the store can name it (SQLite: the adapter's open transaction; PostgreSQL: the client the pool
   * checked out as it started, `TransactionTrackingPool`).
   */
  transaction<T>(
    work: (tx: StoreTransaction) => Promise<T>,
    options?: TransactionOptions & { direct?: false },
  ): Promise<T>;
  /** A direct transaction's work may run twice: it says so in its type (`mayRunTwice`). */
  transaction<T>(work: RerunnableWork<T>, options?: TransactionOptions): Promise<T>;
  async transaction<T>(
    given: ((tx: StoreTransaction) => Promise<T>) | RerunnableWork<T>,
    { direct, awaitCompany, ...options }: TransactionOptions = {},
  ): Promise<T> {
    const work = typeof given === "function" ? given : given.mayRunTwice;
    if (direct && this.connections.direct) {
      const result = await this.#direct(() => this.connections.direct!(options.timeout, awaitCompany), work);
      if (result !== NEEDS_PRISMA) return result;
    }
    const start = await this.connections.transaction();
    let started = false;
    const done = () => (started ? undefined : ((started = true), start.started()));
    try {
      return await this.prisma.$transaction(async (prisma) => {
        const routes = start.routes();
        done();
        const tx = new StoreTransaction(
          prisma,
          this.provider,
          routes?.reader ?? null,
          routes?.writer ?? null,
          this.budget,
        );
        let value: T;
        try {
          value = await work(tx);
        } catch (error) {
          tx.takeLast()?.settle(error);
          throw error;
        }
        // Prisma sends the COMMIT once this returns: the last statement's failure rolls the transaction back.
        const last = tx.takeLast();
        const rows = await ranLast(last);
        last?.settle(undefined, rows);
        return value;
      }, options);
    } finally {
      done();
    }
  }

  /**
   * Prisma's batch transaction of `queries` (Prisma calls not yet awaited). Its connection is never the store's; it
   * holds the start of other transactions until it ends, so it is taken for no other's.
   */
  async batch<T extends readonly Prisma.PrismaPromise<unknown>[]>(queries: [...T]): Promise<unknown[]> {
    const start = await this.connections.transaction();
    try {
      return await this.prisma.$transaction(queries);
    } finally {
      start.started();
    }
  }

  /**
   * `work` on a connection of our own with BEGIN and COMMIT sent directly. Anything the reader and writer do not
   * translate (NeedsPrisma) rolls it back, and NEEDS_PRISMA tells the caller to run `work` again under Prisma.
   */
  async #direct<T>(
    open: () => Promise<DirectConnection>,
    work: (tx: StoreTransaction) => Promise<T>,
  ): Promise<T | typeof NEEDS_PRISMA> {
    const connection = await open();
    let broken: Error | undefined;
    const end = (sql: "COMMIT" | "ROLLBACK", last?: SqlStatement) =>
      connection.end(sql, last).catch((error: Error) => {
        if (error instanceof RolledBack) throw error.cause;
        broken = error;
        throw error;
      });
    const tx = new StoreTransaction(
      null,
      this.provider,
      connection.reader,
      connection.writer,
      this.budget,
      connection.sendsLastWithCommit,
    );
    try {
      connection.begin();
      let value: T;
      let last: LastStatement | null = null;
      let ran: unknown[][] | undefined;
      try {
        value = await work(tx);
        last = tx.takeLast();
        ran = await ranLast(last);
      } catch (error) {
        tx.takeLast()?.settle(error);
        await end("ROLLBACK").catch(() => undefined);
        if (error instanceof NeedsPrisma) return NEEDS_PRISMA;
        throw error;
      }
      try {
        const rows = await end("COMMIT", last?.statement);
        last?.settle(undefined, ran ?? rows);
      } catch (error) {
        last?.settle(error);
        throw error;
      }
      return value;
    } finally {
      connection.release(broken);
    }
  }
}

const NEEDS_PRISMA = Symbol("needs Prisma");
