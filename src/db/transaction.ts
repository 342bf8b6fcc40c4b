import type { Prisma } from "../generated/prisma/client.ts";
import { models } from "./datamodel.ts";
import { decode, quote, type Dialect, type SqlStatement } from "./dialect.ts";
import { delegateOf, type ArgsOf, type Row, type StoredRow } from "./models-by-name.ts";
import type { SqlReader } from "./reader.ts";
import type { RowBudget } from "./row-budget.ts";
import { StoreReads } from "./store-reads.ts";
import type { Args } from "./translation.ts";
import { FAILED, type SqlWriter } from "./writer.ts";

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
 * `declare module "../db/transaction.ts"` (src/data/outbox.ts: the events its writes record; src/data/write.ts: its file
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
export interface LastStatement {
  settle(error: unknown, rows?: unknown[][]): void;
  /** The statement, where it goes with the COMMIT. */
  statement?: SqlStatement;
  /** Its rows, where it ran at once. */
  ran?: Promise<unknown[][]>;
}

/** The rows of a last statement that ran at once (none that goes with the COMMIT); its failure is settled and thrown. */
export async function ranLast(last: LastStatement | null): Promise<unknown[][] | undefined> {
  if (!last?.ran) return undefined;
  return last.ran.catch((error: unknown) => {
    last.settle(error);
    throw error;
  });
}
