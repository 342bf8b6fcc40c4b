import { models, type Model, type Relation, type Scalar } from "./datamodel.ts";
import { quote, type Statement } from "./dialect.ts";
import { isPlainObject, list, unsupported } from "./translation.ts";

/**
 * Prisma's `where` and `orderBy` of a model as SQL conditions and ORDER BY terms, with the reader's meaning of each
 * filter (Prisma's); what Prisma words otherwise, or would refuse, is Unsupported. The reader (src/db/reader.ts) puts
 * them in its statements.
 */

/** A LIKE pattern that ends in an unescaped `\`: an error where `\` escapes (PostgreSQL's LIKE, ours with ESCAPE). */
const endsInEscape = /(?:^|[^\\])(?:\\\\)*\\$/;

/**
 * One column's filter, as Prisma words it (`equals`, `not`, `in`, `notIn`, `lt`..`gte`, `contains`, `startsWith`,
 * `endsWith`, `mode`). As Prisma does, the value of a pattern is passed into LIKE as it is: `%` and `_` in it are
 * wildcards (prisma/prisma#19506); on PostgreSQL `\` escapes the next character, on SQLite (no ESCAPE clause) it is
 * itself. SQLite's LIKE ignores ASCII case already; PostgreSQL's does not.
 *
 * `mode: "insensitive"` is Prisma's on PostgreSQL (ILIKE for `equals`, `not` and the patterns, so their wildcards
 * apply; `LOWER()` on both sides of `in`, `notIn`, `lt`..`gte`). Prisma's SQLite connector refuses `mode`, so on SQLite
 * the reader alone answers it, with the same meaning: `LOWER(column) LIKE LOWER(?) ESCAPE '\'` (wildcards, and `\`
 * as PostgreSQL's escape) and `LOWER()` comparisons, where SQLite's LOWER folds ASCII letters only.
 */
function scalarFilter(sql: Statement, column: string, field: Scalar, filter: unknown): string {
  if (filter === null) return `${column} IS NULL`;
  if (!isPlainObject(filter)) return `${column} = ${sql.param(sql.value(field, filter))}`;
  const mode = filter.mode;
  if (mode !== undefined && (field.type !== "String" || (mode !== "default" && mode !== "insensitive")))
    unsupported("mode");
  const insensitive = mode === "insensitive";
  const like = (value: unknown, pattern: (s: string) => string) => {
    if (typeof value !== "string" || field.type !== "String") return unsupported("pattern on a non-string");
    // Prisma's own error: PostgreSQL refuses such a pattern.
    if ((insensitive || sql.dialect === "postgresql") && endsInEscape.test(pattern(value)))
      unsupported("pattern ending in an escape");
    const p = sql.param(pattern(value));
    if (!insensitive) return `${column} LIKE ${p}`;
    return sql.dialect === "postgresql" ? `${column} ILIKE ${p}` : `LOWER(${column}) LIKE LOWER(${p}) ESCAPE '\\'`;
  };
  const compare = (op: string, value: unknown) => {
    const p = sql.param(sql.value(field, value));
    return insensitive ? `LOWER(${column}) ${op} LOWER(${p})` : `${column} ${op} ${p}`;
  };
  const parts: string[] = [];
  for (const [op, arg] of Object.entries(filter)) {
    if (arg === undefined || op === "mode") continue;
    switch (op) {
      case "equals":
        parts.push(arg === null ? `${column} IS NULL` : insensitive ? like(arg, (s) => s) : compare("=", arg));
        break;
      case "not":
        if (arg === null) parts.push(`${column} IS NOT NULL`);
        else if (isPlainObject(arg))
          parts.push(`NOT (${scalarFilter(sql, column, field, insensitive ? { mode, ...arg } : arg)})`);
        else parts.push(insensitive ? `NOT (${like(arg, (s) => s)})` : compare("<>", arg));
        break;
      case "in":
      case "notIn":
        if (!Array.isArray(arg)) unsupported(op);
        parts.push(sql.inList(column, field, arg as unknown[], op === "notIn", insensitive));
        break;
      case "lt":
      case "lte":
      case "gt":
      case "gte":
        if (arg === null) unsupported(`${op} null`);
        parts.push(compare(({ lt: "<", lte: "<=", gt: ">", gte: ">=" } as const)[op], arg));
        break;
      case "contains":
        parts.push(like(arg, (s) => `%${s}%`));
        break;
      case "startsWith":
        parts.push(like(arg, (s) => `${s}%`));
        break;
      case "endsWith":
        parts.push(like(arg, (s) => `%${s}`));
        break;
      default:
        unsupported(`filter ${op}`);
    }
  }
  return parts.length ? parts.join(" AND ") : "1=1";
}

/**
 * A JSON column's filter: only Prisma's `array_contains` of one string or integer, alone or as a list of one ("the
 * column is a JSON list with this element", a person's messages). Prisma's PostgreSQL SQL is `column @> [value] AND
 * jsonb_typeof(column) = 'array'` (a jsonb column), and ours the same; on SQLite (JSON text), where Prisma's connector
 * has no `array_contains` and the reader alone answers it, the list's elements through `json_each`, of the value's JSON
 * type (a JSON `"7"` or `true` is not the number 7 or 1). Under a NOT Prisma words the filter otherwise (negated, it
 * means "a list without the value"), so there, and for every other JSON filter, the reader leaves the read to Prisma.
 */
function jsonFilter(sql: Statement, column: string, filter: unknown, exact: boolean): string {
  if (exact) return unsupported("Json filter under NOT");
  if (!isPlainObject(filter)) return unsupported("Json equality");
  const given = Object.entries(filter).filter(([, v]) => v !== undefined);
  if (given.length !== 1 || given[0][0] !== "array_contains") return unsupported("Json filter");
  const contained = given[0][1];
  const element = Array.isArray(contained) ? (contained.length === 1 ? contained[0] : undefined) : contained;
  if (typeof element !== "string" && !Number.isSafeInteger(element)) return unsupported("array_contains value");
  if (sql.dialect === "postgresql")
    return `${column} @> ${sql.param(JSON.stringify([element]))}::jsonb AND jsonb_typeof(${column}) = 'array'`;
  const type = typeof element === "string" ? "type = 'text'" : "type IN ('integer', 'real')";
  const elements = `SELECT 1 FROM json_each(${column}) WHERE ${type} AND value = ${sql.param(element)}`;
  return `json_type(${column}) = 'array' AND EXISTS (${elements})`;
}

/**
 * A relation's filter. `exact`: an unknown (NULL) condition must stay unknown rather than false, as under a NOT.
 * Prisma joins a to-one relation's row: `is` is that row's condition (false without a row), `isNot` its negation
 * (true without a row), NULL included. EXISTS, which databases plan better, answers the same wherever NULL counts as
 * false; under a NOT the row's condition is read as a value instead.
 */
function relationFilter(sql: Statement, alias: string, rel: Relation, filter: unknown, exact: boolean): string {
  const target = models.get(rel.target)!;
  /** `<select> FROM target WHERE <it relates to this row> AND <where, as `test` puts it>`. */
  const related = (
    select: (condition: string) => string,
    where: unknown,
    exact: boolean,
    test: (condition: string) => string,
  ) => {
    const inner = sql.alias();
    const condition = whereSql(sql, target, inner, where, exact);
    const join = `${quote(inner)}.${quote(rel.to)} = ${quote(alias)}.${quote(rel.from)}`;
    return `SELECT ${select(condition)} FROM ${quote(target.name)} AS ${quote(inner)} WHERE ${join}${test(condition)}`;
  };
  const exists = (where: unknown, test = (c: string) => ` AND (${c})`, exact = false) =>
    `EXISTS (${related(() => "1", where, exact, test)})`;
  if (!rel.list) {
    // At most one related row: this side holds its key, or (a relation from the id) the other side's key is unique.
    const present = rel.from === "id" ? exists({}, () => "") : `${quote(alias)}.${quote(rel.from)} IS NOT NULL`;
    if (filter === null) return `NOT (${present})`;
    if (!isPlainObject(filter)) return unsupported("to-one filter");
    const given = Object.entries(filter).filter(([, v]) => v !== undefined);
    // `{ is, isNot }`, or the related row's own filter (`{ name: "x" }`, meaning `is`); `{}` is no condition at all.
    const ops = given.every(([k]) => k === "is" || k === "isNot") ? given : [["is", filter] as const];
    const parts: string[] = [];
    for (const [op, where] of ops) {
      if (where === null) parts.push(op === "is" ? `NOT (${present})` : present);
      else if (!isPlainObject(where)) unsupported(`to-one ${op}`);
      else if (!exact)
        parts.push(op === "is" ? exists(where) : `NOT ${exists(where, (c) => ` AND (${c}) IS NOT FALSE`, true)}`);
      else {
        const truth = `(${related(
          (c) => `(${c})`,
          where,
          true,
          () => "",
        )})`;
        parts.push(op === "is" ? `(${present} AND ${truth})` : `(NOT (${present}) OR NOT ${truth})`);
      }
    }
    return parts.length ? parts.join(" AND ") : "1=1";
  }
  if (!isPlainObject(filter)) return unsupported("to-many filter");
  const parts: string[] = [];
  for (const [op, where] of Object.entries(filter)) {
    if (where === undefined) continue;
    if (op === "some") parts.push(exists(where));
    else if (op === "none") parts.push(`NOT ${exists(where)}`);
    else if (op === "every") parts.push(`NOT ${exists(where, (c) => ` AND NOT (${c})`, true)}`);
    else unsupported(`to-many ${op}`);
  }
  return parts.length ? parts.join(" AND ") : "1=1";
}

/** A model's `where` as SQL over `alias`; `exact`: as under a NOT, an unknown condition must stay unknown (NULL). */
export function whereSql(sql: Statement, model: Model, alias: string, where: unknown, exact = false): string {
  if (where === undefined) return "1=1";
  if (!isPlainObject(where)) return unsupported("where");
  const parts: string[] = [];
  for (const [key, value] of Object.entries(where)) {
    if (value === undefined) continue;
    if (key === "AND" || key === "OR" || key === "NOT") {
      const items = list(value).map((w) => `(${whereSql(sql, model, alias, w, exact || key === "NOT")})`);
      // Prisma drops empty conditions before it combines them (`NOT: {}` matches every row), and an empty OR matches
      // nothing at the top level but everything under AND: such conditions get Prisma's answer, not logic's.
      if (key !== "AND" && (!items.length || items.some((i) => !i.includes(`${quote(alias)}.`))))
        unsupported(`constant condition under ${key}`);
      if (key === "AND") parts.push(items.length ? items.join(" AND ") : "1=1");
      else if (key === "OR") parts.push(items.join(" OR "));
      else parts.push(items.map((i) => `NOT ${i}`).join(" AND "));
      continue;
    }
    const field = model.scalarByName.get(key);
    if (field) {
      if (field.type === "Json") parts.push(jsonFilter(sql, `${quote(alias)}.${quote(key)}`, value, exact));
      else parts.push(scalarFilter(sql, `${quote(alias)}.${quote(key)}`, field, value));
      continue;
    }
    const rel = model.relations.get(key);
    if (!rel) return unsupported(`where ${model.name}.${key}`);
    parts.push(relationFilter(sql, alias, rel, value, exact));
  }
  return parts.length ? parts.map((p) => `(${p})`).join(" AND ") : "1=1";
}

/** ORDER BY terms; a sort on a to-one relation's column adds a LEFT JOIN to `joins`. */
export function orderSql(sql: Statement, model: Model, alias: string, orderBy: unknown, joins: string[]): string[] {
  if (orderBy === undefined) return [];
  const terms: string[] = [];
  for (const item of list(orderBy)) {
    if (!isPlainObject(item)) unsupported("orderBy");
    for (const [key, value] of Object.entries(item)) {
      if (value === undefined) continue;
      if (model.scalarByName.has(key)) {
        const column = `${quote(alias)}.${quote(key)}`;
        if (value === "asc" || value === "desc") terms.push(`${column} ${value.toUpperCase()}`);
        else if (
          isPlainObject(value) &&
          (value.sort === "asc" || value.sort === "desc") &&
          Object.keys(value).every((k) => k === "sort" || k === "nulls")
        ) {
          if (value.nulls !== undefined && value.nulls !== "first" && value.nulls !== "last") unsupported("nulls");
          terms.push(
            `${column} ${value.sort.toUpperCase()}${value.nulls ? ` NULLS ${value.nulls.toUpperCase()}` : ""}`,
          );
        } else unsupported("order direction");
        continue;
      }
      const rel = model.relations.get(key);
      if (!rel || rel.list || !isPlainObject(value)) return unsupported(`orderBy ${key}`);
      const joined = sql.alias();
      joins.push(
        `LEFT JOIN ${quote(rel.target)} AS ${quote(joined)} ON ${quote(joined)}.${quote(rel.to)} = ${quote(alias)}.${quote(rel.from)}`,
      );
      terms.push(...orderSql(sql, models.get(rel.target)!, joined, value, joins));
    }
  }
  return terms;
}
