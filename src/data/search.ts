import type { Context } from "../request/context.ts";
import { ownEntry, type FieldDef, type PivotDef, type ResourceDef } from "../resources/define.ts";
import { resourceNamed } from "../resources/index.ts";
import { FieldErrorBag } from "../core/errors.ts";
import { camel, snake } from "../core/names.ts";
import { parseDate } from "../core/dates.ts";
import { getDatamodel } from "../generated/pothos-types.ts";
import { idsMatchingSql } from "../db/dialect.ts";
import { hidesPrivate, privateFieldRefusal } from "./access.ts";

/** One condition of `filters`, or a group of them under `nested` (one level deep). */
export interface FilterArg {
  field?: string | null;
  operator?: string | null;
  value?: unknown;
  type?: string | null;
  nested?: FilterArg[] | null;
}
export interface SortArg {
  field: string;
  direction?: string | null;
}
export interface ScopeArg {
  name: string;
  parameters?: unknown[] | null;
}
export interface SearchArg {
  value?: string | null;
  caseSensitive?: boolean | null;
}
export interface SearchArgs {
  filters?: FilterArg[] | null;
  sort?: SortArg[] | null;
  scopes?: ScopeArg[] | null;
  search?: SearchArg | null;
}

/** Search sizes: bounded so no statement outgrows what the databases take (SQLite: 999 parameters, 50 000-byte patterns). */
export const searchLimits = { conditions: 100, listValues: 500, textLength: 1000 };

export const operators = [
  "<",
  "<=",
  ">",
  ">=",
  "=",
  "!=",
  "like",
  "not like",
  "ilike",
  "not ilike",
  "in",
  "not in",
  "all in",
  "any in",
] as const;
type Where = Record<string, unknown>;
type Order = Record<string, unknown>;

/** A column a filter or sort may name, and how to reach it from the rows being listed. */
interface Column {
  def: FieldDef;
  /** Table (Prisma model) and column name, for the SQL LIKE/GLOB fallback. */
  model: string;
  name: string;
  /** The table has an account column: raw lookups must stay inside the caller's account. */
  accountScoped: boolean;
  /** Wraps a condition on the column into a condition on the listed row. */
  wrap(condition: unknown): Where;
  /** Wraps a condition on the row that holds the column (`{id: {in: [...]}}`) into one on the listed row. */
  wrapRow(condition: Where): Where;
}

const builtIn: Record<string, FieldDef> = {
  id: { type: "int" },
  createdAt: { type: "datetime", description: "When the row was created." },
  updatedAt: { type: "datetime", description: "When the row last changed." },
};

/** Columns by name in a Map: a name a client sends (`constructor`, `__proto__`) finds only what is there. */
export const columnsOf = (def: ResourceDef): Map<string, FieldDef> =>
  new Map([...Object.entries(builtIn), ...Object.entries(def.fields).filter(([, f]) => !f.hidden)]);
export const pivotColumnsOf = (pivot: PivotDef): Map<string, FieldDef> =>
  new Map([...Object.entries(builtIn), ...Object.entries(pivot.fields)]);

/**
 * What a list's rows expose to `filters` and `sort`: the resource's columns, `rel.<column>` of
 * each to-one relation and, on many-to-many lists, `pivot.<column>` of the link row. When the
 * listed rows are link rows (`pivot` given), the related resource's columns sit under `pivot.related`.
 */
function resolveColumn(def: ResourceDef, pivot: PivotDef | undefined, name: string): Column | null {
  const path = name.split(".").map(camel);
  const onRelated = (where: unknown): Where => (pivot ? { [pivot.related]: where } : (where as Where));
  const column = (
    owner: ResourceDef | PivotDef,
    f: FieldDef | undefined,
    col: string,
    toRow: (w: Where) => Where,
  ): Column | null => {
    if (!f) return null;
    const model = owner.model;
    const accountScoped = !("link" in owner && owner.link) && !("parentKey" in owner);
    return { def: f, model, name: col, accountScoped, wrap: (c) => toRow({ [col]: c }), wrapRow: toRow };
  };
  if (path.length === 1) return column(def, columnsOf(def).get(path[0]), path[0], onRelated);
  if (path.length !== 2) return null;
  const [head, col] = path as [string, string];
  if (head === "pivot" && pivot) return column(pivot, pivotColumnsOf(pivot).get(col), col, (w) => w);
  const relation = Object.entries(def.relations).find(([key, r]) => camel(key) === head || r.field === head)?.[1];
  if (!relation || relation.kind !== "belongsTo") return null;
  const target = resourceNamed(relation.target);
  return column(target, columnsOf(target).get(col), col, (w) => onRelated({ [relation.field]: { is: w } }));
}

/** Filter and sort names a list accepts, for error messages and documentation. */
export function filterableFields(def: ResourceDef, pivot?: PivotDef): string[] {
  const own = [...columnsOf(def).keys()].map(snake);
  const related = Object.entries(def.relations).flatMap(([key, r]) => (r.kind === "belongsTo" ? [`${key}.*`] : []));
  return [...own, ...related, ...(pivot ? ["pivot.*"] : [])];
}

/** Prisma's case-insensitive mode exists on PostgreSQL only; SQLite's LIKE already ignores ASCII case. */
const insensitive = (ctx: Context) => (ctx.provider === "postgresql" ? { mode: "insensitive" } : {});

/**
 * SQL LIKE on a column. Prisma's text filters cover `%x`, `x%` and `%x%` (case-insensitive on
 * SQLite, as its LIKE is); a pattern with inner wildcards or `_`, or a case-sensitive match on SQLite,
 * is run as SQL (LIKE, ILIKE or GLOB) for the matching ids.
 */
async function likeCondition(ctx: Context, column: Column, pattern: string, ignoreCase: boolean): Promise<Where> {
  const starts = pattern.startsWith("%");
  const ends = pattern.endsWith("%") && pattern.length > 1;
  const core = pattern.slice(starts ? 1 : 0, ends ? -1 : undefined);
  const pg = ctx.provider === "postgresql";
  // Prisma's `equals` is case-sensitive on SQLite, where LIKE without wildcards is not.
  // Prisma does not escape `\` in PostgreSQL's LIKE patterns (where it is the escape character): such patterns go
  // through SQL, which says ESCAPE ''.
  const simple = !/[%_]/.test(core) && (ignoreCase || pg) && (starts || ends || pg) && !(pg && core.includes("\\"));
  if (!simple) return column.wrapRow({ id: { in: await idsMatching(ctx, column, pattern, ignoreCase) } });
  const mode = ignoreCase ? insensitive(ctx) : {};
  if (starts && ends) return column.wrap({ contains: core, ...mode });
  if (starts) return column.wrap({ endsWith: core, ...mode });
  if (ends) return column.wrap({ startsWith: core, ...mode });
  return column.wrap({ equals: core, ...mode });
}

/** `search`: the term anywhere in the column, taken literally; case-insensitive unless asked. */
async function containsCondition(ctx: Context, column: Column, term: string, caseSensitive: boolean): Promise<Where> {
  if (ctx.provider === "postgresql") {
    // Prisma escapes `%` and `_` in the LIKE pattern it builds, but not the escape character itself.
    const literal = term.replace(/\\/g, "\\\\");
    return column.wrap({ contains: literal, ...(caseSensitive ? {} : insensitive(ctx)) });
  }
  if (!caseSensitive) return column.wrap({ contains: term, ...insensitive(ctx) });
  return column.wrapRow({ id: { in: await idsMatching(ctx, column, `*${globLiteral(term)}*`, false, true) } });
}

/** Text GLOB takes literally: its own specials bracketed. */
const globLiteral = (text: string) => text.replace(/[*?[\]]/g, (c) => `[${c}]`);
/** A LIKE pattern (no escape character, as the databases default) as a GLOB pattern: `%`→`*`, `_`→`?`. */
const globOf = (like: string) =>
  like
    .split(/([%_])/)
    .map((p) => (p === "%" ? "*" : p === "_" ? "?" : globLiteral(p)))
    .join("");

/**
 * The ids of the rows whose column matches a LIKE pattern (`isGlob`: a GLOB pattern, case-sensitive on SQLite), read
 * through the store on committed data. A case-sensitive match on SQLite is GLOB's, whose pattern the LIKE pattern becomes.
 */
async function idsMatching(
  ctx: Context,
  column: Column,
  pattern: string,
  ignoreCase: boolean,
  isGlob = false,
): Promise<number[]> {
  const glob = ctx.provider === "sqlite" && !ignoreCase && !isGlob;
  const accountId = column.accountScoped ? ctx.auth!.accountId : undefined;
  const { sql, params } = idsMatchingSql(
    ctx.provider,
    column.model,
    column.name,
    glob ? globOf(pattern) : pattern,
    ignoreCase,
    accountId,
  );
  const rows = await ctx.store.readKeys(sql, params);
  return rows.map((row) => Number(row[0]));
}

/** A value as the column's type, or undefined when it cannot be one (the caller reports it). */
function typed(f: FieldDef, value: unknown): unknown {
  if (value === null) return null;
  switch (f.type) {
    case "int": {
      const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
      return typeof n === "number" && Number.isInteger(n) && n >= -2147483648 && n <= 2147483647 ? n : undefined;
    }
    case "boolean":
      if (value === true || value === 1 || value === "1" || value === "true") return true;
      if (value === false || value === 0 || value === "0" || value === "false") return false;
      return undefined;
    case "datetime":
      try {
        return parseDate(value);
      } catch {
        return undefined;
      }
    case "json":
      return value;
    default:
      return typeof value === "string" || typeof value === "number" ? String(value) : undefined;
  }
}

const dateOnly = (value: unknown) =>
  typeof value === "string" && /^\d{4}-\d{2}-\d{2}(?:[ T]00:00(?::00(?:\.0+)?)?Z?)?$/.test(value.trim());

async function condition(
  ctx: Context,
  column: Column,
  operator: string,
  raw: unknown,
  key: string,
  bag: FieldErrorBag,
): Promise<Where | null> {
  const f = column.def;
  const ofType = (value: unknown, at = key) => {
    const v = typed(f, value);
    if (v === undefined)
      bag.add(
        `${at}.value`,
        `The value is not a valid ${f.type === "datetime" ? "date" : f.type === "int" ? "integer" : f.type}.`,
      );
    return v;
  };
  const list = (op: string) => {
    if (!Array.isArray(raw)) {
      bag.add(`${key}.value`, `The value of an "${op}" filter must be an array.`);
      return null;
    }
    return raw;
  };
  switch (operator) {
    case "like":
    case "not like":
    case "ilike":
    case "not ilike": {
      if (f.type !== "string" && f.type !== "text") {
        bag.add(`${key}.operator`, `The ${operator} operator applies to text fields only.`);
        return null;
      }
      if (typeof raw !== "string") {
        bag.add(`${key}.value`, "The value must be a string.");
        return null;
      }
      // `like` ignores case on both databases, as SQLite's LIKE and PERSCOM's MySQL do (PostgreSQL's LIKE would not).
      const like = await likeCondition(ctx, column, raw, true);
      return operator.startsWith("not") ? { NOT: like } : like;
    }
    case "in":
    case "not in": {
      const values = list(operator);
      if (!values) return null;
      const present = values.filter((v) => v !== null).map((v) => ofType(v));
      const anyNull = values.includes(null);
      const match: Where = anyNull
        ? { OR: [column.wrap({ in: present }), column.wrap(null)] }
        : column.wrap({ in: present });
      return operator === "in" ? match : { NOT: match };
    }
    case "all in":
    case "any in": {
      const values = list(operator);
      if (!values) return null;
      if (f.type !== "json" || ctx.provider !== "postgresql") {
        bag.add(
          `${key}.operator`,
          `The ${operator} operator applies to JSON list fields${ctx.provider === "postgresql" ? "" : " on PostgreSQL"} only.`,
        );
        return null;
      }
      return operator === "all in"
        ? column.wrap({ array_contains: values })
        : { OR: values.map((v) => column.wrap({ array_contains: [v] })) };
    }
    default: {
      if (f.type === "datetime" && (operator === "=" || operator === "!=") && dateOnly(raw)) {
        const day = parseDate(String(raw).trim().slice(0, 10) + "T00:00:00Z");
        const next = new Date(day.getTime() + 86_400_000);
        const within = column.wrap({ gte: day, lt: next });
        return operator === "=" ? within : { NOT: within };
      }
      const value = ofType(raw);
      if (value === undefined) return null;
      if (value === null) {
        if (operator !== "=" && operator !== "!=") {
          bag.add(`${key}.value`, `The ${operator} operator needs a value.`);
          return null;
        }
        return operator === "=" ? column.wrap(null) : { NOT: column.wrap(null) };
      }
      const prisma = ({ "<": "lt", "<=": "lte", ">": "gt", ">=": "gte", "=": "equals", "!=": "not" } as const)[
        operator as "<"
      ];
      return column.wrap({ [prisma]: value });
    }
  }
}

/** Filters combine left to right as SQL does: `and` binds tighter than `or`. */
function combine(items: Array<{ type: string; where: Where }>): Where {
  const groups: Where[][] = [[]];
  for (const [index, item] of items.entries()) {
    if (item.type === "or" && index > 0) groups.push([]);
    groups.at(-1)!.push(item.where);
  }
  const ands = groups.filter((g) => g.length).map((g) => (g.length === 1 ? g[0] : { AND: g }));
  return ands.length === 1 ? ands[0] : { OR: ands };
}

async function filtersWhere(
  ctx: Context,
  def: ResourceDef,
  pivot: PivotDef | undefined,
  filters: FilterArg[],
  prefix: string,
  depth: number,
  bag: FieldErrorBag,
): Promise<Where | null> {
  const items: Array<{ type: string; where: Where }> = [];
  for (const [index, filter] of filters.entries()) {
    const key = `${prefix}.${index}`;
    if (Array.isArray(filter.value) && filter.value.length > searchLimits.listValues) {
      bag.add(`${key}.value`, `A filter list holds at most ${searchLimits.listValues} values.`);
      continue;
    }
    if (typeof filter.value === "string" && filter.value.length > searchLimits.textLength) {
      bag.add(`${key}.value`, `A filter value is at most ${searchLimits.textLength} characters.`);
      continue;
    }
    const type = (filter.type ?? "and").toLowerCase();
    if (type !== "and" && type !== "or") bag.add(`${key}.type`, "The type must be and or or.");
    if (filter.nested?.length) {
      if (depth >= 1) {
        bag.add(`${key}.nested`, "Max nested depth 1 is exceeded");
        continue;
      }
      const nested = await filtersWhere(ctx, def, pivot, filter.nested, `${key}.nested`, depth + 1, bag);
      if (nested) items.push({ type, where: nested });
      continue;
    }
    if (!filter.field) {
      bag.add(`${key}.field`, "The field is required.");
      continue;
    }
    const column = /^[\w.\->]+$/.test(filter.field) ? resolveColumn(def, pivot, filter.field) : null;
    if (!column) {
      bag.add(
        `${key}.field`,
        `The ${filter.field} field is not filterable. Filterable: ${filterableFields(def, pivot).join(", ")}.`,
      );
      continue;
    }
    if (column.def.private && hidesPrivate(ctx.auth)) {
      bag.add(`${key}.field`, privateFieldRefusal(filter.field));
      continue;
    }
    const operator = (filter.operator ?? "=").toLowerCase();
    if (!(operators as readonly string[]).includes(operator)) {
      bag.add(`${key}.operator`, `The operator must be one of: ${operators.join(", ")}.`);
      continue;
    }
    const where = await condition(ctx, column, operator, filter.value ?? null, key, bag);
    if (where) items.push({ type, where });
  }
  return items.length ? combine(items) : null;
}

/** Turns `filters`, `scopes` and `search` into a Prisma `where`, and `sort` into an `orderBy`; 422 naming each bad entry. */
export async function searchQuery(
  ctx: Context,
  def: ResourceDef,
  args: SearchArgs,
  pivot?: PivotDef,
): Promise<{ where: Where | null; orderBy: Order[] }> {
  const bag = new FieldErrorBag();
  const parts: Where[] = [];
  const conditions = (filters: FilterArg[] = []): number =>
    filters.reduce((n, f) => n + 1 + conditions(f.nested ?? []), 0);
  if (conditions(args.filters ?? []) > searchLimits.conditions) {
    bag.add("filters", `At most ${searchLimits.conditions} filters (nested ones included) may be given.`);
    bag.throwIfAny();
  }
  if ((args.sort?.length ?? 0) > 20) bag.add("sort", "At most 20 sort fields may be given.");
  if ((args.search?.value?.length ?? 0) > searchLimits.textLength)
    bag.add("search.value", `The search value is at most ${searchLimits.textLength} characters.`);
  bag.throwIfAny();
  if (args.filters?.length) {
    const where = await filtersWhere(ctx, def, pivot, args.filters, "filters", 0, bag);
    if (where) parts.push(where);
  }
  for (const [index, scope] of (args.scopes ?? []).entries()) {
    const exposed = ownEntry(def.scopes, scope.name);
    if (!exposed) {
      const names = Object.keys(def.scopes ?? {});
      bag.add(
        `scopes.${index}.name`,
        `The ${scope.name} scope is not allowed. Allowed: ${names.length ? names.join(", ") : "none"}.`,
      );
      continue;
    }
    const parameters = scope.parameters ?? [];
    if (exposed.parameters !== undefined && parameters.length < exposed.parameters) {
      bag.add(`scopes.${index}.parameters`, `The ${scope.name} scope takes ${exposed.parameters} parameter(s).`);
      continue;
    }
    const where = exposed.where(parameters, ctx);
    parts.push(pivot ? { [pivot.related]: where } : where);
  }
  const term = args.search?.value;
  if (term != null && term !== "") {
    // A publishable key's search looks in the public columns only: a match on an email would tell it the email.
    const names = [...columnsOf(def)]
      .filter(([, f]) => (f.type === "string" || f.type === "text") && !(f.private && hidesPrivate(ctx.auth)))
      .map(([k]) => k);
    const columns = names.map((name) => resolveColumn(def, pivot, snake(name))!);
    const matches = await Promise.all(
      columns.map((column) => containsCondition(ctx, column, term, args.search?.caseSensitive === true)),
    );
    parts.push(matches.length ? { OR: matches } : { id: -1 });
  }
  const orderBy: Order[] = [];
  for (const [index, sort] of (args.sort ?? []).entries()) {
    const direction = (sort.direction ?? "asc").toLowerCase();
    if (direction !== "asc" && direction !== "desc")
      bag.add(`sort.${index}.direction`, "The direction must be asc or desc.");
    const column = /^[\w.\->]+$/.test(sort.field) ? resolveColumn(def, pivot, sort.field) : null;
    if (!column) {
      bag.add(
        `sort.${index}.field`,
        `The ${sort.field} field is not sortable. Sortable: ${filterableFields(def, pivot).join(", ")}.`,
      );
      continue;
    }
    if (column.def.private && hidesPrivate(ctx.auth)) {
      bag.add(`sort.${index}.field`, privateFieldRefusal(sort.field));
      continue;
    }
    orderBy.push(sortOrder(column, direction as "asc" | "desc"));
  }
  bag.throwIfAny();
  return { where: parts.length === 0 ? null : parts.length === 1 ? parts[0] : { AND: parts }, orderBy };
}

/** `Model.field` of every optional scalar column: the ones whose NULLs need an explicit place in a sort. */
const optionalColumns = new Set(
  Object.entries(getDatamodel().datamodel.models).flatMap(([model, { fields }]) =>
    fields.filter((f) => f.kind === "scalar" && !f.isRequired).map((f) => `${model}.${f.name}`),
  ),
);

/**
 * Sorting reuses the filter path: `{rank: {is: {name: c}}}` becomes `{rank: {name: "asc"}}`. NULLs sort as the
 * smallest value (first ascending, last descending), as SQLite and PERSCOM's MySQL do; PostgreSQL's default is
 * the opposite, so optional columns say so explicitly.
 */
function sortOrder(column: Column, direction: "asc" | "desc"): Order {
  const nullable = optionalColumns.has(`${column.model}.${column.name}`);
  const unwrap = (w: unknown): unknown => {
    if (w === MARK) return nullable ? { sort: direction, nulls: direction === "asc" ? "first" : "last" } : direction;
    if (w && typeof w === "object") {
      const [[k, v]] = Object.entries(w) as [[string, unknown]];
      return k === "is" ? unwrap(v) : { [k]: unwrap(v) };
    }
    return w;
  };
  return unwrap(column.wrap(MARK)) as Order;
}
const MARK = Symbol("direction");
