import type { FieldDef, RelationDef, ResourceDef } from "../resources/define.ts";
import { resourceNamed, resources } from "../resources/index.ts";
import { ApiError, validationError } from "../core/errors.ts";
import { guard, hidesPrivate, privateFieldRefusal, selfServiceRows } from "../data/access.ts";
import { columnsOf } from "../data/search.ts";
import type { Builder } from "./builder.ts";
import type { Context } from "../request/context.ts";
import { pascal } from "../core/names.ts";
import { enumRef } from "./enums.ts";
import { hasUpdatedAt } from "../data/attributes.ts";
import { dynamic, type EnumRef, type InputFieldMap, type InputRef, type OrderByFields } from "./pothos-dynamic.ts";

/*
 * Typed `where` and `orderBy` of every list, in Prisma's own vocabulary (@pothos/plugin-prisma-utils builds the input
 * types): what a client sends is the Prisma argument, after the checks below. What is filterable and sortable is the
 * registry's: a resource's visible columns, its to-one relations (`is`/`isNot`, and their columns to sort by) and its
 * to-many relations (`some`/`every`/`none`).
 */

type Where = Record<string, unknown>;
export type OrderInput = Record<string, unknown>;

/** The row id's name in `where` and `orderBy`; Prisma's column is `id`. */
const ROW_ID = "rowId";
/** The Prisma column a `where`/`orderBy` key names. */
const columnName = (key: string) => (key === ROW_ID ? "id" : key);

const PATTERN_OPS = new Set(["contains", "startsWith", "endsWith"]);
const COMPARE = ["equals", "not", "in", "notIn", "lt", "lte", "gt", "gte"] as const;
const opDescriptions: Record<string, string> = {
  equals: "Equal to the value (null: the column is empty).",
  not: "Does not match this filter.",
  in: "Equal to one of the values.",
  notIn: "Equal to none of the values.",
  lt: "Less than the value.",
  lte: "Less than or equal to the value.",
  gt: "Greater than the value.",
  gte: "Greater than or equal to the value.",
  contains: "Contains the text.",
  startsWith: "Starts with the text.",
  endsWith: "Ends with the text.",
  mode: "DEFAULT compares as the database does; INSENSITIVE ignores case.",
};

/**
 * The columns `where` and `orderBy` may name, by their GraphQL names: the row id (`rowId`, as the types call it: `id`
 * is the global id), the visible non-JSON columns and the two timestamps.
 */
export function filterableColumns(def: ResourceDef): Array<[string, FieldDef]> {
  // REST's search columns (src/data/search.ts), less JSON (no typed filter speaks it).
  return [...columnsOf(def)]
    .filter(([key, f]) => f.type !== "json" && (key !== "updatedAt" || hasUpdatedAt(def.model)))
    .map(([key, f]) => (key === "id" ? [ROW_ID, rowIdColumn] : [key, f]));
}
const rowIdColumn: FieldDef = { type: "int", description: "The row id (`rowId`: the integer REST shows as `id`)." };

const toOne = (def: ResourceDef) =>
  Object.values(def.relations).filter((r): r is Extract<RelationDef, { kind: "belongsTo" }> => r.kind === "belongsTo");
const toMany = (def: ResourceDef) =>
  Object.values(def.relations).filter(
    (r): r is Extract<RelationDef, { kind: "hasMany" }> => r.kind === "hasMany" && !r.filter,
  );

export interface FilterRefs {
  where(def: ResourceDef): InputRef;
  orderBy(def: ResourceDef): InputRef;
  sortOrder: EnumRef;
}

/** The `XWhere` and `XOrderBy` input types of every resource, made on first use. */
export function addFilterTypes(builder: Builder): FilterRefs {
  const b = dynamic(builder);
  const made = new Map<string, unknown>();
  const once = <T>(name: string, make: () => T): T => {
    if (!made.has(name)) made.set(name, make());
    return made.get(name) as T;
  };
  const ops = (names: readonly string[], extra: Record<string, object> = {}) =>
    Object.fromEntries(names.map((op) => [op, { description: opDescriptions[op], ...extra[op] }]));

  const queryMode = b.enumType("QueryMode", {
    description: "How text is compared.",
    values: {
      DEFAULT: {
        value: "default",
        description:
          "As the database compares it (case-sensitive on PostgreSQL; ASCII case-insensitive LIKE on SQLite).",
      },
      INSENSITIVE: { value: "insensitive", description: "Ignoring case." },
    },
  });
  const sortOrder = b.enumType("SortOrder", {
    description: "The direction of a sort key.",
    values: {
      asc: { value: "asc", description: "Smallest first; empty values last." },
      desc: { value: "desc", description: "Largest first; empty values last." },
    },
  });
  const scalarFilter = (f: FieldDef) => {
    if (f.enum) {
      const ref = enumRef(builder, f.enum);
      return once(`${f.enum.name}Filter`, () =>
        b.prismaFilter(ref, {
          name: `${f.enum!.name}Filter`,
          description: `Conditions on a ${f.enum!.name} value.`,
          ops: ops(["equals", "not", "in", "notIn"]),
        }),
      );
    }
    switch (f.type) {
      case "string":
      case "text":
        return once("StringFilter", () =>
          b.prismaFilter("String", {
            name: "StringFilter",
            description: "Conditions on a text value; all given must hold.",
            ops: ops([...COMPARE, "contains", "startsWith", "endsWith", "mode"], { mode: { type: queryMode } }),
          }),
        );
      case "int":
        return once("IntFilter", () =>
          b.prismaFilter("Int", {
            name: "IntFilter",
            description: "Conditions on a whole number; all given must hold.",
            ops: ops(COMPARE),
          }),
        );
      case "boolean":
        return once("BooleanFilter", () =>
          b.prismaFilter("Boolean", {
            name: "BooleanFilter",
            description: "Conditions on a true/false value.",
            ops: ops(["equals", "not"]),
          }),
        );
      case "datetime":
        return once("DateTimeFilter", () =>
          b.prismaFilter("DateTime", {
            name: "DateTimeFilter",
            description: "Conditions on a date and time; all given must hold.",
            ops: ops(COMPARE),
          }),
        );
      default:
        throw new Error(`No filter for ${f.type}`);
    }
  };

  function where(def: ResourceDef): InputRef {
    const name = `${pascal(def.name)}Where`;
    return once(name, () =>
      b.prismaWhere(def.model, {
        name,
        description: `Conditions on ${def.label.toLowerCase()}s; every condition given must hold.`,
        fields: (t) => {
          const ref = made.get(name);
          const fields: InputFieldMap = {};
          for (const [key, f] of filterableColumns(def))
            fields[key] = t.field({ type: scalarFilter(f), description: f.description ?? `Conditions on \`${key}\`.` });
          for (const rel of toOne(def))
            fields[rel.field] = t.field({
              type: relationFilter(resourceNamed(rel.target)),
              description: `Conditions on the ${resourceNamed(rel.target).label.toLowerCase()} (\`${rel.field}\`).`,
            });
          for (const rel of toMany(def))
            fields[rel.field] = t.field({
              type: listFilter(resourceNamed(rel.target)),
              description: `Conditions on the related ${resourceNamed(rel.target).label.toLowerCase()}s (\`${rel.field}\`).`,
            });
          fields.AND = t.field({ type: [ref], description: "Every one of these holds." });
          fields.OR = t.field({ type: [ref], description: "At least one of these holds." });
          fields.NOT = t.field({ type: ref, description: "This does not hold." });
          return fields;
        },
      }),
    );
  }

  function relationFilter(def: ResourceDef) {
    const name = `${pascal(def.name)}RelationFilter`;
    return once(name, () =>
      b.inputType(name, {
        description: `Conditions on a related ${def.label.toLowerCase()}.`,
        fields: (t) => ({
          is: t.field({
            type: where(def),
            required: false,
            description: "The related row exists and matches (null: there is none).",
          }),
          isNot: t.field({
            type: where(def),
            required: false,
            description: "There is no related row matching (null: there is one).",
          }),
        }),
      }),
    );
  }

  function listFilter(def: ResourceDef) {
    return once(`${pascal(def.name)}ListFilter`, () =>
      b.prismaListFilter(where(def), {
        name: `${pascal(def.name)}ListFilter`,
        description: `Conditions on a set of related ${def.label.toLowerCase()}s.`,
        ops: {
          some: { description: "At least one related row matches." },
          every: { description: "Every related row matches (true when there are none)." },
          none: { description: "No related row matches." },
        },
      }),
    );
  }

  function orderBy(def: ResourceDef): InputRef {
    const name = `${pascal(def.name)}OrderBy`;
    return once(name, () =>
      b.prismaOrderBy(def.model, {
        name,
        description: `One sort key of a list of ${def.label.toLowerCase()}s: give one field per item; earlier items sort first, then the list's default order.`,
        fields: () => {
          const fields: OrderByFields = {};
          for (const [key, f] of filterableColumns(def))
            fields[key] = () => ({ type: sortOrder, description: f.description ?? `Sort by \`${key}\`.` });
          for (const rel of toOne(def)) {
            fields[rel.field] = () => ({
              type: orderBy(resourceNamed(rel.target)),
              description: `Sort by a column of the ${resourceNamed(rel.target).label.toLowerCase()}.`,
            });
          }
          return fields;
        },
      }),
    );
  }

  // Made now, before the schema is built: once it is, a type's fields are read as it is made, and two resources that
  // filter on each other would each make the other's type again.
  for (const def of resources) {
    if (def.link) continue;
    where(def);
    orderBy(def);
  }
  return { where, orderBy, sortOrder };
}

/**
 * The Prisma `where` of a client's filter, checked: nulls only where they mean something (an empty column, a missing
 * related row), the caller holding the view scope of every resource it reaches through a relation.
 */
export function checkedWhere(ctx: Context, def: ResourceDef, input: unknown, path = "where"): Where | undefined {
  if (input == null) return undefined;
  const bag: Record<string, string[]> = Object.create(null);
  const walk = (d: ResourceDef, value: Where, at: string): Where => {
    const out: Where = {};
    const columns = new Map(filterableColumns(d));
    for (const [key, v] of Object.entries(value)) {
      if (v === undefined) continue;
      const here = `${at}.${key}`;
      if (key === "AND" || key === "OR") {
        const mapped = ((v as Where[] | null) ?? []).map((w, i) => walk(d, w, `${here}.${i}`));
        out[key] = key === "AND" ? [...((out.AND as Where[] | undefined) ?? []), ...mapped] : mapped;
        continue;
      }
      if (key === "NOT") {
        if (v === null) bag[here] = ["NOT cannot be null."];
        else out.NOT = walk(d, v as Where, here);
        continue;
      }
      const column = columns.get(key);
      if (column?.private && hidesPrivate(ctx.auth)) {
        bag[here] = [privateFieldRefusal(key)];
        continue;
      }
      if (column) {
        if (v === null) bag[here] = [`${key} cannot be null: use { equals: null }.`];
        else Object.assign(out, onColumn(columnName(key), scalar(column, v as Where, here), out));
        continue;
      }
      const rel = Object.values(d.relations).find((r) => r.field === key)!;
      const target = resourceNamed((rel as { target: string }).target);
      guardView(ctx, target, here);
      if (v === null) {
        bag[here] = [`${key} cannot be null.`];
        continue;
      }
      const nested: Where = {};
      for (const [op, w] of Object.entries(v as Where)) {
        if (w === undefined) continue;
        if (w === null) {
          if (rel.kind === "belongsTo" && d.fields[rel.foreignKey]?.nullable) nested[op] = null;
          else
            bag[`${here}.${op}`] = [
              rel.kind === "belongsTo"
                ? `Every ${d.label.toLowerCase()} has a ${target.label.toLowerCase()}: ${op}: null matches nothing to ask for.`
                : `${op} cannot be null.`,
            ];
          continue;
        }
        const inner = walk(target, w as Where, `${here}.${op}`);
        // A person who views the related rows through a self-service right filters on theirs alone: `some` and `none`
        // of their rows, `every` of their rows (the others' cannot be probed through a filter either).
        const limit = rel.kind === "hasMany" ? selfServiceRows(ctx.auth, target) : null;
        nested[op] = !limit ? inner : op === "every" ? { OR: [inner, { NOT: limit }] } : { AND: [inner, limit] };
      }
      out[key] = nested;
    }
    return out;
  };
  /**
   * A text pattern matches its characters literally: `%`, `_` and `\` are escaped (Prisma passes them to LIKE as
   * wildcards). SQLite's LIKE takes the escapes only in the reader's case-insensitive form, which is what its default
   * LIKE compares anyway (ASCII letters fold): there a pattern goes as its own insensitive condition.
   */
  const onColumn = (key: string, filter: Where, out: Where): Where => {
    const patterns = Object.keys(filter).filter((op) => PATTERN_OPS.has(op));
    if (!patterns.length || ctx.provider !== "sqlite" || filter.mode === "insensitive") return { [key]: filter };
    const rest = Object.fromEntries(Object.entries(filter).filter(([op]) => !PATTERN_OPS.has(op)));
    const pattern = { ...Object.fromEntries(patterns.map((op) => [op, filter[op]])), mode: "insensitive" };
    const and = [...((out.AND as Where[] | undefined) ?? []), { [key]: pattern }];
    return Object.keys(rest).filter((op) => op !== "mode").length ? { [key]: rest, AND: and } : { AND: and };
  };
  const scalar = (f: FieldDef, filter: Where, at: string): Where => {
    const out: Where = {};
    for (const [op, v] of Object.entries(filter)) {
      if (v === undefined) continue;
      if (PATTERN_OPS.has(op) && typeof v === "string") {
        out[op] = v.replace(/[\\%_]/g, (c) => `\\${c}`);
        continue;
      }
      if (v === null && !((op === "equals" || op === "not") && f.nullable)) {
        bag[`${at}.${op}`] = [
          op === "equals" || op === "not"
            ? `The column is never empty: ${op}: null matches nothing to ask for.`
            : `${op} cannot be null.`,
        ];
        continue;
      }
      if (op === "not" && v !== null && typeof v === "object") out.not = scalar(f, v as Where, `${at}.not`);
      else if ((op === "in" || op === "notIn") && (v as unknown[]).some((x) => x === null))
        bag[`${at}.${op}`] = [`${op} cannot hold null.`];
      else out[op] = v;
    }
    return out;
  };
  const where = walk(def, input as Where, path);
  if (Object.keys(bag).length) throw validationError(bag);
  return where;
}

/** Reaching another resource's rows through a filter reads them: the caller needs that resource's view scope. */
function guardView(ctx: Context, def: ResourceDef, at: string) {
  if (def.link) return;
  try {
    guard(ctx, [`view:${def.scope}`]);
  } catch (error) {
    if (error instanceof ApiError && error.code === "FORBIDDEN") {
      throw new ApiError(
        "FORBIDDEN",
        `Filtering on ${def.label.toLowerCase()}s (${at}) needs the view:${def.scope} scope.`,
      );
    }
    throw error;
  }
}

/** One sort key: the column's path from the listed row (`["rank", "order"]`) and its direction. */
export interface SortTerm {
  path: string[];
  direction: "asc" | "desc";
  field: FieldDef;
}

/** The sort keys of a client's `orderBy` list, checked (one field per item, scopes of relations sorted on). */
export function sortTerms(ctx: Context, def: ResourceDef, input: OrderInput[] | null | undefined): SortTerm[] {
  const terms: SortTerm[] = [];
  const bag: Record<string, string[]> = Object.create(null);
  for (const [i, item] of (input ?? []).entries()) {
    const collect = (d: ResourceDef, value: OrderInput, path: string[]): number => {
      let found = 0;
      const columns = new Map(filterableColumns(d));
      for (const [key, v] of Object.entries(value)) {
        if (v == null) continue;
        const column = columns.get(key);
        if (column?.private && hidesPrivate(ctx.auth)) {
          bag[`orderBy.${i}.${[...path, key].join(".")}`] = [privateFieldRefusal(key)];
          found++;
          continue;
        }
        if (column) {
          terms.push({ path: [...path, columnName(key)], direction: v as "asc" | "desc", field: column });
          found++;
          continue;
        }
        const rel = Object.values(d.relations).find((r) => r.field === key) as { target: string };
        const target = resourceNamed(rel.target);
        guardView(ctx, target, `orderBy.${i}.${[...path, key].join(".")}`);
        found += collect(target, v as OrderInput, [...path, key]);
      }
      return found;
    };
    const found = collect(def, item, []);
    if (found !== 1)
      bag[`orderBy.${i}`] = [
        found ? "Give one sort key per item: the order of keys inside an object is not kept." : "Give one sort key.",
      ];
  }
  if (Object.keys(bag).length) throw validationError(bag);
  return terms;
}
