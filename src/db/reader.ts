import { takeRows, type RowBudget } from "./row-budget.ts";
import { models, type Model, type Relation, type Scalar } from "./datamodel.ts";
import { decode, decoderOf, quote, Statement, type Dialect } from "./dialect.ts";
import type { ReadDriver, ReadOptions } from "./driver.ts";
import { isPlainObject, list, plannedOrNull, unsupported, type Args } from "./translation.ts";
import { orderSql, whereSql } from "./conditions.ts";

/**
 * Reads without Prisma's per-statement cost (its query compiler and interpreter take about 1 ms of CPU per statement,
 * the SQL itself a tenth of that). The Prisma arguments the service issues (`findMany`, `findFirst`, `findUnique`,
 * `count`, `groupBy` with `where`, `select`/`include`, `orderBy`, `take`, `skip`, `_count`/`_max`/`_min`) are
 * translated to SQL from the Prisma datamodel: to-one relations become LEFT JOINs, to-many relations one batched query
 * per level, for all the parents at once, a nested `take`/`skip` a page of each parent's rows cut by ROW_NUMBER() in
 * that same query (Prisma reads every child row and slices them in memory). Anything outside that subset, or a value
 * Prisma would reject, raises `Unsupported` while planning, before any SQL runs, and the caller hands the query to
 * Prisma: the answer never depends on which path gave it (on SQLite, `mode: "insensitive"`, which Prisma refuses there,
 * is the reader's alone; see `scalarFilter` in src/db/conditions.ts).
 */

type Row = Record<string, unknown>;

/** What one model's rows carry in a result: selected columns, and relations with their own arguments. */
interface Shape {
  model: Model;
  scalars: Scalar[];
  relations: Array<{ rel: Relation; args: Args }>;
  /** Columns read but not handed out (a to-many relation's join column, which groups its rows by parent). */
  keys?: string[];
  /** Whether `scalars` outlives the request: a model's own list, or a frozen select's (`frozenSelectScalars`). */
  lasting: boolean;
}

/**
 * The columns of a frozen `select` (a REST document's plan, made once and reused by every request: src/graphql/
 * fixed-plans.ts), as one array for as long as the plan lives: its rows' objects are then made by one function
 * (`rowMaker`), made once.
 */
const frozenSelectScalars = new WeakMap<object, { model: Model; scalars: Scalar[] }>();

function shapeOf(model: Model, args: Args): Shape {
  const { select, include, omit } = args;
  if (omit !== undefined || (select && include)) unsupported("omit or select with include");
  const relations: Shape["relations"] = [];
  const take = (key: string, value: unknown) => {
    const rel = model.relations.get(key);
    if (!rel) return unsupported(`relation ${model.name}.${key}`);
    if (value !== true && !isPlainObject(value)) unsupported("relation argument");
    const nested: Args = value === true ? {} : value;
    const allowed = rel.list ? ["select", "include", "where", "orderBy", "take", "skip"] : ["select", "include"];
    for (const [k, v] of Object.entries(nested))
      if (v !== undefined && !allowed.includes(k)) unsupported(`${k} on ${key}`);
    relations.push({ rel, args: nested });
  };
  if (select) {
    if (!isPlainObject(select)) unsupported("select");
    const cached = frozenSelectScalars.get(select);
    const known = cached?.model === model ? cached.scalars : undefined;
    const scalars: Scalar[] = [];
    for (const [key, value] of Object.entries(select)) {
      if (!value) continue;
      const field = model.scalarByName.get(key);
      if (field) {
        if (value !== true) unsupported("select value");
        if (!known) scalars.push(field);
      } else take(key, value);
    }
    if (known) return { model, scalars: known, relations, lasting: true };
    const lasting = Object.isFrozen(select);
    if (lasting) frozenSelectScalars.set(select, { model, scalars });
    return { model, scalars, relations, lasting };
  }
  if (include !== undefined) {
    if (!isPlainObject(include)) unsupported("include");
    for (const [key, value] of Object.entries(include)) if (value) take(key, value);
  }
  return { model, scalars: model.scalars, relations, lasting: true };
}

/** A planned statement: its SQL, its parameters, and how to read its rows. */
interface Planned {
  text: string;
  params: unknown[];
  reader: Reader;
  /** Where each row carries the number of rows the page was cut from (`Range.total`), after the reader's columns. */
  totalAt?: number;
}

/**
 * The statement of a to-many relation, planned with its parent's, for the children of all the parents at once; the
 * parents' keys are bound once they have been read.
 */
interface Children extends Planned {
  rel: Relation;
  /** The parameters with the parents' keys in place. */
  bind(keys: unknown[]): unknown[];
  /** Where the join column is among the rows' fetched columns: it hands each row to its parent. */
  groupAt: number;
  /** `take: 0`: no rows, and no statement. */
  none: boolean;
}

/** One SELECT: a model's rows with their to-one relations joined in, recursively; to-many relations load after. */
class Select {
  readonly columns: string[] = [];
  readonly joins: string[] = [];
  constructor(
    readonly sql: Statement,
    readonly children: (rel: Relation, args: Args, shape: Shape) => Children,
  ) {}

  /** Adds `shape` at `alias` (its columns, its joins) and returns how to read it from a row. */
  add(shape: Shape, alias: string): Reader {
    const keys = new Set([...shape.relations.map((r) => r.rel.from), "id", ...(shape.keys ?? [])]);
    const fetched = [...shape.scalars];
    for (const key of keys)
      if (!fetched.some((s) => s.name === key) && shape.model.scalarByName.has(key))
        fetched.push(shape.model.scalarByName.get(key)!);
    const start = this.columns.length;
    for (const s of fetched) this.columns.push(`${quote(alias)}.${quote(s.name)}`);
    const at = new Map(fetched.map((f, i) => [f.name, i]));
    const make = rowMaker(this.sql.dialect, shape, start);
    const reader: Reader = {
      shape,
      start,
      fetched,
      output: shape.scalars.length,
      make,
      idAt: at.get("id") ?? -1,
      at,
      toOne: [],
      toMany: [],
    };
    for (const { rel, args } of shape.relations) {
      const target = models.get(rel.target)!;
      const nested = shapeOf(target, args);
      if (rel.list || rel.from === "id") {
        reader.toMany.push(this.children(rel, args, nested));
        continue;
      }
      const joined = this.sql.alias();
      this.joins.push(
        `LEFT JOIN ${quote(target.name)} AS ${quote(joined)} ON ${quote(joined)}.${quote(rel.to)} = ${quote(alias)}.${quote(rel.from)}`,
      );
      reader.toOne.push({ rel, reader: this.add(nested, joined) });
    }
    return reader;
  }
}

interface Reader {
  shape: Shape;
  start: number;
  /** Selected columns first (`output` of them), then keys read only to join relations. */
  fetched: Scalar[];
  output: number;
  /** The object of the selected columns of a row, where one was made for them; else `#object`'s loop. */
  make: RowMaker | null;
  /** Where `id` is in `fetched` (-1: no id column): a LEFT JOIN that found nothing has it NULL. */
  idAt: number;
  /** Where each fetched column is. */
  at: Map<string, number>;
  toOne: Array<{ rel: Relation; reader: Reader }>;
  toMany: Children[];
}

/** Where rows of a to-many relation go once loaded: the parent objects and their key values. */
interface Pending {
  children: Children;
  parents: Array<{ object: Row; key: unknown }>;
}

/** A page of rows: `take` of them after the first `skip`. */
interface Range {
  take?: number;
  skip?: number;
  /** Also count the rows the page is cut from, in the same statement (a column of every row). */
  total?: boolean;
}

/** The row number a window gives each child among its parent's (named apart from any column). */
const ROW_NUMBER = "__row";
/** The count of the rows a page is cut from, beside each of its rows. */
const TOTAL = "__total";

/** A row's object from its columns: `decode` of each selected column, for one list of columns at one place in the row. */
type RowMaker = (row: unknown[]) => Row;

/** Row makers by dialect, list of columns and start. */
const rowMakers = {
  sqlite: new WeakMap<Scalar[], Map<number, RowMaker>>(),
  postgresql: new WeakMap<Scalar[], Map<number, RowMaker>>(),
};

/**
 * The function that makes the object of the columns `scalars`, read from a row at `start`, as one object literal: three
 * to four times faster than adding the columns one at a time, and allocated whole, where an object filled from `{}`
 * outgrows its four in-object slots and reallocates its properties as it grows (bench/FINDINGS.md, "Rows made whole").
 * Made once for each list of columns that lives longer than a request (a model's, or a frozen select's); null for any
 * other (the caller's loop).
 */
function rowMaker(dialect: Dialect, { scalars, lasting }: Shape, start: number): RowMaker | null {
  if (!lasting) return null;
  let byStart = rowMakers[dialect].get(scalars);
  if (!byStart) rowMakers[dialect].set(scalars, (byStart = new Map()));
  let maker = byStart.get(start);
  if (!maker) {
    // Column names come from the Prisma datamodel; `__proto__` as a literal's key would set the prototype.
    if (scalars.some((f) => f.name === "__proto__")) return null;
    const values = scalars.map((f, i) => `${JSON.stringify(f.name)}: decode${i}(row[${start + i}])`);
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- a compiled row decoder, from the datamodel's column names
    maker = new Function(...scalars.map((_, i) => `decode${i}`), `return (row) => ({ ${values.join(", ")} });`)(
      ...scalars.map((f) => decoderOf(dialect, f)),
    ) as RowMaker;
    byStart.set(start, maker);
  }
  return maker;
}

const isCount = (value: unknown): value is number => Number.isInteger(value) && (value as number) >= 0;

export class SqlReader {
  constructor(
    readonly driver: ReadDriver,
    readonly options: ReadOptions = {},
  ) {}

  /** The model a delegate name (`rankRecord`) stands for, or undefined. */
  static modelOf(delegate: string): string | undefined {
    const name = delegate.charAt(0).toUpperCase() + delegate.slice(1);
    return models.has(name) ? name : undefined;
  }

  /**
   * The work for a Prisma read, or null when the reader does not translate it (the caller then asks Prisma). Planning
   * happens here, synchronously, nested relations' statements included; nothing has run yet. The work counts the rows
   * it reads against the budget it is given.
   */
  plan(model: string, method: string, args: Args = {}): ((budget: RowBudget | null) => Promise<unknown>) | null {
    return plannedOrNull(() => {
      const m = models.get(model) ?? unsupported(model);
      if (!isPlainObject(args)) unsupported("arguments");
      switch (method) {
        case "findMany":
          return this.#findMany(m, args);
        case "findFirst":
        case "findUnique":
        case "findFirstOrThrow":
        case "findUniqueOrThrow": {
          if (args.take !== undefined || args.cursor !== undefined || args.distinct !== undefined)
            unsupported("findFirst with take");
          const many = this.#findMany(m, { ...args, take: 1 });
          return async (budget: RowBudget | null) => (await many(budget))[0] ?? null;
        }
        case "count":
          return this.#count(m, args);
        case "groupBy":
          return this.#groupBy(m, args);
        default:
          return null;
      }
    });
  }

  /**
   * The work for a page of `findMany` with the number of rows it was cut from, both from one statement (the count a
   * scalar subquery, which both databases evaluate once), or null when the reader does not translate `args`. The total
   * is null when no row came back to carry it and rows were skipped (a page past the end) or none asked for: count those apart.
   */
  planPage(
    model: string,
    args: Args,
  ): ((budget: RowBudget | null) => Promise<{ rows: Row[]; total: number | null }>) | null {
    return plannedOrNull(() => {
      const m = models.get(model) ?? unsupported(model);
      if (!isPlainObject(args)) unsupported("arguments");
      const root = this.#findManyPlan(m, args, true);
      return async (budget) => {
        const rows: Row[] = [];
        const total = await this.#run(root, rows, budget);
        // No row came back: none matched, unless rows were skipped or none asked for.
        return { rows, total: total ?? (args.skip || args.take === 0 ? null : 0) };
      };
    });
  }

  async #all(text: string, params: unknown[]): Promise<unknown[][]> {
    this.options.onStatement?.(text);
    return this.driver.all(text, params);
  }

  #findManyPlan(model: Model, args: Args, total = false): Planned {
    for (const [k, v] of Object.entries(args)) {
      if (v !== undefined && !["where", "select", "include", "orderBy", "take", "skip"].includes(k)) unsupported(k);
    }
    const { take, skip } = args;
    if (take !== undefined && !isCount(take)) unsupported("take");
    if (skip !== undefined && !isCount(skip)) unsupported("skip");
    return this.#select(
      model,
      shapeOf(model, args),
      (sql, alias) => whereSql(sql, model, alias, args.where),
      args.orderBy,
      { take, skip, total },
    );
  }

  #findMany(model: Model, args: Args): (budget: RowBudget | null) => Promise<Row[]> {
    const root = this.#findManyPlan(model, args);
    return async (budget) => {
      const objects: Row[] = [];
      await this.#run(root, objects, budget);
      return objects;
    };
  }

  /**
   * Plans one SELECT of `shape`, and with it the statements of its to-many relations. `range` is a page of its rows,
   * or with `partition` a page of each partition's (the children of each parent): a window numbers the rows of each
   * partition in order, and the page is cut by those numbers, so every parent's page comes from the one statement.
   */
  #select(
    model: Model,
    shape: Shape,
    where: (sql: Statement, alias: string) => string,
    orderBy: unknown,
    range: Range,
    partition?: string,
  ): Planned {
    const sql = new Statement(this.driver.dialect);
    const alias = sql.alias();
    const select = new Select(sql, (rel, args, nested) => this.#children(rel, args, nested));
    const reader = select.add(shape, alias);
    // The count is the select list's last column, so its parameters come before the WHERE's (SQLite's `?` are positional).
    let total = "";
    if (range.total) {
      const counted = sql.alias();
      const condition = where(sql, counted);
      total = `, (SELECT COUNT(*) FROM ${quote(model.name)} AS ${quote(counted)}${condition === "1=1" ? "" : ` WHERE ${condition}`}) AS ${quote(TOTAL)}`;
    }
    const condition = where(sql, alias);
    const orderJoins: string[] = [];
    const order = orderSql(sql, model, alias, orderBy, orderJoins);
    if (!order.some((t) => t.startsWith(`${quote(alias)}."id" `)) && model.scalarByName.has("id"))
      order.push(`${quote(alias)}."id" ASC`);
    const { take, skip } = range;
    const paged = take !== undefined || !!skip;
    const table = `${quote(model.name)} AS ${quote(alias)}`;
    const filtered = `${condition === "1=1" ? "" : ` WHERE ${condition}`}`;
    const ordered = order.length ? ` ORDER BY ${order.join(", ")}` : "";
    const joins = (list: string[]) => list.map((j) => ` ${j}`).join("");
    const columns = select.columns.join(", ") + total;
    let text: string;
    if (paged && partition !== undefined) {
      // Each parent's page, cut before the to-one relations are joined (as a page of the whole is, below).
      const numbered = `SELECT ${quote(alias)}.*, ROW_NUMBER() OVER (PARTITION BY ${quote(alias)}.${quote(partition)}${ordered}) AS ${quote(ROW_NUMBER)}`;
      const row = `${quote(alias)}.${quote(ROW_NUMBER)}`;
      const bounds = [
        ...(skip ? [`${row} > ${sql.param(skip)}`] : []),
        ...(take !== undefined ? [`${row} <= ${sql.param((skip ?? 0) + take)}`] : []),
      ];
      text =
        `SELECT ${columns} FROM (${numbered} FROM ${table}${joins(orderJoins)}${filtered}) AS ${quote(alias)}${joins(select.joins)}` +
        ` WHERE ${bounds.join(" AND ")} ORDER BY ${quote(alias)}.${quote(partition)}, ${row}`;
    } else {
      let limit = "";
      if (take !== undefined) limit = ` LIMIT ${sql.param(take)}${skip ? ` OFFSET ${sql.param(skip)}` : ""}`;
      else if (skip)
        limit = sql.dialect === "sqlite" ? ` LIMIT -1 OFFSET ${sql.param(skip)}` : ` OFFSET ${sql.param(skip)}`;
      // A page is cut before its to-one relations are joined: OFFSET would otherwise join every row it skips.
      text =
        paged && select.joins.length && !orderJoins.length
          ? `SELECT ${columns} FROM (SELECT ${quote(alias)}.* FROM ${table}${filtered}${ordered}${limit}) AS ${quote(alias)}${joins(select.joins)}${ordered}`
          : `SELECT ${columns} FROM ${table}${joins([...select.joins, ...orderJoins])}${filtered}${ordered}${limit}`;
    }
    return { text, params: sql.params, reader, ...(total ? { totalAt: select.columns.length } : {}) };
  }

  /** Plans the statement that reads a to-many relation's rows for all its parents (`take`/`skip`: per parent). */
  #children(rel: Relation, args: Args, shape: Shape): Children {
    const { take, skip } = args;
    // A negative `take` is Prisma's last rows: Prisma's.
    if (take !== undefined && !isCount(take)) unsupported("nested take");
    if (skip !== undefined && !isCount(skip)) unsupported("nested skip");
    const target = models.get(rel.target)!;
    const key = target.scalarByName.get(rel.to)!;
    // The join column is read even when the selection leaves it out (then it is not put on the rows: deleting a
    // property would leave each row object in V8's slow dictionary mode).
    let keysAt = -1;
    const planned = this.#select(
      target,
      { ...shape, keys: [rel.to] },
      (sql, alias) => {
        keysAt = sql.params.length;
        const keys = sql.inParam(`${quote(alias)}.${quote(rel.to)}`, sql.param(null), false);
        const condition = whereSql(sql, target, alias, args.where);
        return condition === "1=1" ? keys : `${keys} AND (${condition})`;
      },
      args.orderBy,
      { take, skip },
      rel.to,
    );
    const dialect = this.driver.dialect;
    const bind = (keys: unknown[]) =>
      planned.params.map((p, i) => (i === keysAt ? new Statement(dialect).list(key, keys) : p));
    return { ...planned, rel, bind, groupAt: planned.reader.at.get(rel.to)!, none: take === 0 };
  }

  /**
   * Reads `planned`'s rows into `into`; with `groupAt`, each row's value of that fetched column into `keys`. Answers the
   * count of a planned `total`, or null when it was not planned or there is no row to carry it.
   */
  async #run(
    { text, params, reader, totalAt }: Planned,
    into: Row[],
    budget: RowBudget | null,
    groupAt = -1,
    keys: unknown[] = [],
  ): Promise<number | null> {
    const rows = await this.#all(text, params);
    // Counted before they become objects, and before the next level of relations is read.
    takeRows(budget, rows.length);
    const pending = new Map<Children, Pending>();
    const dialect = this.driver.dialect;
    for (const row of rows) {
      into.push(this.#object(reader, row, pending)!);
      if (groupAt >= 0) keys.push(decode(dialect, reader.fetched[groupAt], row[reader.start + groupAt]));
    }
    for (const p of pending.values()) await this.#loadMany(p, budget);
    return totalAt !== undefined && rows.length ? Number(rows[0][totalAt]) : null;
  }

  /** The object for `reader`'s part of `row`, or null for a LEFT JOIN that found nothing. */
  #object(reader: Reader, row: unknown[], pending: Map<Children, Pending>): Row | null {
    const dialect = this.driver.dialect;
    if (reader.idAt >= 0 && row[reader.start + reader.idAt] == null) return null;
    const { fetched, start } = reader;
    let object: Row;
    if (reader.make) object = reader.make(row);
    else {
      object = {};
      for (let i = 0; i < reader.output; i++) object[fetched[i].name] = decode(dialect, fetched[i], row[start + i]);
    }
    for (const { rel, reader: nested } of reader.toOne) object[rel.name] = this.#object(nested, row, pending);
    for (const children of reader.toMany) {
      let p = pending.get(children);
      if (!p) pending.set(children, (p = { children, parents: [] }));
      const at = reader.at.get(children.rel.from)!;
      p.parents.push({ object, key: decode(dialect, fetched[at], row[start + at]) });
    }
    return object;
  }

  async #loadMany({ children, parents }: Pending, budget: RowBudget | null): Promise<void> {
    const { rel } = children;
    const keys = [...new Set(parents.map((x) => x.key).filter((k) => k != null))];
    const groups = new Map<unknown, Row[]>();
    if (keys.length && !children.none) {
      const rows: Row[] = [];
      const rowKeys: unknown[] = [];
      await this.#run({ ...children, params: children.bind(keys) }, rows, budget, children.groupAt, rowKeys);
      rows.forEach((row, i) => {
        const group = groups.get(rowKeys[i]);
        if (group) group.push(row);
        else groups.set(rowKeys[i], [row]);
      });
    }
    // Parents that share a key share its rows, but each answer carries them again: the rows handed out beyond those read
    // count too (statuses → users → status → users reads 2,000 people twice, and would answer 800,000).
    let handedOut = 0;
    for (const { key } of parents) handedOut += rel.list ? (groups.get(key)?.length ?? 0) : groups.has(key) ? 1 : 0;
    let read = 0;
    for (const group of groups.values()) read += group.length;
    takeRows(budget, Math.max(0, handedOut - read));
    for (const { object, key } of parents) {
      const group = groups.get(key) ?? [];
      object[rel.name] = rel.list ? group : (group[0] ?? null);
    }
  }

  #count(model: Model, args: Args): () => Promise<number> {
    for (const [k, v] of Object.entries(args)) if (v !== undefined && k !== "where") unsupported(`count ${k}`);
    const sql = new Statement(this.driver.dialect);
    const alias = sql.alias();
    const condition = whereSql(sql, model, alias, args.where);
    const text = `SELECT COUNT(*) FROM ${quote(model.name)} AS ${quote(alias)}${condition === "1=1" ? "" : ` WHERE ${condition}`}`;
    return async () => Number((await this.#all(text, sql.params))[0][0]);
  }

  /**
   * `groupBy` with `by`, `where`, `_max`/`_min` of columns and `_count` (`true`: the rows, as a number; or an object of
   * `_all` and columns, each counting its non-null values), shaped as Prisma answers it.
   */
  #groupBy(model: Model, args: Args): () => Promise<Row[]> {
    for (const [k, v] of Object.entries(args))
      if (v !== undefined && !["by", "where", "_max", "_min", "_count"].includes(k)) unsupported(`groupBy ${k}`);
    const by = list(args.by).map(
      (name) => model.scalarByName.get(name as string) ?? unsupported(`groupBy ${String(name)}`),
    );
    if (!by.length) unsupported("groupBy by nothing");
    const sql = new Statement(this.driver.dialect);
    const alias = sql.alias();
    const column = (field: Scalar) => `${quote(alias)}.${quote(field.name)}`;
    type Aggregate = { fn: "_max" | "_min" | "_count"; name: string; sql: string; field?: Scalar };
    const aggregates: Aggregate[] = [];
    for (const fn of ["_max", "_min"] as const) {
      if (args[fn] === undefined) continue;
      if (!isPlainObject(args[fn])) unsupported(fn);
      for (const [name, on] of Object.entries(args[fn])) {
        if (!on) continue;
        const field = model.scalarByName.get(name) ?? unsupported(`${fn} ${name}`);
        aggregates.push({ fn, name, field, sql: `${fn === "_max" ? "MAX" : "MIN"}(${column(field)})` });
      }
    }
    const count = args._count;
    if (count === true) aggregates.push({ fn: "_count", name: "", sql: "COUNT(*)" });
    else if (count !== undefined) {
      if (!isPlainObject(count)) unsupported("_count");
      const before = aggregates.length;
      for (const [name, on] of Object.entries(count)) {
        if (on === undefined || on === false) continue;
        if (on !== true) unsupported("_count value");
        aggregates.push({
          fn: "_count",
          name,
          sql:
            name === "_all"
              ? "COUNT(*)"
              : `COUNT(${column(model.scalarByName.get(name) ?? unsupported(`_count ${name}`))})`,
        });
      }
      // Prisma refuses a `_count` that counts nothing.
      if (aggregates.length === before) unsupported("empty _count");
    }
    const condition = whereSql(sql, model, alias, args.where);
    const text =
      `SELECT ${[...by.map(column), ...aggregates.map((a) => a.sql)].join(", ")} FROM ${quote(model.name)} AS ${quote(alias)}` +
      `${condition === "1=1" ? "" : ` WHERE ${condition}`} GROUP BY ${by.map(column).join(", ")}`;
    const dialect = this.driver.dialect;
    return async () =>
      (await this.#all(text, sql.params)).map((row) => {
        const out: Row = {};
        by.forEach((f, i) => (out[f.name] = decode(dialect, f, row[i])));
        aggregates.forEach((a, i) => {
          const value = row[by.length + i];
          // COUNT is a bigint: PostgreSQL's driver reads it as text.
          if (a.fn === "_count" && a.name === "") out._count = Number(value);
          else ((out[a.fn] ??= {}) as Row)[a.name] = a.field ? decode(dialect, a.field, value) : Number(value);
        });
        return out;
      });
  }
}
