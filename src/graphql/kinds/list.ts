import type { GraphQLResolveInfo } from "graphql";
import { queryFromInfo } from "@pothos/plugin-prisma";
import type { Operation } from "../../resources/operations.ts";
import { pivotOf as pivotOfOp } from "../../resources/operations.ts";
import { resourceDescription } from "../../resources/descriptions.ts";
import { pascal, pluralWords as plural } from "../../core/names.ts";
import { findOwned, findPage, guard, owned, pageArgs } from "../../data/access.ts";
import { searchQuery } from "../../data/search.ts";
import { hasForeignKey } from "../../data/independent-writes.ts";
import { dynamic } from "../pothos-dynamic.ts";
import type { Context } from "../../request/context.ts";
import { baseOrder, columnOf, pageType } from "../objects.ts";
import {
  CONNECTION_PATHS,
  connectionArgs,
  connectionOf,
  cursorSelection,
  planPage,
  selectedNames,
  type ConnectionArgs,
} from "../connections.ts";
import { registerRootField } from "../relation-scopes.ts";
import {
  childKeys,
  intArg,
  INTERNAL,
  nullableIntArg,
  rowsDef,
  rowsQuery,
  type Args,
  type FacadeKind,
  type PublicParts,
  type Row,
  parentVerb,
} from "./shared.ts";

/*
 * The list kinds: `list` (`GET /ranks`) and `search` (`POST /ranks/search`), one page of rows. A search runs its
 * list's field, with the search arguments, so the two share it. In the public graph a top-level list, and a view's,
 * is a connection (`ranks(first:, where:, orderBy:)`, `roster`); a search has no field of its own there.
 */

/**
 * The rows a list operation reads before search conditions: model, base filter and default order. Under a parent,
 * `parentUnread` is set when the parent was not read: a child with a foreign key to its parent exists only under a
 * parent of its own account, so a page with rows shows the parent is there, and the caller reads the parent (a 404
 * when it is not the caller's) only when the page comes back empty. One statement fewer for every page that has rows.
 */
interface ListScope {
  model: string;
  where: Row;
  orderBy: Record<string, unknown>[];
  parentUnread?: () => Promise<unknown>;
}
async function listScope(op: Operation, a: Args, ctx: Context): Promise<ListScope> {
  if (op.view)
    return { model: op.def.model, where: owned(ctx, op.def, op.view.where?.(ctx) ?? {}), orderBy: op.def.orderBy };
  if (!op.parent) return { model: op.def.model, where: owned(ctx, op.def), orderBy: op.def.orderBy };
  const parentId = intArg(a, op.parent.def.param);
  const readParent = () =>
    findOwned(ctx, ctx.store, op.parent!.def, parentId, { select: { id: true } }, parentVerb(op));
  const rel = op.parent.relation;
  const filter = "filter" in rel ? rel.filter?.where : undefined;
  const unread =
    rel.kind === "hasMany" &&
    Number.isSafeInteger(parentId) &&
    parentId > 0 &&
    hasForeignKey(op.def.model, rel.foreignKey, op.parent.def.model);
  const parent = unread ? { id: parentId } : await readParent();
  if (rel.kind === "belongsToMany")
    return {
      model: rel.pivot.model,
      where: { ...filter, [rel.pivot.parentKey]: parent.id },
      orderBy: rel.pivot.orderBy ?? [],
    };
  const orderBy = rel.kind === "hasMany" ? (rel.orderBy ?? op.def.orderBy) : op.def.orderBy;
  return {
    model: op.def.model,
    where: owned(ctx, op.def, { ...filter, ...childKeys(op, parent) }),
    orderBy,
    ...(unread ? { parentUnread: readParent } : {}),
  };
}

export async function resolvePage(op: Operation, a: Args, ctx: Context, query: object) {
  guard(ctx, op.scopes);
  const page = pageArgs(ctx, nullableIntArg(a, "page"), nullableIntArg(a, "limit"));
  const search = await searchQuery(ctx, op.def, a, pivotOfOp(op));
  const { model, where, orderBy, parentUnread } = await listScope(op, a, ctx);
  const found = await findPage(
    ctx,
    model,
    search.where ? { AND: [where, search.where] } : where,
    [...search.orderBy, ...orderBy],
    page,
    query,
  );
  if (parentUnread && found.nodes.length === 0) await parentUnread();
  return found;
}

const list: FacadeKind = {
  ofView: () => "A page at a time.",
  alsoRoutes: (op) => (!op.view ? ` (and POST ${op.path}/search)` : ""),
  summary: (_op, w) =>
    `The ${w.rows}${w.of}, a page at a time; \`filters\`, \`sort\`, \`scopes\` and \`search\` narrow and order them. ${w.what}`,
  args: (t, op, made, w) => ({
    page: t.arg.int({ description: "The page to read, from 1 (default 1)." }),
    limit: t.arg.int({
      description: "Rows per page: the server's default page size when omitted, never more than its maximum.",
    }),
    ...(!op.view
      ? {
          filters: t.arg({
            type: [made.filterInput],
            description: `Conditions the ${w.rows} must meet (PERSCOM's search filters).`,
          }),
          sort: t.arg({ type: [made.sortInput], description: "Sort keys, before the default order." }),
          scopes: t.arg({ type: [made.scopeInput], description: "Named filters to apply, all of them." }),
          search: t.arg({ type: made.searchInput, description: "Text to look for in the searchable columns." }),
        }
      : {}),
  }),
  field: (t, op, p) =>
    t.field({
      ...INTERNAL,
      type: pageType(p.builder, p.refs, rowsDef(op)),
      args: p.args,
      description: p.description,
      nullable: true,
      resolve: (_root: unknown, a: Args, ctx: Context, info: GraphQLResolveInfo) =>
        resolvePage(op, a, ctx, rowsQuery(ctx, info, "nodes")),
    }),
};

// ---- The public graph: `ranks(first:, after:, where:, orderBy:)`, and a view's connection (`roster`) ----

/** A top-level list's connection, or a view's (the rows its `where` leaves); `me` is the public graph's own field. */
function publicList(p: PublicParts, op: Operation) {
  const { def, view, field: name, scopes } = op;
  if (view?.field === "me") return;
  const text = view
    ? (view.description ?? resourceDescription(def))
    : `The ${plural(def)} of the account, a page at a time (a connection). ${resourceDescription(def)}`;
  const base = baseOrder(def.orderBy, columnOf(def));
  const b = dynamic(p.builder);
  b.queryField(name, (t) =>
    t.field({
      // Nullable: a list that fails (a bad argument, a missing scope) leaves the other root fields' data standing.
      type: p.refs.connectionOf(def),
      nullable: true,
      args: connectionArgs(t, p.refs.filters, def, plural(def)),
      description: p.withRoute(text, op, ` (and POST ${op.path}/search)`),
      resolve: async (_root: unknown, args: ConnectionArgs, ctx: Context, info: GraphQLResolveInfo) => {
        guard(ctx, scopes);
        const plan = planPage(ctx, def, args, base);
        const own = owned(ctx, def, view?.where?.(ctx) ?? {});
        const query = queryFromInfo({
          context: ctx,
          info,
          typeName: pascal(def.name),
          paths: CONNECTION_PATHS,
          select: cursorSelection(plan, selectedNames(info)) as never,
        }) as Row;
        const rows = await ctx.store.findMany(def.model, {
          ...query,
          where: { AND: [own, ...plan.where] },
          orderBy: plan.orderBy,
          take: plan.take,
          skip: plan.skip || undefined,
        });
        let counted: Promise<number> | null = null;
        return connectionOf(
          rows,
          plan,
          () => (counted ??= ctx.store.count(def.model, { where: { AND: [own, ...plan.filter] } })),
        );
      },
    }),
  );
  registerRootField(name, { scopes, def });
}

export const listKinds = {
  list: { ...list, addPublic: publicList },
  search: { ...list, alsoRoutes: undefined },
} satisfies Record<"list" | "search", FacadeKind>;
