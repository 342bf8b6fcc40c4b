import { loader, type KeyedLoader } from "../core/loader.ts";
import { brandWithType } from "@pothos/core";
import type { FieldNode, GraphQLResolveInfo } from "graphql";
import { queryFromInfo } from "@pothos/plugin-prisma";
import type { Context } from "../request/context.ts";
import type { ResourceDef } from "../resources/define.ts";
import { byMorphClass } from "../resources/index.ts";
import { pascal } from "../core/names.ts";
import { CONNECTION_PATHS, cursorSelection, type PagePlan } from "./connections.ts";
import { withColumns } from "../data/access.ts";
import { fixedPlan } from "./fixed-plans.ts";
import type { Row } from "./pothos-dynamic.ts";

export const TYPE = Symbol("graphqlType");

/**
 * Plans of selections that load no relations, by the field nodes graphql-js shares between every row of one
 * execution: planning them again for each row (queryFromInfo, then the loader key) gives the same empty plan. A plan
 * with relations is made per row on graphql-js, as queryFromInfo also records where the rows below find their
 * preloaded relations; the planned executor (planned-execution.ts) needs no such record and passes one resolve info
 * for every row of a field, so a plan is also kept by its info.
 */
const emptyPlans = new WeakMap<readonly FieldNode[], { query: object; key: string }>();
const plansByInfo = new WeakMap<GraphQLResolveInfo, { query: object; key: string }>();
const knownPlan = (info: GraphQLResolveInfo) => emptyPlans.get(info.fieldNodes) ?? plansByInfo.get(info);
function remember(info: GraphQLResolveInfo, planned: { query: object; key: string }) {
  if (Object.keys(planned.query).length === 0) emptyPlans.set(info.fieldNodes, planned);
  else plansByInfo.set(info, planned);
  return planned;
}

/**
 * Polymorphic children (`model_type`/`model_id`) of many parents in one query: an image, comments, attachments.
 * The nested selection below the field is planned into the same query.
 */
export function loadMorphChildren(
  ctx: Context,
  parent: ResourceDef,
  target: ResourceDef,
  one: boolean,
  parentId: number,
  info: GraphQLResolveInfo,
) {
  // Called for every parent row: what is already planned and made is looked up before anything is allocated.
  const { query, key } =
    knownPlan(info) ??
    remember(
      info,
      fixedPlan(info, "morph", () => morphChildrenPlan(ctx, parent, target, one, info)),
    );
  return (
    (ctx.loaders.get(key) as KeyedLoader<number, unknown> | undefined) ??
    morphChildrenLoader(ctx, key, query, parent, target, one)
  ).load(parentId);
}

function morphChildrenPlan(
  ctx: Context,
  parent: ResourceDef,
  target: ResourceDef,
  one: boolean,
  info: GraphQLResolveInfo,
) {
  const query = queryFromInfo({ context: ctx, info, typeName: pascal(target.name) });
  return { query, key: `morph:${parent.name}:${target.name}:${one}:${JSON.stringify(query)}` };
}

function morphChildrenLoader(
  ctx: Context,
  key: string,
  query: object,
  parent: ResourceDef,
  target: ResourceDef,
  one: boolean,
) {
  return loader<number, unknown>(ctx, key, async (ids) => {
    const rows: Row[] = await ctx.store.findMany(target.model, {
      ...withColumns(query, { modelId: true }),
      where: { accountId: ctx.auth!.accountId, modelType: parent.morphClass, modelId: { in: [...ids] } },
      orderBy: one ? [{ createdAt: "desc" }, { id: "desc" }] : [{ id: "asc" }],
    });
    const grouped = new Map<number, Row[]>();
    for (const row of rows) {
      const list = grouped.get(row.modelId as number) ?? [];
      list.push(row);
      grouped.set(row.modelId as number, list);
    }
    return ids.map((id) => (one ? (grouped.get(id)?.[0] ?? null) : (grouped.get(id) ?? [])));
  });
}

/** The owner of a polymorphic row, batched per owner type; tagged with its GraphQL type for the union. */
export function loadMorphOwner(
  ctx: Context,
  relation: string,
  modelType: string | null,
  modelId: number | null,
  info: GraphQLResolveInfo,
) {
  const owner = modelType ? byMorphClass.get(modelType) : undefined;
  if (!owner || modelId == null) return null;
  const typeName = pascal(owner.name);
  const query = queryFromInfo({ context: ctx, info, typeName });
  const key = `owner:${relation}:${owner.name}:${JSON.stringify(query)}`;
  return loader<number, unknown>(ctx, key, async (ids) => {
    const rows: Row[] = await ctx.store.findMany(owner.model, {
      ...query,
      where: { accountId: ctx.auth!.accountId, id: { in: [...ids] } },
    });
    const byId = new Map(
      rows.map((r) => [r.id, (brandWithType(r, typeName as never), Object.assign(r, { [TYPE]: typeName }))]),
    );
    return ids.map((id) => byId.get(id) ?? null);
  }).load(modelId);
}

/**
 * How many rows of `model` each parent has (`foreignKey` = parent id) under `where`: one grouped count for every
 * parent of the request that asks with the same conditions.
 */
export function countChildren(ctx: Context, model: string, foreignKey: string, where: object[], parentId: number) {
  const key = `count:${model}:${foreignKey}:${JSON.stringify(where)}`;
  return loader<number, number>(ctx, key, async (ids) => {
    const groups: Row[] = await ctx.store.groupBy(model, {
      by: [foreignKey],
      where: { AND: [{ [foreignKey]: { in: [...ids] } }, ...where] },
      _count: { _all: true },
    });
    const counts = new Map(groups.map((g) => [g[foreignKey] as number, Number((g._count as { _all: number })._all)]));
    return ids.map((id) => counts.get(id) ?? 0);
  }).load(parentId);
}

/** The polymorphic children of many parents counted in one grouped statement. */
export function countMorphChildren(
  ctx: Context,
  parent: ResourceDef,
  target: ResourceDef,
  where: object[],
  parentId: number,
) {
  return countChildren(
    ctx,
    target.model,
    "modelId",
    [{ accountId: ctx.auth!.accountId, modelType: parent.morphClass }, ...where],
    parentId,
  );
}

function morphPagePlan(ctx: Context, parent: ResourceDef, target: ResourceDef, info: GraphQLResolveInfo) {
  const query = queryFromInfo({ context: ctx, info, typeName: pascal(target.name), paths: CONNECTION_PATHS });
  return { query, key: `morphPage:${parent.name}:${target.name}:${JSON.stringify(query)}` };
}

/**
 * One page of polymorphic children for each of many parents, in one statement: every parent's matching children are
 * read in the page's order and cut per parent here (the rows a parent has beyond its page count against the budget).
 */
export function loadMorphPage(
  ctx: Context,
  parent: ResourceDef,
  target: ResourceDef,
  parentId: number,
  plan: PagePlan,
  info: GraphQLResolveInfo,
) {
  const { query, key } = knownPlan(info) ?? remember(info, morphPagePlan(ctx, parent, target, info));
  return loader<number, Row[]>(
    ctx,
    `${key}:${JSON.stringify([plan.where, plan.orderBy, plan.skip, plan.take])}`,
    async (ids) => {
      const rows: Row[] = await ctx.store.findMany(target.model, {
        ...withColumns(query, { modelId: true, ...cursorSelection(plan) }),
        where: {
          AND: [
            { accountId: ctx.auth!.accountId, modelType: parent.morphClass, modelId: { in: [...ids] } },
            ...plan.where,
          ],
        },
        orderBy: plan.orderBy,
      });
      const grouped = new Map<number, Row[]>();
      for (const row of rows) {
        const list = grouped.get(row.modelId as number) ?? [];
        if (list.length < plan.skip + plan.take) list.push(row);
        grouped.set(row.modelId as number, list);
      }
      return ids.map((id) => (grouped.get(id) ?? []).slice(plan.skip));
    },
  ).load(parentId);
}
