import type { Page } from "../data/access.ts";
import { ApiError } from "../core/errors.ts";
import {
  relationField,
  type FieldDef,
  type PivotDef,
  type RelationDef,
  type ResourceDef,
} from "../resources/define.ts";
import { linkResourceOf, morphOwnersOf, resourceNamed, resources } from "../resources/index.ts";
import type { Builder } from "./builder.ts";
import {
  countChildren,
  countMorphChildren,
  loadMorphChildren,
  loadMorphOwner,
  loadMorphPage,
  TYPE,
} from "./loaders.ts";
import type { Context } from "../request/context.ts";
import { addFilterTypes, type FilterRefs } from "./filters.ts";
import { enumRef } from "./enums.ts";
import { jsonOutputType, typedJson } from "./json-shapes.ts";
import {
  CONNECTION_PATHS,
  connectionArgs,
  connectionOf as connectionValue,
  connectionType,
  cursorSelection,
  planPage,
  type ConnectionArgs,
  type PagePlan,
} from "./connections.ts";
import { hidesPrivate, selfServiceRows, withColumns } from "../data/access.ts";
import { columnsOf, pivotColumnsOf } from "../data/search.ts";
import type { FieldNode, GraphQLResolveInfo } from "graphql";
import { camel, pascal, pluralWords } from "../core/names.ts";
import { sizedElsewhere } from "./cost.ts";
import { hasUpdatedAt, labelOf } from "../data/attributes.ts";
import { prismaSelectExtension } from "./pothos-internals.ts";
import { dynamic, type DynamicFieldBuilder, type FieldMap, type OutputRef, type Row } from "./pothos-dynamic.ts";
import {
  computedDescription,
  fieldDescription,
  relationDescription,
  resourceDescription,
} from "../resources/descriptions.ts";

export const scalarOf = (f: Pick<FieldDef, "type">) =>
  (({ string: "String", text: "String", int: "Int", boolean: "Boolean", datetime: "DateTime", json: "JSON" }) as const)[
    f.type
  ];

export interface ObjectRefs {
  objects: Map<string, OutputRef>;
  unions: Map<string, OutputRef>;
  pages: Map<string, OutputRef>;
  connections: Map<string, OutputRef>;
  filters: FilterRefs;
  /** `XConnection` of a resource's rows. */
  connectionOf(def: ResourceDef): OutputRef | undefined;
}

/** The internal field REST includes read a to-many relation through: every related row, as PERSCOM returns them. */
export const internalListField = (rel: RelationDef) => `${relationField(rel)}List`;
const toManyKinds = new Set(["hasMany", "belongsToMany", "morphMany"]);
/** The field a REST selection reads `rel` through: the internal full list of a to-many relation, or the relation itself. */
export const restRelationField = (rel: RelationDef) =>
  toManyKinds.has(rel.kind) ? internalListField(rel) : relationField(rel);

const plural = pluralWords;

/** The default order of a list as sort terms on the listed rows' own columns. */
export function baseOrder(
  orderBy: Record<string, "asc" | "desc">[] | undefined,
  columns: (name: string) => FieldDef | undefined,
) {
  return (orderBy ?? []).flatMap((o) =>
    Object.entries(o).map(([column, direction]) => ({
      column,
      direction,
      field: columns(column) ?? { type: "int" as const },
    })),
  );
}
export const columnOf = (def: ResourceDef | PivotDef) => {
  const columns = "parentKey" in def ? pivotColumnsOf(def) : columnsOf(def);
  return (name: string): FieldDef | undefined => columns.get(name);
};

/**
 * One GraphQL object type per resource, with its columns, `label`, computed fields and relations. A resource's type is
 * a Relay node (global `id`, the PERSCOM integer as `rowId`); link rows are internal (REST), their columns public on
 * the edges of many-to-many connections.
 */
export function addObjectTypes(builder: Builder): ObjectRefs {
  const b = dynamic(builder);
  const objects = new Map<string, OutputRef>();
  const unions = new Map<string, OutputRef>();
  const pages = new Map<string, OutputRef>();
  const connections = new Map<string, OutputRef>();
  const filters = addFilterTypes(builder);
  for (const def of resources) {
    // Select mode: a row carries the columns its selected fields need, not every column of the table (a page of 2,000
    // records with their authors would otherwise read and decode some sixty columns a row).
    const options = {
      name: pascal(def.name),
      description: resourceDescription(def),
      select: { id: true },
      fields: (t: DynamicFieldBuilder) => fieldsOf(t, def),
    };
    objects.set(
      def.name,
      def.link
        ? b.prismaObject(def.model, { ...options, subGraphs: ["internal"] })
        : b.prismaNode(def.model, {
            ...options,
            id: { field: "id" },
            findUnique: (id: string) => ({ id: Number(id) }),
          }),
    );
  }

  function connectionOf(def: ResourceDef) {
    if (!connections.has(def.name))
      connections.set(def.name, connectionType(builder, pascal(def.name), objects.get(def.name), plural(def)));
    return connections.get(def.name);
  }
  /** `GroupUnitsConnection`: the related rows of one many-to-many relation, its link's columns on the edges. */
  function linkConnectionOf(
    def: ResourceDef,
    relationKey: string,
    rel: Extract<RelationDef, { kind: "belongsToMany" }>,
  ) {
    const key = `${pascal(def.name)}${pascal(camel(relationKey))}`;
    if (!connections.has(key)) {
      const related = resourceNamed(rel.pivot.related);
      const link = linkResourceOf(rel.pivot);
      connections.set(
        key,
        connectionType(builder, key, objects.get(related.name), plural(related), (t) => {
          const fields: FieldMap = {
            linkedAt: t.field({
              type: "DateTime",
              description: "When the link was made.",
              resolve: (e: { edge: Row }) => e.edge.createdAt,
            }),
          };
          for (const [key, f] of Object.entries(rel.pivot.fields)) {
            fields[key] = t.field({
              type: f.enum ? enumRef(builder, f.enum) : scalarOf(f),
              nullable: !!f.nullable || f.type === "json",
              description: fieldDescription(link, key, f),
              resolve: (e: { edge: Row }) => e.edge[key],
            });
          }
          return fields;
        }),
      );
    }
    return connections.get(key);
  }

  function unionFor(target: string) {
    if (!unions.has(target)) {
      const owners = morphOwnersOf(target);
      unions.set(
        target,
        b.unionType(`${pascal(target)}Owner`, {
          description: `Any record that can own a ${target}.`,
          types: owners.map((o) => objects.get(o.name)),
          resolveType: (value: { [TYPE]: string }) => value[TYPE],
        }),
      );
    }
    return unions.get(target);
  }

  /** A to-many relation as a connection: one query per level for every parent (per-parent windows), counts on demand. */
  function relationConnection(
    t: DynamicFieldBuilder,
    def: ResourceDef,
    relationKey: string,
    rel: Extract<RelationDef, { kind: "hasMany" | "belongsToMany" }>,
    description: string,
  ) {
    const m2m = rel.kind === "belongsToMany";
    const target = resourceNamed(m2m ? rel.pivot.related : rel.target);
    const listed = m2m ? linkResourceOf(rel.pivot) : target;
    const base = baseOrder(
      m2m ? rel.pivot.orderBy : (rel.orderBy ?? target.orderBy),
      columnOf(m2m ? rel.pivot : target),
    );
    const prefix = m2m ? [rel.pivot.related] : [];
    const fixed = rel.filter?.where;
    const typeName = pascal(target.name);
    const foreignKey = m2m ? rel.pivot.parentKey : rel.foreignKey;
    const plan = (args: ConnectionArgs, ctx: Context) => planPage(ctx, target, args, base, prefix);
    return t.field({
      type: m2m ? linkConnectionOf(def, relationKey, rel) : connectionOf(target),
      // Nullable: a nested list that fails (a bad argument) is null with its error; its parent rows stand.
      nullable: true,
      args: connectionArgs(t, filters, target, plural(target)),
      description,
      // Pothos's own `select` option drops the selected-names argument: the plugin's extension takes it (as its
      // relatedConnection does), so that `{ likes { totalCount } }` reads no rows, only the grouped count.
      extensions: prismaSelectExtension((args: ConnectionArgs, ctx: Context, nested, selected) => {
        let p: PagePlan;
        try {
          p = plan(args, ctx);
        } catch {
          // Bad arguments load nothing here; the field's resolver plans again and fails at its own path.
          return { select: { id: true } };
        }
        const names = selected ? [...selected()] : undefined;
        if (names?.every((name) => name === "totalCount" || name === "__typename")) return { select: { id: true } };
        const where = [...(fixed ? [fixed] : []), ...p.where];
        const page = {
          where: where.length ? { AND: where } : undefined,
          orderBy: p.orderBy,
          take: p.take,
          skip: p.skip || undefined,
        };
        const cursors = cursorSelection(p, names);
        if (!m2m)
          return {
            select: {
              [rel.field]: nested({ ...page, select: cursors }, { getType: () => typeName, paths: CONNECTION_PATHS }),
            },
          };
        const related = nested({}, { getType: () => typeName, paths: CONNECTION_PATHS });
        // Link rows come whole (include mode: their columns are the edge's); the related row as its fields select it.
        const relatedCursors = cursors[rel.pivot.related];
        const relatedColumns = (typeof relatedCursors === "object" ? relatedCursors.select : undefined) ?? {};
        return {
          select: {
            [rel.field]: {
              ...page,
              include: { [rel.pivot.related]: withColumns(related as { select?: Row }, relatedColumns) },
            },
          },
        };
      }),
      resolve: (row: Row, args: ConnectionArgs, ctx: Context, info: GraphQLResolveInfo) => {
        const p = planOnce(ctx, info, args, () => plan(args, ctx));
        const counted = [...(fixed ? [fixed] : []), ...p.filter];
        const total = () => countChildren(ctx, listed.model, foreignKey, counted, row.id as number);
        return connectionValue(
          (row[rel.field] ?? []) as Row[],
          p,
          total,
          m2m ? (link) => link[rel.pivot.related] as Row : undefined,
        );
      },
    });
  }

  function fieldsOf(t: DynamicFieldBuilder, def: ResourceDef): FieldMap {
    const fields: FieldMap = def.link
      ? { id: t.exposeInt("id", { description: `The link row's id.` }) }
      : {
          rowId: t.exposeInt("id", {
            description: `The ${def.label.toLowerCase()}'s row id: the integer REST shows as \`id\`, unique within the account.`,
          }),
          label: t.string({
            description: `A readable name of the row: "${def.label}: 12".`,
            resolve: (row: Row) => labelOf(def, row),
          }),
        };
    for (const [key, f] of Object.entries(def.fields)) {
      if (f.hidden) continue;
      const type = f.enum ? enumRef(builder, f.enum) : f.type === "json" ? jsonOutputType(builder, f) : scalarOf(f);
      if (f.private) {
        // Nullable whatever the column: a publishable key's answer is null with the error, the rest of the row kept.
        fields[key] = t.field({
          type,
          nullable: true,
          description: `${fieldDescription(def, key, f)} Private: a publishable key reads null (FORBIDDEN).`,
          select: { [key]: true },
          resolve: (row: Row, _args: unknown, ctx: Context) => {
            if (hidesPrivate(ctx.auth))
              throw new ApiError("FORBIDDEN", `A publishable key cannot read the ${def.name}'s ${key}.`);
            return row[key];
          },
        });
        continue;
      }
      fields[key] = t.expose(key, {
        type,
        nullable: !!f.nullable || (f.type === "json" && !typedJson(f)),
        description: fieldDescription(def, key, f),
      });
    }
    fields.createdAt = t.expose("createdAt", { type: "DateTime", description: "When the row was created (UTC)." });
    if (hasUpdatedAt(def.model))
      fields.updatedAt = t.expose("updatedAt", { type: "DateTime", description: "When the row last changed (UTC)." });
    for (const [key, c] of Object.entries(def.computed ?? {})) {
      fields[key] = t.field({
        type:
          c.type === "json"
            ? jsonOutputType(builder, c)
            : ({ boolean: "Boolean", datetime: "DateTime", string: "String" } as const)[c.type],
        nullable: !!c.nullable,
        description: computedDescription(def, key, c),
        select: columns(c.needs),
        resolve: (row: Row, _args: unknown, ctx: Context) => c.resolve(row, ctx),
      });
    }
    for (const [relationKey, rel] of Object.entries(def.relations)) {
      const description = relationDescription(def, rel);
      switch (rel.kind) {
        case "belongsTo":
          fields[rel.field] = t.relation(rel.field, { nullable: true, description });
          break;
        case "hasMany":
        case "belongsToMany": {
          // A many-to-many connection lists the related rows (`fields`), not the link rows (`fieldLinks`).
          if (!def.link)
            fields[rel.kind === "belongsToMany" && !rel.filter ? camel(relationKey) : relationField(rel)] =
              relationConnection(t, def, relationKey, rel, description);
          const orderBy = rel.kind === "hasMany" ? rel.orderBy : rel.pivot.orderBy;
          const related = resourceNamed(rel.target);
          // A person who views the related rows through a self-service right gets only their own in an include too.
          const limitOf = (ctx: Context) => {
            const limit = selfServiceRows(ctx.auth, related);
            if (!limit) return {};
            return { where: rel.kind === "hasMany" ? limit : { [rel.pivot.related]: limit } };
          };
          const query = {
            query: (_args: unknown, ctx: Context) => ({ ...(orderBy ? { orderBy } : {}), ...limitOf(ctx) }),
          };
          const internal = {
            subGraphs: ["internal" as const],
            description: `${description} Every row, for REST includes.`,
          };
          if (!rel.filter) {
            fields[internalListField(rel)] = t.relation(rel.field, { ...query, ...internal });
            break;
          }
          // A filtered subset loads the same relation with the same arguments (so Pothos merges the two
          // into one query) and filters the rows here; different `where`s would force a query per row.
          const { where } = rel.filter;
          const target = rel.kind === "hasMany" ? rel.target : linkResourceOf(rel.pivot).name;
          fields[internalListField(rel)] = t.field({
            type: [objects.get(target)],
            ...internal,
            select: (_args: unknown, ctx: Context, nested: (q: object) => unknown) => ({
              [rel.field]: nested({
                ...(orderBy ? { orderBy } : {}),
                ...limitOf(ctx),
                select: columns(Object.keys(where)),
              }),
            }),
            resolve: (row: Row) => (row[rel.field] as Array<Record<string, unknown>>).filter((r) => matches(r, where)),
          });
          break;
        }
        case "morphOne":
          fields[rel.field] = t.field({
            type: objects.get(resourceNamed(rel.target).name),
            nullable: true,
            description,
            resolve: (row: Row, _args: unknown, ctx: Context, info: GraphQLResolveInfo) =>
              loadMorphChildren(ctx, def, resourceNamed(rel.target), true, row.id as number, info),
          });
          break;
        case "morphMany": {
          const target = resourceNamed(rel.target);
          const base = baseOrder([{ id: "asc" }], columnOf(target));
          fields[rel.field] = t.field({
            type: connectionOf(target),
            nullable: true,
            args: connectionArgs(t, filters, target, plural(target)),
            description,
            resolve: async (row: Row, args: ConnectionArgs, ctx: Context, info: GraphQLResolveInfo) => {
              const p = planPage(ctx, target, args, base);
              const rows = await loadMorphPage(ctx, def, target, row.id as number, p, info);
              const total = () => countMorphChildren(ctx, def, target, p.filter, row.id as number);
              return connectionValue(rows, p, total);
            },
          });
          fields[internalListField(rel)] = t.field({
            type: [objects.get(target.name)],
            subGraphs: ["internal"],
            description: `${description} Every row, for REST includes.`,
            resolve: (row: Row, _args: unknown, ctx: Context, info: GraphQLResolveInfo) =>
              loadMorphChildren(ctx, def, target, false, row.id as number, info),
          });
          break;
        }
        case "morphTo":
          fields[rel.field] = t.field({
            type: unionFor(rel.morphRelation),
            select: columns(["modelType", "modelId"]),
            nullable: true,
            description,
            resolve: (row: Row, _args: unknown, ctx: Context, info: GraphQLResolveInfo) =>
              loadMorphOwner(ctx, rel.field, row.modelType as string | null, row.modelId as number | null, info),
          });
          break;
      }
    }
    // Keys without a Prisma relation (no foreign key in the database) are read by DataLoader, batched per type.
    for (const [key, f] of Object.entries(def.fields)) {
      const name = key.replace(/Id$/, "");
      if (f.hidden || name === key || name in fields || (!f.references && !f.morphType)) continue;
      fields[name] = f.references
        ? t.field({
            type: objects.get(f.references),
            nullable: true,
            select: columns([key]),
            description: `The ${resourceNamed(f.references).label.toLowerCase()} \`${key}\` names, or null.`,
            resolve: (row: Row, _args: unknown, ctx: Context, info: GraphQLResolveInfo) =>
              loadMorphOwner(ctx, name, resourceNamed(f.references!).morphClass, row[key] as number | null, info),
          })
        : t.field({
            type: b.nodeInterfaceRef(),
            nullable: true,
            select: columns([key, f.morphType!]),
            description: `The row \`${f.morphType}\` and \`${key}\` name, of any type, or null.`,
            resolve: (row: Row, _args: unknown, ctx: Context, info: GraphQLResolveInfo) =>
              loadMorphOwner(ctx, name, row[f.morphType!] as string | null, row[key] as number | null, info),
          });
    }
    return fields;
  }

  return { objects, unions, pages, connections, filters, connectionOf };
}

/**
 * The page plan of a nested connection, made once for all the parents it is resolved for: graphql-js shares the field
 * nodes between the rows of a list, and the arguments are the same unless variables differ (they cannot within one
 * execution). Kept per request: a parsed document is shared by every request that sends it, and a plan holds that
 * request's checks (the key's scopes for a filter through a relation).
 */
const plans = new WeakMap<Context, WeakMap<readonly FieldNode[], Map<string, PagePlan>>>();
function planOnce(ctx: Context, info: GraphQLResolveInfo, args: ConnectionArgs, make: () => PagePlan): PagePlan {
  let byField = plans.get(ctx);
  if (!byField) plans.set(ctx, (byField = new WeakMap()));
  let byArgs = byField.get(info.fieldNodes);
  if (!byArgs) byField.set(info.fieldNodes, (byArgs = new Map()));
  const key = JSON.stringify(args);
  let plan = byArgs.get(key);
  if (!plan) byArgs.set(key, (plan = make()));
  return plan;
}

/** `{ a: true, b: true }`: a select of these columns. */
export const columns = (names: readonly string[]) => Object.fromEntries(names.map((n) => [n, true]));

/** Whether a row satisfies a relation filter: column equality, or `{ not: value }`. */
function matches(row: Record<string, unknown>, where: Record<string, unknown>): boolean {
  return Object.entries(where).every(([key, wanted]) =>
    wanted !== null && typeof wanted === "object" && "not" in wanted
      ? row[key] !== (wanted as { not: unknown }).not
      : row[key] === wanted,
  );
}

/** `<Type>Page`: one page of a list, with what REST needs for `links` and `meta`. */
export function pageType(builder: Builder, refs: ObjectRefs, def: ResourceDef) {
  if (!refs.pages.has(def.name)) {
    const b = dynamic(builder);
    const rows = `${def.label.toLowerCase()}s`;
    refs.pages.set(
      def.name,
      b.objectType(b.objectRef(`${pascal(def.name)}Page`), {
        subGraphs: ["internal"],
        description: `One page of ${rows}, with the counts to page through the rest.`,
        fields: (t) => ({
          nodes: t.field({
            type: [refs.objects.get(def.name)],
            complexity: sizedElsewhere,
            description: `The ${rows} of this page, in order.`,
            resolve: (p: Page) => p.nodes,
          }),
          totalCount: t.int({
            description: `How many ${rows} match, over all pages.`,
            resolve: (p: Page) => p.totalCount(),
          }),
          page: t.exposeInt("page", { description: "This page's number, from 1." }),
          perPage: t.exposeInt("perPage", { description: "The most rows a page holds (`limit`)." }),
          lastPage: t.int({
            description: "The number of the last page (at least 1).",
            resolve: async (p: Page) => Math.max(1, Math.ceil((await p.totalCount()) / p.perPage)),
          }),
        }),
      }),
    );
  }
  return refs.pages.get(def.name);
}
