import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from "graphql";
import { validationError } from "../core/errors.ts";
import { selfServiceRows } from "../data/access.ts";
import type { FieldDef, ResourceDef } from "../resources/define.ts";
import type { Builder } from "./builder.ts";
import type { Context } from "../request/context.ts";
import { sizedElsewhere } from "./cost.ts";
import { checkedWhere, sortTerms, type FilterRefs, type OrderInput, type SortTerm } from "./filters.ts";
import { dynamic, type DynamicFieldBuilder, type FieldMap, type Row, type TypeRef } from "./pothos-dynamic.ts";

/*
 * Relay connections over keyset pages. A page is the rows after (or before) a cursor in the list's order, which is
 * the client's `orderBy`, then the list's default order, then the row id: every order is total, so a cursor names
 * one position, and rows inserted elsewhere neither shift nor repeat what a client has not read yet. `offset` skips
 * rows after that position (REST's page numbers). Empty values sort last in both directions.
 */

type Where = Record<string, unknown>;

export interface ConnectionArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
  offset?: number | null;
  where?: Where | null;
  orderBy?: OrderInput[] | null;
}

/** The arguments of every connection field. */
export function connectionArgs(t: DynamicFieldBuilder, filters: FilterRefs, def: ResourceDef, rows: string) {
  return {
    first: t.arg.int({
      description: `At most this many ${rows} from the start (after \`after\`): 20 when neither first nor last is given; at most the server's page maximum.`,
    }),
    after: t.arg.string({
      description: "Only rows after this cursor (an `endCursor` or an edge's `cursor` of the same list and order).",
    }),
    last: t.arg.int({ description: `At most this many ${rows} from the end (before \`before\`).` }),
    before: t.arg.string({ description: "Only rows before this cursor." }),
    offset: t.arg.int({ description: "Skip this many rows first (after the cursor when one is given)." }),
    where: t.arg({ type: filters.where(def), description: `Conditions the ${rows} must meet.` }),
    orderBy: t.arg({
      type: [filters.orderBy(def)],
      description:
        "Sort keys, before the list's default order (ties are broken by the default order, then the row id).",
    }),
  };
}

export interface PagePlan {
  /** Keyset and client conditions, to be ANDed with the list's own. */
  where: Where[];
  /** The client's conditions alone: what `totalCount` counts. */
  filter: Where[];
  orderBy: Array<Record<string, unknown>>;
  take: number;
  skip: number;
  /** The page was read in reverse order (`last`) and is turned around before it is returned. */
  backwards: boolean;
  size: number;
  terms: SortTerm[];
  offset: number;
  hasCursor: boolean;
}

const ID_FIELD: FieldDef = { type: "int" };

/** `{ a: { b: value } }` for path [a, b]. */
const nest = (path: string[], value: unknown): Where =>
  path.reduceRight<unknown>(
    (inner, key, i) => (i === path.length - 1 ? { [key]: inner } : { [key]: { is: inner } }),
    value,
  ) as Where;
const orderNest = (path: string[], value: unknown): Record<string, unknown> =>
  path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value) as Record<string, unknown>;

function valueAt(row: Row, path: string[]): unknown {
  let value: unknown = row;
  for (const key of path) value = (value as Row | null | undefined)?.[key];
  return value ?? null;
}

const encode = (values: unknown[]) =>
  Buffer.from(JSON.stringify(values.map((v) => (v instanceof Date ? v.toISOString() : v)))).toString("base64url");

function decode(cursor: string, terms: SortTerm[], arg: string): unknown[] {
  const bad = () => validationError({ [arg]: [`The ${arg} cursor does not belong to this list and order.`] });
  let values: unknown;
  try {
    values = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw bad();
  }
  if (!Array.isArray(values) || values.length !== terms.length) throw bad();
  return values.map((v, i) => {
    const f = terms[i].field;
    if (v === null) return null;
    if (f.type === "datetime") {
      const date = typeof v === "string" ? new Date(v) : null;
      if (!date || Number.isNaN(date.getTime())) throw bad();
      return date;
    }
    if (f.type === "int" ? !Number.isInteger(v) : f.type === "boolean" ? typeof v !== "boolean" : typeof v !== "string")
      throw bad();
    return v;
  });
}

/** Rows strictly after (forward) or before (backward) the cursor position in the order of `terms`, nulls last. */
function keyset(terms: SortTerm[], values: unknown[], forward: boolean): Where {
  const ascendingAt = (i: number) => (terms[i].direction === "asc") === forward;
  const at = (i: number): Where => {
    const { path } = terms[i];
    const value = values[i];
    const ascending = ascendingAt(i);
    const beyond: Where[] = [];
    if (value !== null) {
      beyond.push(nest(path, { [ascending ? "gt" : "lt"]: value }));
      if (forward && nullableAt(terms[i])) beyond.push(nullAt(path));
    } else if (!forward) {
      beyond.push(notNullAt(path));
    }
    if (i === terms.length - 1)
      return beyond.length === 1 ? beyond[0] : { OR: beyond.length ? beyond : [{ id: { in: [] } }] };
    const same = value === null ? nullAt(path) : nest(path, { equals: value });
    return { OR: [...beyond, { AND: [same, at(i + 1)] }] };
  };
  // `a > x OR (a = x AND …)` is no index range to SQLite or PostgreSQL: a page deep in a long list read every row
  // before its cursor. With the first key's bound `a >= x` beside it, the read starts at the cursor.
  const [first] = terms;
  if (terms.length > 1 && values[0] !== null && !nullableAt(first))
    return { AND: [nest(first.path, { [ascendingAt(0) ? "gte" : "lte"]: values[0] }), at(0)] };
  return at(0);
}

/** Whether a sort key can be empty: a nullable column, or any column through a to-one relation (no related row). */
const nullableAt = (term: SortTerm) => term.path.length > 1 || !!term.field.nullable;

/** The column is empty, or (through a to-one relation) there is no related row. */
function nullAt(path: string[]): Where {
  if (path.length === 1) return { [path[0]]: null };
  return { OR: [nest(path.slice(0, -1), null), nest(path, { equals: null })] };
}
const notNullAt = (path: string[]): Where => nest(path, { not: null });

/**
 * The page a connection's arguments ask for. `base`: the list's default order (the listed rows' own columns);
 * `prefix`: where the client's columns sit from the listed row (a many-to-many list reads link rows).
 */
export function planPage(
  ctx: Context,
  def: ResourceDef,
  args: ConnectionArgs,
  base: Array<{ column: string; direction: "asc" | "desc"; field: FieldDef }>,
  prefix: string[] = [],
): PagePlan {
  const { first, last, after, before } = args;
  const max = ctx.config.maxPageSize;
  const bag: Record<string, string[]> = Object.create(null);
  for (const [name, value] of [
    ["first", first],
    ["last", last],
  ] as const) {
    if (value != null && (value < 0 || value > max)) bag[name] = [`${name} must be between 0 and ${max}.`];
  }
  if (first != null && last != null) bag.last = ["Give first or last, not both."];
  const offset = args.offset ?? 0;
  if (offset < 0) bag.offset = ["offset cannot be negative."];
  if (Object.keys(bag).length) throw validationError(bag);

  const terms: SortTerm[] = sortTerms(ctx, def, args.orderBy).map((t) => ({ ...t, path: [...prefix, ...t.path] }));
  const seen = new Set(terms.map((t) => t.path.join(".")));
  for (const b of base) {
    if (seen.has(b.column)) continue;
    seen.add(b.column);
    terms.push({ path: [b.column], direction: b.direction, field: b.field });
  }
  if (!seen.has("id")) terms.push({ path: ["id"], direction: "asc", field: ID_FIELD });

  const backwards = last != null && first == null;
  const size = backwards ? last : (first ?? ctx.config.graphqlDefaultFirst);
  const filter: Where[] = [];
  const clientWhere = checkedWhere(ctx, def, args.where);
  if (clientWhere) filter.push(prefix.length ? nest(prefix, clientWhere) : clientWhere);
  // A person who views these rows through a self-service right sees only their own, in a root list or a nested one.
  const limit = selfServiceRows(ctx.auth, def);
  if (limit) filter.push(prefix.length ? nest(prefix, limit) : limit);
  const where = [...filter];
  if (after != null) where.push(keyset(terms, decode(after, terms, "after"), true));
  if (before != null) where.push(keyset(terms, decode(before, terms, "before"), false));

  const flip = (d: "asc" | "desc") => (backwards ? (d === "asc" ? "desc" : "asc") : d);
  const orderBy = terms.map((t) => {
    const nullable = nullableAt(t);
    // Empty values last in the page's order; read backwards, they come first.
    return orderNest(
      t.path,
      nullable ? { sort: flip(t.direction), nulls: backwards ? "first" : "last" } : flip(t.direction),
    );
  });
  return {
    where,
    filter,
    orderBy,
    take: size + 1,
    skip: offset,
    backwards,
    size,
    terms,
    offset,
    hasCursor: after != null || before != null,
  };
}

/** A Prisma `select` of columns (`true`) and of to-one relations' columns. */
export interface CursorSelect {
  [key: string]: true | { select: CursorSelect };
}

/**
 * What the page's rows must carry for their cursors (a Prisma `select`): the order's columns, through to-one relations;
 * nothing when the connection's `selected` fields (if known) have no cursor to write (no `edges`, no `pageInfo`).
 */
export function cursorSelection(plan: PagePlan, selected?: Iterable<string>): CursorSelect {
  const select: CursorSelect = {};
  const names = selected && new Set(selected);
  if (names && !names.has("edges") && !names.has("pageInfo")) return select;
  for (const { path } of plan.terms) {
    let at = select;
    for (const key of path.slice(0, -1)) {
      at[key] ??= { select: {} };
      at = (at[key] as { select: CursorSelect }).select;
    }
    at[path[path.length - 1]] = true;
  }
  return select;
}

/** The fields selected on the value of the field `info` resolves (through fragments; whatever their directives say). */
export function selectedNames(info: GraphQLResolveInfo): Set<string> {
  const names = new Set<string>();
  const visit = (set: SelectionSetNode | undefined) => {
    for (const selection of set?.selections ?? []) {
      if (selection.kind === Kind.FIELD) names.add(selection.name.value);
      else if (selection.kind === Kind.INLINE_FRAGMENT) visit(selection.selectionSet);
      else visit(info.fragments[selection.name.value]?.selectionSet);
    }
  };
  for (const node of info.fieldNodes) visit(node.selectionSet);
  return names;
}

/** Where a connection's rows are in its selection: `nodes`, and `edges { node }` (the paths Pothos plans them at). */
export const CONNECTION_PATHS = [[{ name: "nodes" }], [{ name: "edges" }, { name: "node" }]];

export interface ConnectionValue {
  edges: Array<{ cursor: string; node: Row; edge: Row }>;
  nodes: Row[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  totalCount: () => Promise<number>;
}

/** One edge of a page: its cursor is written when read (a page read through `nodes` needs none). */
class Edge {
  constructor(
    readonly node: Row,
    readonly edge: Row,
    private readonly cursorOf: (row: Row) => string,
  ) {}
  get cursor(): string {
    return this.cursorOf(this.edge);
  }
}

/** The connection of a page read with `plan` (its `take` rows); `node` picks the node from a listed row (a link row's related row). */
export function connectionOf(
  rows: Row[],
  plan: PagePlan,
  totalCount: () => Promise<number>,
  node?: (row: Row) => Row,
): ConnectionValue {
  const more = rows.length > plan.size;
  const page = more ? rows.slice(0, plan.size) : rows;
  if (plan.backwards) page.reverse();
  const cursorOf = (row: Row) => encode(plan.terms.map((t) => valueAt(row, t.path)));
  const nodes = node ? page.map(node) : page;
  let edges: Edge[] | undefined;
  return {
    // Made when read: most front-end lists read `nodes` only.
    get edges() {
      return (edges ??= page.map((row, i) => new Edge(nodes[i], row, cursorOf)));
    },
    nodes,
    pageInfo: {
      hasNextPage: plan.backwards ? false : more,
      hasPreviousPage: plan.backwards ? more : plan.offset > 0,
      get startCursor() {
        return page.length ? cursorOf(page[0]) : null;
      },
      get endCursor() {
        return page.length ? cursorOf(page.at(-1)!) : null;
      },
    },
    totalCount,
  };
}

/** `XConnection` and `XEdge` of a node type; `edgeFields` adds link columns to the edge (a many-to-many list). */
export function connectionType(
  builder: Builder,
  name: string,
  nodeRef: TypeRef,
  rows: string,
  edgeFields?: (t: DynamicFieldBuilder) => FieldMap,
) {
  const b = dynamic(builder);
  const edge = b.objectRef(`${name}Edge`).implement({
    description: `One of the ${rows} of a page, with its cursor${edgeFields ? " and the columns of its link" : ""}.`,
    fields: (t) => ({
      cursor: t.string({
        description: "Where this row is in the list: pass it as `after` or `before` to page from here.",
        resolve: (e: ConnectionValue["edges"][number]) => e.cursor,
      }),
      node: t.field({
        type: nodeRef,
        description: "The row.",
        resolve: (e: ConnectionValue["edges"][number]) => e.node,
      }),
      ...(edgeFields ? edgeFields(t) : {}),
    }),
  });
  return b.objectRef(`${name}Connection`).implement({
    description: `A page of ${rows} (Relay connection), with the total count and the cursors to page on.`,
    fields: (t) => ({
      totalCount: t.int({
        description: `How many ${rows} match, over all pages (counted only when selected).`,
        resolve: (c: ConnectionValue) => c.totalCount(),
      }),
      pageInfo: t.field({
        type: b.pageInfoRef(),
        description: "Whether more rows come before or after this page, and its cursors.",
        resolve: (c: ConnectionValue) => c.pageInfo,
      }),
      edges: t.field({
        type: [edge],
        complexity: sizedElsewhere,
        description: `The ${rows} of this page with their cursors, in order.`,
        resolve: (c: ConnectionValue) => c.edges,
      }),
      nodes: t.field({
        type: [nodeRef],
        complexity: sizedElsewhere,
        description: `The ${rows} of this page, in order.`,
        resolve: (c: ConnectionValue) => c.nodes,
      }),
    }),
  });
}
