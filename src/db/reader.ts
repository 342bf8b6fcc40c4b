import { getDatamodel } from "../generated/pothos-types.ts";
import { takeRows } from "./row-budget.ts";

/**
 * Reads without Prisma's per-statement cost (its query compiler and interpreter take about 1 ms of CPU per statement,
 * the SQL itself a tenth of that). The Prisma arguments the service issues (`findMany`, `findFirst`, `findUnique`,
 * `count`, `groupBy` with `where`, `select`/`include`, `orderBy`, `take`, `skip`) are translated to SQL from the
 * Prisma datamodel: to-one relations become LEFT JOINs, to-many relations one batched query per level. Anything
 * outside that subset, or a value Prisma would reject, raises `Unsupported` while planning, before any SQL runs, and
 * the caller hands the query to Prisma: the answer never depends on which path gave it.
 */

export type Dialect = "sqlite" | "postgresql";

export interface ReadDriver {
  readonly dialect: Dialect;
  /** The rows of one statement, each as an array of its columns. */
  all(sql: string, params: unknown[]): Promise<unknown[][]>;
  /**
   * For a write the database refused, the error to throw. Without it (SQLite, which undoes just the refused statement)
   * the write is handed to Prisma, whose own error answers it; with it (PostgreSQL, where the refusal aborts the
   * transaction) the write cannot be run again.
   */
  refused?(error: unknown): unknown;
  close(): Promise<void>;
}

export class Unsupported extends Error {}

/** The work `plan` prepares, or null when planning met something left to Prisma (any other error is a bug: thrown). */
export function plannedOrNull<T>(plan: () => T): T | null {
  try {
    return plan();
  } catch (error) {
    if (error instanceof Unsupported) return null;
    throw error;
  }
}
export function unsupported(what: string): never {
  throw new Unsupported(what);
}

export interface Scalar {
  name: string;
  type: string;
  required: boolean;
  /** `@default(...)` (a database default, or `now()` for DateTime columns) or `@updatedAt`. */
  generated: "default" | "now" | "updatedAt" | null;
}

/** A relation as a join: `target.to = this.from`. */
interface Relation {
  name: string;
  target: string;
  list: boolean;
  from: string;
  to: string;
}

export interface Model {
  name: string;
  scalars: Scalar[];
  scalarByName: Map<string, Scalar>;
  relations: Map<string, Relation>;
}

export type Args = Record<string, any>;
type Row = Record<string, unknown>;

function loadModels(): Map<string, Model> {
  const source = getDatamodel().datamodel.models as unknown as Record<string, { fields: any[] }>;
  const models = new Map<string, Model>();
  for (const [name, { fields }] of Object.entries(source)) {
    const scalars: Scalar[] = fields.filter((f) => f.kind === "scalar" || f.kind === "enum").map((f) => ({
      name: f.name, type: f.type, required: f.isRequired,
      generated: f.isUpdatedAt ? "updatedAt" : !f.hasDefaultValue ? null : f.type === "DateTime" ? "now" : "default",
    }));
    const relations = new Map<string, Relation>();
    for (const f of fields.filter((f) => f.kind === "object")) {
      if (f.relationFromFields?.length === 1) {
        relations.set(f.name, { name: f.name, target: f.type, list: false, from: f.relationFromFields[0], to: "id" });
        continue;
      }
      const other = source[f.type]?.fields.find((o) => o.kind === "object" && o.relationName === f.relationName && o.relationFromFields?.length === 1);
      if (other) relations.set(f.name, { name: f.name, target: f.type, list: f.isList, from: "id", to: other.relationFromFields[0] });
    }
    models.set(name, { name, scalars, scalarByName: new Map(scalars.map((s) => [s.name, s])), relations });
  }
  return models;
}

export const models = loadModels();
export const quote = (identifier: string) => `"${identifier}"`;
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);
export const isPlainObject = (value: unknown): value is Args => typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);

const INT_MIN = -2147483648;
const INT_MAX = 2147483647;
const isoDateTime = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/;

/** SQL text and its parameters, built left to right so that `?` placeholders stay in order. */
export class Statement {
  readonly params: unknown[] = [];
  #aliases = 0;
  constructor(readonly dialect: Dialect) {}

  alias(): string {
    return `t${this.#aliases++}`;
  }

  param(value: unknown): string {
    this.params.push(value);
    return this.dialect === "postgresql" ? `$${this.params.length}` : "?";
  }

  /** A value of a column's type as the database stores it; anything Prisma would refuse is Unsupported. */
  value(field: Scalar, value: unknown): unknown {
    switch (field.type) {
      case "Int":
        return Number.isInteger(value) && (value as number) >= INT_MIN && (value as number) <= INT_MAX ? value : unsupported(`${field.name}: not an Int`);
      case "String":
        return typeof value === "string" ? value : unsupported(`${field.name}: not a String`);
      case "Boolean":
        if (typeof value !== "boolean") unsupported(`${field.name}: not a Boolean`);
        return this.dialect === "sqlite" ? (value ? 1 : 0) : value;
      case "DateTime": {
        const date = value instanceof Date ? value : typeof value === "string" && isoDateTime.test(value) ? new Date(value) : null;
        if (!date || Number.isNaN(date.getTime())) return unsupported(`${field.name}: not a DateTime`);
        // As the Prisma adapters write them: SQLite text with an explicit offset; PostgreSQL timestamp(3) in UTC.
        return this.dialect === "sqlite" ? date.toISOString().replace("Z", "+00:00") : date.toISOString().slice(0, 23);
      }
      default:
        return unsupported(`${field.name}: ${field.type} filters`);
    }
  }

  /** `column IN (list)` with the whole list as one parameter, so the SQL text (and its prepared statement) is reused. */
  inList(column: string, field: Scalar, values: unknown[], negate: boolean): string {
    if (values.length === 0) return negate ? "1=1" : "1=0";
    const encoded = values.map((v) => this.value(field, v));
    if (this.dialect === "postgresql") return `${negate ? "NOT " : ""}${column} = ANY(${this.param(encoded)})`;
    return `${column} ${negate ? "NOT IN" : "IN"} (SELECT value FROM json_each(${this.param(JSON.stringify(encoded))}))`;
  }
}

function scalarFilter(sql: Statement, column: string, field: Scalar, filter: unknown): string {
  if (filter === null) return `${column} IS NULL`;
  if (!isPlainObject(filter)) return `${column} = ${sql.param(sql.value(field, filter))}`;
  const mode = filter.mode;
  if (mode !== undefined && mode !== "default" && mode !== "insensitive") unsupported("mode");
  const insensitive = mode === "insensitive";
  if (insensitive && sql.dialect === "sqlite") unsupported("mode on SQLite");
  const like = (pattern: (s: string) => string, value: unknown) => {
    if (typeof value !== "string" || field.type !== "String") return unsupported("pattern on a non-string");
    // Prisma's handling of LIKE wildcards in the value is its own: such values stay with Prisma.
    if (/[%_\\]/.test(value)) unsupported("wildcard in a pattern");
    return `${column} ${insensitive ? "ILIKE" : "LIKE"} ${sql.param(pattern(value))}`;
  };
  const parts: string[] = [];
  for (const [op, arg] of Object.entries(filter)) {
    if (arg === undefined || op === "mode") continue;
    switch (op) {
      case "equals":
        parts.push(arg === null ? `${column} IS NULL` : insensitive ? like((s) => s, arg) : `${column} = ${sql.param(sql.value(field, arg))}`);
        break;
      case "not":
        if (arg === null) parts.push(`${column} IS NOT NULL`);
        else if (isPlainObject(arg)) parts.push(`NOT (${scalarFilter(sql, column, field, insensitive ? { mode, ...arg } : arg)})`);
        else if (insensitive) unsupported("insensitive not");
        else parts.push(`${column} <> ${sql.param(sql.value(field, arg))}`);
        break;
      case "in":
      case "notIn":
        if (!Array.isArray(arg) || insensitive) unsupported(op);
        parts.push(sql.inList(column, field, arg as unknown[], op === "notIn"));
        break;
      case "lt":
      case "lte":
      case "gt":
      case "gte":
        if (arg === null) unsupported(`${op} null`);
        parts.push(`${column} ${({ lt: "<", lte: "<=", gt: ">", gte: ">=" } as const)[op]} ${sql.param(sql.value(field, arg))}`);
        break;
      case "contains":
        parts.push(like((s) => `%${s}%`, arg));
        break;
      case "startsWith":
        parts.push(like((s) => `${s}%`, arg));
        break;
      case "endsWith":
        parts.push(like((s) => `%${s}`, arg));
        break;
      default:
        unsupported(`filter ${op}`);
    }
  }
  return parts.length ? parts.join(" AND ") : "1=1";
}

function relationFilter(sql: Statement, alias: string, rel: Relation, filter: unknown): string {
  const target = models.get(rel.target)!;
  const exists = (where: unknown, negateInner = false) => {
    const inner = sql.alias();
    const condition = whereSql(sql, target, inner, where);
    return `EXISTS (SELECT 1 FROM ${quote(target.name)} AS ${quote(inner)} WHERE ${quote(inner)}.${quote(rel.to)} = ${quote(alias)}.${quote(rel.from)} AND ${
      negateInner ? `NOT (${condition})` : `(${condition})`
    })`;
  };
  if (!rel.list) {
    const related = isPlainObject(filter) && "is" in filter ? filter.is : filter;
    if (isPlainObject(filter) && ("isNot" in filter || ("is" in filter && Object.keys(filter).length > 1))) unsupported("isNot");
    if (related === null) return rel.from === "id" ? `NOT ${exists({})}` : `${quote(alias)}.${quote(rel.from)} IS NULL`;
    if (!isPlainObject(related)) return unsupported("to-one filter");
    return exists(related);
  }
  if (!isPlainObject(filter)) return unsupported("to-many filter");
  const parts: string[] = [];
  for (const [op, where] of Object.entries(filter)) {
    if (where === undefined) continue;
    if (op === "some") parts.push(exists(where));
    else if (op === "none") parts.push(`NOT ${exists(where)}`);
    else if (op === "every") parts.push(`NOT ${exists(where, true)}`);
    else unsupported(`to-many ${op}`);
  }
  return parts.length ? parts.join(" AND ") : "1=1";
}

function whereSql(sql: Statement, model: Model, alias: string, where: unknown): string {
  if (where === undefined) return "1=1";
  if (!isPlainObject(where)) return unsupported("where");
  const parts: string[] = [];
  for (const [key, value] of Object.entries(where)) {
    if (value === undefined) continue;
    if (key === "AND" || key === "OR" || key === "NOT") {
      const items = list(value).map((w) => `(${whereSql(sql, model, alias, w)})`);
      // Prisma drops empty conditions before it combines them (`NOT: {}` matches every row), and an empty OR matches
      // nothing at the top level but everything under AND: such conditions get Prisma's answer, not logic's.
      if (key !== "AND" && (!items.length || items.some((i) => !i.includes(`${quote(alias)}.`)))) unsupported(`constant condition under ${key}`);
      if (key === "AND") parts.push(items.length ? items.join(" AND ") : "1=1");
      else if (key === "OR") parts.push(items.join(" OR "));
      else parts.push(items.map((i) => `NOT ${i}`).join(" AND "));
      continue;
    }
    const field = model.scalarByName.get(key);
    if (field) {
      if (field.type === "Json") unsupported("Json filter");
      parts.push(scalarFilter(sql, `${quote(alias)}.${quote(key)}`, field, value));
      continue;
    }
    const rel = model.relations.get(key);
    if (!rel) return unsupported(`where ${model.name}.${key}`);
    parts.push(relationFilter(sql, alias, rel, value));
  }
  return parts.length ? parts.map((p) => `(${p})`).join(" AND ") : "1=1";
}

/** ORDER BY terms; a sort on a to-one relation's column adds a LEFT JOIN to `joins`. */
function orderSql(sql: Statement, model: Model, alias: string, orderBy: unknown, joins: string[]): string[] {
  if (orderBy === undefined) return [];
  const terms: string[] = [];
  for (const item of list(orderBy)) {
    if (!isPlainObject(item)) unsupported("orderBy");
    for (const [key, value] of Object.entries(item)) {
      if (value === undefined) continue;
      if (model.scalarByName.has(key)) {
        const column = `${quote(alias)}.${quote(key)}`;
        if (value === "asc" || value === "desc") terms.push(`${column} ${value.toUpperCase()}`);
        else if (isPlainObject(value) && (value.sort === "asc" || value.sort === "desc") && Object.keys(value).every((k) => k === "sort" || k === "nulls")) {
          if (value.nulls !== undefined && value.nulls !== "first" && value.nulls !== "last") unsupported("nulls");
          terms.push(`${column} ${value.sort.toUpperCase()}${value.nulls ? ` NULLS ${value.nulls.toUpperCase()}` : ""}`);
        } else unsupported("order direction");
        continue;
      }
      const rel = model.relations.get(key);
      if (!rel || rel.list || !isPlainObject(value)) return unsupported(`orderBy ${key}`);
      const joined = sql.alias();
      joins.push(`LEFT JOIN ${quote(rel.target)} AS ${quote(joined)} ON ${quote(joined)}.${quote(rel.to)} = ${quote(alias)}.${quote(rel.from)}`);
      terms.push(...orderSql(sql, models.get(rel.target)!, joined, value, joins));
    }
  }
  return terms;
}

/** What one model's rows carry in a result: selected columns, and relations with their own arguments. */
interface Shape {
  model: Model;
  scalars: Scalar[];
  relations: Array<{ rel: Relation; args: Args }>;
}

function shapeOf(model: Model, args: Args): Shape {
  const { select, include, omit } = args;
  if (omit !== undefined || (select && include)) unsupported("omit or select with include");
  const relations: Shape["relations"] = [];
  const take = (key: string, value: unknown) => {
    const rel = model.relations.get(key);
    if (!rel) return unsupported(`relation ${model.name}.${key}`);
    if (value !== true && !isPlainObject(value)) unsupported("relation argument");
    const nested: Args = value === true ? {} : value;
    const allowed = rel.list ? ["select", "include", "where", "orderBy"] : ["select", "include"];
    for (const [k, v] of Object.entries(nested)) if (v !== undefined && !allowed.includes(k)) unsupported(`${k} on ${key}`);
    relations.push({ rel, args: nested });
  };
  if (select) {
    if (!isPlainObject(select)) unsupported("select");
    const scalars: Scalar[] = [];
    for (const [key, value] of Object.entries(select)) {
      if (!value) continue;
      const field = model.scalarByName.get(key);
      if (field) {
        if (value !== true) unsupported("select value");
        scalars.push(field);
      } else take(key, value);
    }
    return { model, scalars, relations };
  }
  if (include !== undefined) {
    if (!isPlainObject(include)) unsupported("include");
    for (const [key, value] of Object.entries(include)) if (value) take(key, value);
  }
  return { model, scalars: model.scalars, relations };
}

/** One SELECT: a model's rows with their to-one relations joined in, recursively; to-many relations load after. */
class Select {
  readonly columns: string[] = [];
  readonly joins: string[] = [];
  constructor(readonly sql: Statement) {}

  /** Adds `shape` at `alias` (its columns, its joins) and returns how to read it from a row. */
  add(shape: Shape, alias: string): Reader {
    const keys = new Set(shape.relations.map((r) => r.rel.from));
    keys.add("id");
    const fetched = [...shape.scalars];
    for (const key of keys) if (!fetched.some((s) => s.name === key) && shape.model.scalarByName.has(key)) fetched.push(shape.model.scalarByName.get(key)!);
    const start = this.columns.length;
    for (const s of fetched) this.columns.push(`${quote(alias)}.${quote(s.name)}`);
    const reader: Reader = { shape, start, fetched, output: shape.scalars.length, idAt: fetched.findIndex((f) => f.name === "id"), toOne: [], toMany: [] };
    for (const { rel, args } of shape.relations) {
      const target = models.get(rel.target)!;
      const nested = shapeOf(target, args);
      if (rel.list || rel.from === "id") {
        reader.toMany.push({ rel, args, shape: nested });
        continue;
      }
      const joined = this.sql.alias();
      this.joins.push(`LEFT JOIN ${quote(target.name)} AS ${quote(joined)} ON ${quote(joined)}.${quote(rel.to)} = ${quote(alias)}.${quote(rel.from)}`);
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
  /** Where `id` is in `fetched` (-1: no id column): a LEFT JOIN that found nothing has it NULL. */
  idAt: number;
  toOne: Array<{ rel: Relation; reader: Reader }>;
  toMany: Array<{ rel: Relation; args: Args; shape: Shape }>;
}

/** Where rows of a to-many relation go once loaded: the parent objects and their key values. */
interface Pending {
  rel: Relation;
  args: Args;
  shape: Shape;
  parents: Array<{ object: Row; key: unknown }>;
}

function parseSqliteDate(value: unknown): Date {
  if (typeof value === "number") return new Date(value);
  const text = String(value).replace(" ", "T");
  return new Date(/[zZ]$|[+-]\d\d:?\d\d$/.test(text) || !text.includes("T") ? text : `${text}Z`);
}

export function decode(dialect: Dialect, field: Scalar, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (field.type) {
    case "DateTime":
      return dialect === "sqlite" ? parseSqliteDate(value) : value;
    case "Boolean":
      return dialect === "sqlite" ? value === 1 || value === 1n || value === true : value;
    case "Json":
      return dialect === "sqlite" && typeof value === "string" ? JSON.parse(value) : value;
    case "Int":
      return typeof value === "bigint" ? Number(value) : value;
    default:
      return value;
  }
}

export interface ReadOptions {
  /** Called with each statement's SQL before it runs (statement counts, logs). */
  onStatement?: (sql: string) => void;
}

export class SqlReader {
  constructor(readonly driver: ReadDriver, readonly options: ReadOptions = {}) {}

  /** The model a delegate name (`rankRecord`) stands for, or undefined. */
  static modelOf(delegate: string): string | undefined {
    const name = delegate.charAt(0).toUpperCase() + delegate.slice(1);
    return models.has(name) ? name : undefined;
  }

  /**
   * The work for a Prisma read, or null when the reader does not translate it (the caller then asks Prisma). Planning
   * happens here, synchronously; nothing has run yet.
   */
  plan(model: string, method: string, args: Args = {}): (() => Promise<unknown>) | null {
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
          if (args.take !== undefined || args.cursor !== undefined || args.distinct !== undefined) unsupported("findFirst with take");
          const many = this.#findMany(m, { ...args, take: 1 });
          return async () => (await many())[0] ?? null;
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

  async #all(sql: Statement, text: string): Promise<unknown[][]> {
    this.options.onStatement?.(text);
    return this.driver.all(text, sql.params);
  }

  #findMany(model: Model, args: Args): () => Promise<Row[]> {
    for (const [k, v] of Object.entries(args)) {
      if (v !== undefined && !["where", "select", "include", "orderBy", "take", "skip"].includes(k)) unsupported(k);
    }
    const { take, skip } = args;
    if (take !== undefined && (!Number.isInteger(take) || take < 0)) unsupported("take");
    if (skip !== undefined && (!Number.isInteger(skip) || skip < 0)) unsupported("skip");
    const root = this.#select(model, shapeOf(model, args), args.where, args.orderBy, (sql) => {
      if (take === undefined && !skip) return "";
      if (take === undefined) return sql.dialect === "sqlite" ? ` LIMIT -1 OFFSET ${sql.param(skip)}` : ` OFFSET ${sql.param(skip)}`;
      return ` LIMIT ${sql.param(take)}${skip ? ` OFFSET ${sql.param(skip)}` : ""}`;
    });
    return async () => {
      const objects: Row[] = [];
      await this.#run(root, objects);
      return objects;
    };
  }

  /** Plans one SELECT of `shape`; the rows it reads are pushed to `into`, and its to-many relations are planned on demand. */
  #select(model: Model, shape: Shape, where: unknown, orderBy: unknown, tail: (sql: Statement) => string) {
    const sql = new Statement(this.driver.dialect);
    const alias = sql.alias();
    const select = new Select(sql);
    const reader = select.add(shape, alias);
    const condition = whereSql(sql, model, alias, where);
    const orderJoins: string[] = [];
    const order = orderSql(sql, model, alias, orderBy, orderJoins);
    if (!order.some((t) => t.startsWith(`${quote(alias)}."id" `)) && model.scalarByName.has("id")) order.push(`${quote(alias)}."id" ASC`);
    const limit = tail(sql);
    const filtered = `${condition === "1=1" ? "" : ` WHERE ${condition}`}`;
    const ordered = order.length ? ` ORDER BY ${order.join(", ")}` : "";
    const joins = (list: string[]) => list.map((j) => ` ${j}`).join("");
    // A page is cut before its to-one relations are joined: OFFSET would otherwise join every row it skips.
    const text = limit && select.joins.length && !orderJoins.length
      ? `SELECT ${select.columns.join(", ")} FROM (SELECT ${quote(alias)}.* FROM ${quote(model.name)} AS ${quote(alias)}${filtered}${ordered}${limit}) AS ${quote(alias)}` +
        `${joins(select.joins)}${ordered}`
      : `SELECT ${select.columns.join(", ")} FROM ${quote(model.name)} AS ${quote(alias)}${joins([...select.joins, ...orderJoins])}${filtered}${ordered}${limit}`;
    return { sql, text, reader };
  }

  async #run(select: { sql: Statement; text: string; reader: Reader }, into: Row[]): Promise<void> {
    const rows = await this.#all(select.sql, select.text);
    // Counted before they become objects, and before the next level of relations is read.
    takeRows(rows.length);
    const pending = new Map<Reader["toMany"][number], Pending>();
    for (const row of rows) into.push(this.#object(select.reader, row, pending)!);
    for (const p of pending.values()) await this.#loadMany(p);
  }

  /** The object for `reader`'s part of `row`, or null for a LEFT JOIN that found nothing. */
  #object(reader: Reader, row: unknown[], pending: Map<Reader["toMany"][number], Pending>): Row | null {
    const dialect = this.driver.dialect;
    if (reader.idAt >= 0 && row[reader.start + reader.idAt] == null) return null;
    const object: Row = {};
    const keys: Row = {};
    reader.fetched.forEach((field, i) => {
      const value = decode(dialect, field, row[reader.start + i]);
      if (i < reader.output) object[field.name] = value;
      keys[field.name] = value;
    });
    for (const { rel, reader: nested } of reader.toOne) object[rel.name] = this.#object(nested, row, pending);
    for (const many of reader.toMany) {
      let p = pending.get(many);
      if (!p) pending.set(many, (p = { ...many, parents: [] }));
      p.parents.push({ object, key: keys[many.rel.from] });
    }
    return object;
  }

  async #loadMany(p: Pending): Promise<void> {
    const { rel, shape } = p;
    const target = models.get(rel.target)!;
    const keys = [...new Set(p.parents.map((x) => x.key).filter((k) => k != null))];
    const groups = new Map<unknown, Row[]>();
    if (keys.length) {
      // The child's join column is read even when the selection leaves it out; it is removed again below.
      const keyed: Shape = shape.scalars.some((s) => s.name === rel.to) ? shape : { ...shape, scalars: [...shape.scalars, target.scalarByName.get(rel.to)!] };
      const where = p.args.where === undefined ? { [rel.to]: { in: keys } } : { AND: [{ [rel.to]: { in: keys } }, p.args.where] };
      const select = this.#select(target, keyed, where, p.args.orderBy, () => "");
      const rows: Row[] = [];
      await this.#run(select, rows);
      for (const row of rows) {
        const key = row[rel.to];
        if (keyed !== shape) delete row[rel.to];
        const group = groups.get(key);
        if (group) group.push(row);
        else groups.set(key, [row]);
      }
    }
    // Parents that share a key share its rows, but each answer carries them again: the rows handed out beyond those read
    // count too (statuses → users → status → users reads 2,000 people twice, and would answer 800,000).
    let handedOut = 0;
    for (const { key } of p.parents) handedOut += rel.list ? (groups.get(key)?.length ?? 0) : groups.has(key) ? 1 : 0;
    let read = 0;
    for (const group of groups.values()) read += group.length;
    takeRows(Math.max(0, handedOut - read));
    for (const { object, key } of p.parents) {
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
    return async () => Number((await this.#all(sql, text))[0]![0]);
  }

  /** `groupBy` with `by`, `where` and `_max`/`_min` of columns. */
  #groupBy(model: Model, args: Args): () => Promise<Row[]> {
    for (const [k, v] of Object.entries(args)) if (v !== undefined && !["by", "where", "_max", "_min"].includes(k)) unsupported(`groupBy ${k}`);
    const by = list(args.by).map((name) => model.scalarByName.get(name as string) ?? unsupported(`groupBy ${String(name)}`));
    const sql = new Statement(this.driver.dialect);
    const alias = sql.alias();
    const aggregates: Array<{ fn: "_max" | "_min"; field: Scalar }> = [];
    for (const fn of ["_max", "_min"] as const) {
      if (args[fn] === undefined) continue;
      if (!isPlainObject(args[fn])) unsupported(fn);
      for (const [name, on] of Object.entries(args[fn])) if (on) aggregates.push({ fn, field: model.scalarByName.get(name) ?? unsupported(`${fn} ${name}`) });
    }
    const columns = [...by.map((f) => `${quote(alias)}.${quote(f.name)}`), ...aggregates.map((a) => `${a.fn === "_max" ? "MAX" : "MIN"}(${quote(alias)}.${quote(a.field.name)})`)];
    const condition = whereSql(sql, model, alias, args.where);
    const text = `SELECT ${columns.join(", ")} FROM ${quote(model.name)} AS ${quote(alias)}${condition === "1=1" ? "" : ` WHERE ${condition}`} GROUP BY ${
      by.map((f) => `${quote(alias)}.${quote(f.name)}`).join(", ")
    }`;
    const dialect = this.driver.dialect;
    return async () =>
      (await this.#all(sql, text)).map((row) => {
        const out: Row = {};
        by.forEach((f, i) => (out[f.name] = decode(dialect, f, row[i])));
        aggregates.forEach((a, i) => ((out[a.fn] ??= {}) as Row)[a.field.name] = decode(dialect, a.field, row[by.length + i]));
        return out;
      });
  }
}
