import type { Prisma, PrismaClient } from "../generated/prisma/client.ts";
import { models } from "./datamodel.ts";
import { delegateOf, type ArgsOf, type Reading, type Row, type StoredRow } from "./models-by-name.ts";
import type { SqlReader } from "./reader.ts";
import type { Args } from "./translation.ts";
import { takeRows, type RowBudget } from "./row-budget.ts";

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
