import type { Prisma, PrismaClient } from "../generated/prisma/client.ts";
import { models } from "./datamodel.ts";
import { decode, quote, type Dialect, type SqlStatement } from "./dialect.ts";
import { RolledBack } from "./driver.ts";
import type { SqlReader } from "./reader.ts";
import type { Args } from "./translation.ts";
import { FAILED, type SqlWriter } from "./writer.ts";
import { takeRows, type RowBudget } from "./row-budget.ts";
import { WriteQueue } from "./locks.ts";

/**
 * The data store: the service's reads, its transactions and their single-row writes go through its named methods, each
 * saying which path it takes. Prisma stays the schema, the migrations and the typed model; where going around it is worth the
 * code (its query compiler costs about 1 ms of CPU per statement), the store runs our own per-dialect SQL
 * (`SqlReader`, `SqlWriter`, src/db/reader.ts and writer.ts, over the models of src/db/datamodel.ts and the SQL of
 * src/db/dialect.ts) on drivers of our own (src/db/read-drivers.ts, src/db/driver.ts), and falls back to Prisma,
 * visibly, for arguments that SQL does not translate. What only Prisma does (batch writes,
 * upserts, aggregates, nested writes, raw SQL) is asked of the Prisma client by name: `store.prisma`, `tx.prisma`.
 */

/** Values by column name (a row, a `where`, a write's `data`) for a model known at run time: their types unknown. */
export type Row = Record<string, unknown>;
/**
 * A row the store answers for a model known at run time: its columns (and the relations selected) by name, their
 * values unknown but for `id`, every model's integer key (SystemFlag, read by name alone, has none), which callers
 * read from the rows they ask for (a `select` leaving `id` out leaves it undefined).
 */
export type StoredRow = { id: number } & Row;
export type ModelName = Prisma.ModelName;
type Reading = "findMany" | "findFirst" | "findUnique" | "findFirstOrThrow" | "findUniqueOrThrow" | "count" | "groupBy";
type Operation = Reading | "create" | "update";

/**
 * Prisma's arguments of `operation` on `M` when the model is known where the call is written (`"User"`); plain
 * arguments when it is only known at run time (a resource's `def.model`).
 */
export type ArgsOf<M extends string, O extends Operation> = [M] extends [ModelName]
  ? ModelName extends M
    ? Args
    : Prisma.TypeMap["model"][M]["operations"][O]["args"]
  : Args;

/** The name of a model's delegate on a Prisma client: `rankRecord` for `RankRecord`. */
const delegateName = (model: string) => model.charAt(0).toLowerCase() + model.slice(1);

/** A model's delegate on a Prisma client (`prisma.rankRecord` for `RankRecord`): for the calls only Prisma answers. */
export const delegateOf = (client: object, model: string): DynamicDelegate =>
  (client as Record<string, DynamicDelegate>)[delegateName(model)];

/** A model's delegate found by name: Prisma's methods, whose arguments and answers are typed only per model. */
export interface DynamicDelegate {
  count(args?: unknown): Promise<number>;
  aggregate(args: unknown): Promise<{ _max: Record<string, number | null> }>;
  deleteMany(args: unknown): Promise<{ count: number }>;
  updateMany(args: unknown): Promise<{ count: number }>;
  [method: string]: (args?: unknown) => Promise<unknown>;
}

/**
 * Counts the rows of a Prisma result (`model`'s rows and the related rows nested in them) against a request's row
 * budget, and returns it. Only relation fields are walked: a JSON column's objects are values, not rows.
 */
function countRows<T>(model: string, result: T, budget: RowBudget | null): T {
  if (!budget) return result;
  const pending: Array<[string, unknown]> = [[model, result]];
  let rows = 0;
  while (pending.length) {
    const [name, value] = pending.pop()!;
    const list = Array.isArray(value) ? value : value && typeof value === "object" ? [value] : [];
    const relations = models.get(name)?.relations;
    for (const row of list) {
      rows++;
      for (const rel of relations?.values() ?? [])
        if ((row as Row)[rel.name] != null) pending.push([rel.target, (row as Row)[rel.name]]);
    }
  }
  takeRows(budget, rows);
  return result;
}

/**
 * The reads of the store and of its transactions. Each goes to the SQL reader when it translates `args`
 * (`reader.plan`), else to Prisma's delegate, and the rows either reads are counted against `budget`, the request's
 * row budget (MAX_ROWS_PER_REQUEST). Without a reader (a transaction Prisma started on a connection we could not
 * name), Prisma answers and nothing is counted.
 */
export abstract class StoreReads {
  constructor(
    /** Our SQL for reads, on this handle's connection; null: every read is Prisma's. */
    readonly reader: SqlReader | null,
    /** The request's row budget, which every read of this handle counts against; null outside a request: no count. */
    readonly budget: RowBudget | null,
  ) {}

  /** The Prisma client reads fall back to. */
  abstract readonly prisma: PrismaClient | Prisma.TransactionClient;

  /** The rows `args` select: the reader's when it translates them, else Prisma's, counted. */
  findMany<M extends string>(model: M, args?: ArgsOf<M, "findMany">): Promise<StoredRow[]> {
    return this.#read(model, "findMany", args) as Promise<StoredRow[]>;
  }

  /** The first row `args` select, or null: the reader's when it translates them, else Prisma's, counted. */
  findFirst<M extends string>(model: M, args?: ArgsOf<M, "findFirst">): Promise<StoredRow | null> {
    return this.#read(model, "findFirst", args) as Promise<StoredRow | null>;
  }

  /** The row a unique `where` names, or null: the reader's when it translates `args`, else Prisma's, counted. */
  findUnique<M extends string>(model: M, args: ArgsOf<M, "findUnique">): Promise<StoredRow | null> {
    return this.#read(model, "findUnique", args) as Promise<StoredRow | null>;
  }

  /**
   * The row a unique `where` names. The reader reads it when it translates `args`; when the reader finds nothing (or
   * does not translate them) Prisma reads again, with its own not-found error, counted.
   */
  findUniqueOrThrow<M extends string>(model: M, args: ArgsOf<M, "findUniqueOrThrow">): Promise<StoredRow> {
    return this.#readOrThrow(model, "findUniqueOrThrow", args);
  }

  /** As `findUniqueOrThrow`, for the first row `args` select. */
  findFirstOrThrow<M extends string>(model: M, args?: ArgsOf<M, "findFirstOrThrow">): Promise<StoredRow> {
    return this.#readOrThrow(model, "findFirstOrThrow", args);
  }

  /** The number of rows `args` select: the reader's count when it translates them, else Prisma's (no rows to count). */
  count<M extends string>(model: M, args?: ArgsOf<M, "count">): Promise<number> {
    const planned = this.reader?.plan(model, "count", args as Args);
    return (planned ? planned(this.budget) : delegateOf(this.prisma, model).count(args)) as Promise<number>;
  }

  /**
   * A page of rows (`skip`/`take`) and the number of rows `args.where` selects: one statement of the reader's when it
   * translates `args` (the count a scalar subquery beside the rows; counted apart only for a page past the end), else
   * Prisma's `findMany` and `count`, side by side. For a caller that always shows the total (REST's `meta.total`).
   */
  async findPage<M extends string>(
    model: M,
    args: ArgsOf<M, "findMany">,
  ): Promise<{ rows: StoredRow[]; total: number }> {
    const count = () => this.count(model, { where: (args as Args).where } as ArgsOf<M, "count">);
    const planned = this.reader?.planPage(model, args as Args);
    if (planned) {
      const { rows, total } = await planned(this.budget);
      return { rows: rows as StoredRow[], total: total ?? (await count()) };
    }
    const [rows, total] = await Promise.all([this.#prisma(model, "findMany", args) as Promise<StoredRow[]>, count()]);
    return { rows, total };
  }

  /** Groups of rows with their aggregates: the reader's when it translates `args`, else Prisma's, counted. */
  groupBy<M extends string>(model: M, args: ArgsOf<M, "groupBy">): Promise<Row[]> {
    return this.#read(model, "groupBy", args) as Promise<Row[]>;
  }

  /** Prisma's answer to a read, counted against the row budget when the reader was asked first. */
  #prisma(model: string, method: Reading, args: unknown): Promise<unknown> {
    const answer = delegateOf(this.prisma, model)[method](args);
    return this.reader ? answer.then((rows) => countRows(model, rows, this.budget)) : answer;
  }

  #read(model: string, method: Reading, args: unknown): Promise<unknown> {
    return this.reader?.plan(model, method, args as Args)?.(this.budget) ?? this.#prisma(model, method, args);
  }

  async #readOrThrow(model: string, method: Reading, args: unknown): Promise<StoredRow> {
    const planned = this.reader?.plan(model, method, args as Args);
    return ((planned && (await planned(this.budget))) ?? (await this.#prisma(model, method, args))) as StoredRow;
  }
}

/**
 * Statements of our own inside a write transaction, written out rather than expressed as Prisma calls: on the
 * transaction's own connection when it has one (the direct transactions on PostgreSQL, and those whose connection the
 * store knows), through Prisma's raw queries otherwise. Placeholders are `?` on SQLite and `$n` on PostgreSQL.
 */
export interface TransactionSql {
  dialect: Dialect;
  /** The rows of one statement, each as an array of its columns. */
  all(sql: string, params: unknown[]): Promise<unknown[][]>;
}

/** A call in a direct transaction that only Prisma can answer: the transaction is rolled back and run under Prisma. */
export class NeedsPrisma extends Error {}

/**
 * What the layers above the store keep with one transaction, each field declared by the module that owns it with
 * `declare module "../db/store.ts"` (src/data/outbox.ts: the events its writes record; src/data/write.ts: its file
 * changes), so each is typed where it is defined while this layer imports none of them. Set by whoever starts the
 * transaction (`inTransaction`), hence optional.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in by declaration merging
export interface TransactionCarry {}

/**
 * Work for `Store.transaction(work, { direct: true })`: it may run twice (rolled back when it needs Prisma, then run
 * again under Prisma's transaction), so it must have no effect outside the database before it commits. Made with
 * `mayRunTwice(work)`, which says so where the work is written.
 */
export interface RerunnableWork<T> {
  readonly mayRunTwice: (tx: StoreTransaction) => Promise<T>;
}

/** `work`, marked as work that may run twice (see `RerunnableWork`). */
export const mayRunTwice = <T>(work: (tx: StoreTransaction) => Promise<T>): RerunnableWork<T> => ({
  mayRunTwice: work,
});

/**
 * One write transaction. Its reads are the store's (on the transaction's connection); its single-row `create` and
 * `update` go to the SQL writer when it translates them; `prisma` is Prisma's transaction client for everything else.
 * In a direct transaction (`Store.transaction(work, { direct: true })`) there is no Prisma transaction: using `prisma`,
 * or a call our SQL does not translate, rolls it back and the store runs `work` again in a Prisma transaction.
 */
export class StoreTransaction extends StoreReads {
  readonly #prisma: Prisma.TransactionClient | null;
  #last: LastStatement | null = null;
  /** Names of the rows this transaction has read, by `model:id` (src/db/transaction-names.ts); null until tracked. */
  names: Map<string, string> | null = null;
  /** Whole rows this transaction has read, by `model:id` (SQLite only, src/db/transaction-names.ts); null until tracked. */
  rows: Map<string, StoredRow> | null = null;
  /** What the layers above keep with this transaction (`TransactionCarry`). */
  readonly carry: Partial<TransactionCarry> = {};

  constructor(
    /** Prisma's transaction client; null in a direct transaction, which has none. */
    prisma: Prisma.TransactionClient | null,
    readonly provider: Dialect,
    reader: SqlReader | null,
    /** Our SQL for single-row writes on the transaction's connection; null: every write is Prisma's. */
    readonly writer: SqlWriter | null,
    budget: RowBudget | null,
    /** Whether the connection sends the last statement (`atCommit`) in the same write as the COMMIT. */
    private readonly sendsLastWithCommit = false,
  ) {
    super(reader, budget);
    this.#prisma = prisma;
  }

  /**
   * Whether a statement asked for before the last one has answered goes out right behind it, in order, on the same
   * connection (PostgreSQL's direct transactions, those that also send the last statement with the COMMIT): a caller
   * may then ask for independent writes together and pay one round trip for them.
   */
  get pipelines(): boolean {
    return this.sendsLastWithCommit;
  }

  /**
   * Prisma's transaction client: deleteMany, updateMany, upsert, aggregate, nested writes, raw SQL. A direct
   * transaction has none: asking for it throws NeedsPrisma, and the store runs the work again in Prisma's.
   */
  get prisma(): Prisma.TransactionClient {
    if (!this.#prisma) throw new NeedsPrisma("this needs Prisma's transaction");
    return this.#prisma;
  }

  /**
   * Inserts one row. The SQL writer's INSERT ... RETURNING when it translates `args` (column values only), else
   * Prisma's `create`; Prisma's too when the writer's statement fails where Prisma answers with its own error.
   */
  create<M extends string>(model: M, args: ArgsOf<M, "create">): Promise<StoredRow> {
    return this.#write(model, "create", args);
  }

  /** Updates the row `where: { id }` names: the SQL writer's UPDATE ... RETURNING when it translates `args`, else Prisma's. */
  update<M extends string>(model: M, args: ArgsOf<M, "update">): Promise<StoredRow> {
    return this.#write(model, "update", args);
  }

  /**
   * Updates row `id` with `data` and answers the row as it was and as it is, in one statement on PostgreSQL (the old
   * row read `FOR UPDATE` in the UPDATE's FROM), a SELECT and the UPDATE on SQLite. Null when the transaction has no
   * writer, the writer does not translate `data`, or no row was updated: the caller then reads and updates itself.
   */
  async updateWithOld(model: string, id: number, data: Args): Promise<{ old: StoredRow; row: StoredRow } | null> {
    const updated = await this.writer?.planUpdateWithOld(model, id, data)?.();
    return updated && updated !== FAILED ? (updated as { old: StoredRow; row: StoredRow }) : null;
  }

  /**
   * The transaction's last statement: on PostgreSQL's direct transactions sent in the same write and round trip as the
   * COMMIT, elsewhere run at once, and the COMMIT waits for it. Its rows are answered once the transaction has
   * committed (so the work must not await them); if it fails, the transaction rolls back and fails with its error.
   * One per transaction, asked for as the work's last step.
   */
  atCommit(sql: string, params: unknown[]): Promise<unknown[][]> {
    if (this.#last) throw new Error("A transaction has one last statement");
    let settle!: LastStatement["settle"];
    const rows = new Promise<unknown[][]>(
      (resolve, reject) =>
        (settle = (error, value) => (error === undefined ? resolve(value!) : reject(error as Error))),
    );
    // Awaited after the transaction: if it fails, the transaction's own failure is what the caller sees first.
    rows.catch(() => undefined);
    if (this.sendsLastWithCommit) {
      this.#last = { statement: { sql, params }, settle };
    } else {
      const ran = this.sql.all(sql, params);
      ran.catch(() => undefined);
      this.#last = { ran, settle };
    }
    return rows;
  }

  /** The store's, as the transaction ends: the statement `atCommit` asked for, taken once. */
  takeLast(): LastStatement | null {
    const last = this.#last;
    this.#last = null;
    return last;
  }

  /** Statements of our own in this transaction: on its connection when the store knows it, else Prisma's raw queries. */
  get sql(): TransactionSql {
    const writer = this.writer;
    if (writer) {
      return {
        dialect: writer.driver.dialect,
        all: (sql, params) => (writer.options.onStatement?.(sql), writer.driver.all(sql, params)),
      };
    }
    return {
      dialect: this.provider,
      all: async (sql, params) =>
        (await this.prisma.$queryRawUnsafe<Row[]>(sql, ...params)).map((row) => Object.values(row)),
    };
  }

  /**
   * The row `id` of `model` with every column, locked until the transaction ends on PostgreSQL (`FOR UPDATE`), so what
   * the caller changes next starts from the value no other transaction can change meanwhile; SQLite runs one write
   * transaction at a time. Null when there is no such row.
   */
  async rowForUpdate(model: string, id: number): Promise<StoredRow | null> {
    const sql = this.sql;
    const scalars = models.get(model)!.scalars;
    const pg = sql.dialect === "postgresql";
    const rows = await sql.all(
      `SELECT ${scalars.map((s) => quote(s.name)).join(", ")} FROM ${quote(model)} WHERE "id" = ${pg ? "$1" : "?"}${pg ? " FOR UPDATE" : ""}`,
      [id],
    );
    const row = rows[0];
    return row
      ? (Object.fromEntries(scalars.map((s, i) => [s.name, decode(sql.dialect, s, row[i])])) as StoredRow)
      : null;
  }

  async #write(model: string, method: "create" | "update", args: unknown): Promise<StoredRow> {
    const planned = this.writer?.plan(model, method, args as Args);
    const row = planned ? await planned() : FAILED;
    return (row === FAILED ? await delegateOf(this.prisma, model)[method](args) : row) as StoredRow;
  }
}

/** A transaction's last statement (`StoreTransaction.atCommit`), and how its caller learns the outcome. */
interface LastStatement {
  settle(error: unknown, rows?: unknown[][]): void;
  /** The statement, where it goes with the COMMIT. */
  statement?: SqlStatement;
  /** Its rows, where it ran at once. */
  ran?: Promise<unknown[][]>;
}

/** The rows of a last statement that ran at once (none that goes with the COMMIT); its failure is settled and thrown. */
async function ranLast(last: LastStatement | null): Promise<unknown[][] | undefined> {
  if (!last?.ran) return undefined;
  return last.ran.catch((error: unknown) => {
    last.settle(error);
    throw error;
  });
}

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

export interface TransactionOptions {
  /** How long to wait for a connection and for the transaction to start (Prisma's `maxWait`), in ms. */
  maxWait?: number;
  /** How long the transaction may run (Prisma's `timeout`), in ms. */
  timeout?: number;
  /**
   * Run `work` on a connection of our own with BEGIN and COMMIT sent directly, without Prisma's interactive
   * transaction (which costs more than the statements of a small write): a pooled connection on PostgreSQL, the
   * adapter's own connection on SQLite (src/db/sqlite.ts, `directTransaction`). If `work` needs Prisma, the direct transaction is rolled back and `work` runs again in Prisma's, so
   * it must have no effect outside the database before it commits.
   */
  direct?: boolean;
  /**
   * A direct transaction on SQLite that ends with no other write waiting gives the event loop one turn before it
   * commits, so that writes already received can join its group and share its COMMIT (`SqliteClient.directTransaction`).
   * For requests' writes, where throughput under concurrent writes is worth one turn of latency.
   */
  awaitCompany?: boolean;
}

/** One model's reads of the store, called as Prisma's delegate is (see `Store.readDelegates`). */
export type ReadDelegate = Record<Exclude<Reading, "groupBy">, (args: Args) => Promise<unknown>>;

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
