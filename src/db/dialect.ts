import { parseSqliteDate } from "../core/timestamps.ts";
import type { Scalar } from "./datamodel.ts";
import { unsupported } from "./translation.ts";

/**
 * The two databases' SQL: identifiers, placeholders, values as each stores them (`Statement`) and as each driver reads
 * them back (`decode`).
 */

export type Dialect = "sqlite" | "postgresql";

/** One statement of our own and its parameters, ready to run. */
export interface SqlStatement {
  sql: string;
  params: unknown[];
}

export const quote = (identifier: string) => `"${identifier}"`;

/**
 * The statement that reads the ids of `table`'s rows whose `column` matches `pattern`, only account `accountId`'s when
 * given. PostgreSQL: LIKE, or ILIKE to ignore case, with no escape character (`ESCAPE ''`). SQLite: LIKE to ignore case
 * (its LIKE ignores ASCII case, and has no escape character unless given one); else GLOB, whose pattern `pattern` is.
 */
export function idsMatchingSql(
  dialect: Dialect,
  table: string,
  column: string,
  pattern: string,
  ignoreCase: boolean,
  accountId?: number,
): SqlStatement {
  const pg = dialect === "postgresql";
  const param = (n: number) => (pg ? `$${n}` : "?");
  const test = pg
    ? `${quote(column)} ${ignoreCase ? "ILIKE" : "LIKE"} ${param(1)} ESCAPE ''`
    : ignoreCase
      ? `${quote(column)} LIKE ${param(1)}`
      : `${quote(column)} GLOB ${param(1)}`;
  const params: unknown[] = [pattern];
  let sql = `SELECT "id" FROM ${quote(table)} WHERE ${test}`;
  if (accountId !== undefined) {
    sql += ` AND "accountId" = ${param(2)}`;
    params.push(accountId);
  }
  return { sql, params };
}

const INT_MIN = -2147483648;
const INT_MAX = 2147483647;
const isoDateTime = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/;

/** A DateTime as the Prisma adapters store it: SQLite text with an explicit offset; PostgreSQL `timestamp(3)` in UTC. */
export const storedDateTime = (dialect: Dialect, date: Date): string =>
  dialect === "sqlite" ? date.toISOString().replace("Z", "+00:00") : date.toISOString().slice(0, 23);

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
        return Number.isInteger(value) && (value as number) >= INT_MIN && (value as number) <= INT_MAX
          ? value
          : unsupported(`${field.name}: not an Int`);
      case "String":
        return typeof value === "string" ? value : unsupported(`${field.name}: not a String`);
      case "Boolean":
        if (typeof value !== "boolean") unsupported(`${field.name}: not a Boolean`);
        return this.dialect === "sqlite" ? (value ? 1 : 0) : value;
      case "DateTime": {
        const date =
          value instanceof Date ? value : typeof value === "string" && isoDateTime.test(value) ? new Date(value) : null;
        if (!date || Number.isNaN(date.getTime())) return unsupported(`${field.name}: not a DateTime`);
        return storedDateTime(this.dialect, date);
      }
      default:
        return unsupported(`${field.name}: ${field.type} filters`);
    }
  }

  /** A list of a column's values as one parameter value: an array on PostgreSQL, JSON text on SQLite. */
  list(field: Scalar, values: unknown[]): unknown {
    const encoded = values.map((v) => this.value(field, v));
    return this.dialect === "postgresql" ? encoded : JSON.stringify(encoded);
  }

  /**
   * `column IN (list)` with the whole list as one parameter, so the SQL text (and its prepared statement) is reused;
   * `lower` compares both sides in lower case.
   */
  inList(column: string, field: Scalar, values: unknown[], negate: boolean, lower = false): string {
    if (values.length === 0) return negate ? "1=1" : "1=0";
    return this.inParam(column, this.param(this.list(field, values)), negate, lower);
  }

  /** `column IN (…)` over the values of the list parameter `param`. */
  inParam(column: string, param: string, negate: boolean, lower = false): string {
    if (this.dialect === "postgresql") {
      if (lower)
        return `LOWER(${column}) ${negate ? "NOT IN" : "IN"} (SELECT LOWER(v) FROM unnest(${param}::text[]) AS v)`;
      return `${negate ? "NOT " : ""}${column} = ANY(${param})`;
    }
    const values = `SELECT ${lower ? "LOWER(value)" : "value"} FROM json_each(${param})`;
    return `${lower ? `LOWER(${column})` : column} ${negate ? "NOT IN" : "IN"} (${values})`;
  }
}

/** How one column's value is read from a driver into the value Prisma would give. */
export type Decoder = (value: unknown) => unknown;
const asStored: Decoder = (value) => value ?? null;
const sqliteDecoders: Record<string, Decoder> = {
  DateTime: (value) => (value == null ? null : parseSqliteDate(value)),
  Boolean: (value) => (value == null ? null : value === 1 || value === 1n || value === true),
  Json: (value) => (value == null ? null : typeof value === "string" ? JSON.parse(value) : value),
};
const toNumber: Decoder = (value) => (value == null ? null : typeof value === "bigint" ? Number(value) : value);

/** How a column of `field`'s type is read from `dialect`'s driver into the value Prisma would give. */
export const decoderOf = (dialect: Dialect, field: Scalar): Decoder =>
  field.type === "Int" ? toNumber : ((dialect === "sqlite" ? sqliteDecoders[field.type] : undefined) ?? asStored);

export function decode(dialect: Dialect, field: Scalar, value: unknown): unknown {
  return decoderOf(dialect, field)(value);
}
