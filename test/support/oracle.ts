import type { FieldType } from "../../src/resources/define.ts";

/**
 * What a search filter should select, computed in the test from rows read back through the API:
 * SQL semantics as Orion (Laravel's query builder) produces them. A comparison with NULL is unknown,
 * so `!=`, `<`, `not like` and `not in` never select a row whose column is NULL; `= null` and
 * `!= null` are IS NULL / IS NOT NULL; a null inside an `in` list adds IS NULL.
 */
export interface Filter {
  field: string;
  operator: string;
  value: unknown;
}

/** SQL LIKE as SQLite and MySQL's default collation apply it: `%` any run, `_` one character, ASCII case ignored. */
export function sqlLike(text: string, pattern: string): boolean {
  const source = [...pattern].map((c) => (c === "%" ? ".*" : c === "_" ? "." : c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))).join("");
  return new RegExp(`^${source}$`, "is").test(text);
}

const dayOnly = (v: unknown) => typeof v === "string" && /^\d{4}-\d{2}-\d{2}$/.test(v);

/** A column value as a comparable JS value: numbers for ints and dates, strings, booleans. */
export function comparable(type: FieldType, value: unknown): number | string | boolean | null {
  if (value === null || value === undefined) return null;
  if (type === "datetime") return new Date(String(value)).getTime();
  if (type === "int") return Number(value);
  if (type === "boolean") return value === true || value === 1 || value === "1" || value === "true";
  return String(value);
}

const cmp = (a: number | string | boolean, b: number | string | boolean) => (a < b ? -1 : a > b ? 1 : 0);

/** Whether a row whose column holds `raw` is selected by `operator value`. */
export function selects(type: FieldType, raw: unknown, operator: string, value: unknown): boolean {
  const row = comparable(type, raw);
  if (operator === "in" || operator === "not in") {
    const list = value as unknown[];
    const present = list.filter((v) => v !== null).map((v) => comparable(type, v));
    if (row === null) return operator === "in" && list.includes(null);
    const member = present.some((v) => v !== null && cmp(row, v) === 0);
    return operator === "in" ? member : !member;
  }
  if (value === null) return operator === "=" ? row === null : operator === "!=" ? row !== null : false;
  if (row === null) return false;
  if (operator === "like" || operator === "not like") return sqlLike(String(raw), String(value)) === (operator === "like");
  if (type === "datetime" && dayOnly(value) && (operator === "=" || operator === "!=")) {
    const start = new Date(`${value}T00:00:00Z`).getTime();
    const within = (row as number) >= start && (row as number) < start + 86_400_000;
    return operator === "=" ? within : !within;
  }
  const c = cmp(row, comparable(type, value)!);
  switch (operator) {
    case "=":
      return c === 0;
    case "!=":
      return c !== 0;
    case "<":
      return c < 0;
    case "<=":
      return c <= 0;
    case ">":
      return c > 0;
    case ">=":
      return c >= 0;
  }
  throw new Error(`oracle: no operator ${operator}`);
}

/**
 * True when `values` are in `direction` order, NULL sorting first ascending and last descending (SQLite,
 * MySQL) — or, with `nullsHigh`, the other way round: PostgreSQL's order for a column of a related row that
 * is missing, which Prisma cannot place (it only places NULLs of the listed table's own optional columns).
 */
export function ordered(type: FieldType, values: unknown[], direction: "asc" | "desc", nullsHigh = false): boolean {
  const keys = values.map((v) => comparable(type, v));
  const low = nullsHigh ? 1 : -1;
  for (let i = 1; i < keys.length; i++) {
    const [a, b] = [keys[i - 1]!, keys[i]!];
    const c = a === null && b === null ? 0 : a === null ? low : b === null ? -low : cmp(a, b);
    if (direction === "asc" ? c > 0 : c < 0) return false;
  }
  return true;
}
