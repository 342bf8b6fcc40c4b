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
  const source = [...pattern]
    .map((c) => (c === "%" ? ".*" : c === "_" ? "." : c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("");
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
  if (operator === "like" || operator === "not like")
    return sqlLike(String(raw), String(value)) === (operator === "like");
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

/**
 * The typed `where`/`orderBy` of the public graph that say what an Orion search says, for the cases that have one.
 * A REST column name (`created_at`, `rank.name`) becomes its camelCase path (`createdAt`, `rank: { is: { name } }`);
 * values are the wire values, except enum columns, whose wire value becomes the enum's name. `undefined` marks a case
 * with no typed equivalent (pivot columns, LIKE patterns with inner wildcards, JSON `all in`/`any in`).
 */
export interface TypedColumn {
  /** The path of keys from the listed row: `["createdAt"]`, `["rank", "name"]` (a to-one relation's column). */
  path: string[];
  /** The GraphQL enum of the column's values, when it has one: its internal values are the wire values. */
  enumOf?: { getValues(): ReadonlyArray<{ name: string; value: unknown }> };
  /** A date-time column: Orion's `=`/`!=` with a bare day there mean the whole day. */
  datetime?: boolean;
}
export type TypedWhere = Record<string, unknown>;

export interface OrionFilter {
  field?: string;
  operator?: string;
  value?: unknown;
  type?: string;
  nested?: OrionFilter[];
}

const DAY = 86_400_000;

/** The condition `{ op: value }` on `column`, wrapped from the listed row (`{ rank: { is: { name: ... } } }`). */
const at = (column: TypedColumn, condition: TypedWhere): TypedWhere =>
  column.path.length === 1
    ? { [column.path[0]]: condition }
    : { [column.path[0]]: { is: { [column.path[1]]: condition } } };

/** One Orion condition as a typed `where`, or undefined. */
export function typedCondition(
  column: TypedColumn | undefined,
  operator: string,
  value: unknown,
): TypedWhere | undefined {
  if (!column) return undefined;
  const wire = (v: unknown) => {
    if (!column.enumOf || v === null) return v;
    return column.enumOf.getValues().find((e) => e.value === v || String(e.value) === String(v))?.name;
  };
  switch (operator) {
    case "=":
    case "!=": {
      if (value === null)
        return operator === "=" ? at(column, { equals: null }) : { NOT: at(column, { equals: null }) };
      if (typeof value === "string" && /^\d{4}-\d{2}-\d{2}$/.test(value) && column.datetime) {
        const day = new Date(`${value}T00:00:00Z`);
        const within = at(column, { gte: day.toISOString(), lt: new Date(day.getTime() + DAY).toISOString() });
        return operator === "=" ? within : { NOT: within };
      }
      return at(column, operator === "=" ? { equals: wire(value) } : { not: { equals: wire(value) } });
    }
    case "<":
    case "<=":
    case ">":
    case ">=":
      return at(column, { [({ "<": "lt", "<=": "lte", ">": "gt", ">=": "gte" } as const)[operator]]: wire(value) });
    case "in":
    case "not in": {
      const list = value as unknown[];
      const present = list.filter((v) => v !== null).map(wire);
      const member = list.includes(null)
        ? { OR: [at(column, { in: present }), at(column, { equals: null })] }
        : at(column, { in: present });
      if (operator === "in") return member;
      // `notIn` on the row's own column; through a relation, REST's NOT of the membership (a row without one is kept).
      return list.includes(null) || column.path.length > 1 ? { NOT: member } : at(column, { notIn: present });
    }
    case "like":
    case "not like":
    case "ilike":
    case "not ilike": {
      const pattern = String(value);
      const starts = pattern.startsWith("%");
      const ends = pattern.endsWith("%") && pattern.length > 1;
      const core = pattern.slice(starts ? 1 : 0, ends ? -1 : undefined);
      if (/[%_]/.test(core)) return undefined;
      const op = starts && ends ? "contains" : starts ? "endsWith" : ends ? "startsWith" : "equals";
      // Orion's LIKE ignores case on both databases (as SQLite and PERSCOM's MySQL do).
      const like = at(column, { [op]: core, mode: "INSENSITIVE" });
      return operator.startsWith("not") ? { NOT: like } : like;
    }
  }
  return undefined;
}

/** Orion `filters` (and binds tighter than or, `nested` groups) as one typed `where`, or undefined when any part has none. */
export function typedFilters(
  filters: OrionFilter[],
  columnOf: (name: string) => TypedColumn | undefined,
): TypedWhere | undefined {
  const groups: TypedWhere[][] = [[]];
  for (const [index, f] of filters.entries()) {
    const where = f.nested?.length
      ? typedFilters(f.nested, columnOf)
      : typedCondition(f.field ? columnOf(f.field) : undefined, f.operator ?? "=", f.value ?? null);
    if (!where) return undefined;
    if ((f.type ?? "and") === "or" && index > 0) groups.push([]);
    groups.at(-1)!.push(where);
  }
  const ands = groups.filter((g) => g.length).map((g) => (g.length === 1 ? g[0] : { AND: g }));
  return ands.length === 1 ? ands[0] : { OR: ands };
}

/** Orion `sort` entries as a typed `orderBy` list, or undefined. */
export function typedSort(
  sort: Array<{ field: string; direction?: string }>,
  columnOf: (name: string) => TypedColumn | undefined,
): TypedWhere[] | undefined {
  const out: TypedWhere[] = [];
  for (const s of sort) {
    const column = columnOf(s.field);
    if (!column) return undefined;
    const direction = s.direction ?? "asc";
    out.push(
      column.path.length === 1
        ? { [column.path[0]]: direction }
        : { [column.path[0]]: { [column.path[1]]: direction } },
    );
  }
  return out;
}
