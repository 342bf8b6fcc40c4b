import DataLoader from "dataloader";
import type { FieldNode, GraphQLResolveInfo } from "graphql";
import { queryFromInfo } from "@pothos/plugin-prisma";
import type { Context } from "./context.ts";
import type { ResourceDef } from "../resources/define.ts";
import { byMorphClass } from "../resources/index.ts";
import { pascal } from "./names.ts";

export const TYPE = Symbol("graphqlType");

const delegate = (ctx: Context, model: string) => (ctx.prisma as any)[model.charAt(0).toLowerCase() + model.slice(1)];

/** The request's DataLoader under `key`, made on first use. */
export function loader<K, V>(ctx: Context, key: string, batch: (keys: readonly K[]) => Promise<V[]>) {
  let found = ctx.loaders.get(key) as DataLoader<K, V> | undefined;
  if (!found) {
    // Bounded `IN (...)` lists: a page is at most 100 rows, but a batch response may carry 1000.
    found = new DataLoader<K, V>(batch, { maxBatchSize: 500 });
    ctx.loaders.set(key, found);
  }
  return found;
}

/**
 * Plans of selections that load no relations, by the field nodes graphql-js shares between every row of one
 * execution: planning them again for each row (queryFromInfo, then the loader key) gives the same empty plan. A plan
 * with relations is made per row, as queryFromInfo also records where the rows below find their preloaded relations.
 */
const emptyPlans = new WeakMap<readonly FieldNode[], { query: object; key: string }>();
function plannedOnce(info: GraphQLResolveInfo, plan: () => { query: object; key: string }) {
  let planned = emptyPlans.get(info.fieldNodes);
  if (!planned) {
    planned = plan();
    if (Object.keys(planned.query).length === 0) emptyPlans.set(info.fieldNodes, planned);
  }
  return planned;
}

/**
 * Polymorphic children (`model_type`/`model_id`) of many parents in one query: an image, comments, attachments.
 * The nested selection below the field is planned into the same query.
 */
export function loadMorphChildren(ctx: Context, parent: ResourceDef, target: ResourceDef, one: boolean, parentId: number, info: GraphQLResolveInfo) {
  const { query, key } = plannedOnce(info, () => {
    const query = queryFromInfo({ context: ctx, info, typeName: pascal(target.name) });
    return { query, key: `morph:${parent.name}:${target.name}:${one}:${JSON.stringify(query)}` };
  });
  return loader<number, unknown>(ctx, key, async (ids) => {
    const rows: Array<Record<string, any>> = await delegate(ctx, target.model).findMany({
      ...query,
      where: { accountId: ctx.auth!.accountId, modelType: parent.morphClass, modelId: { in: [...ids] } },
      orderBy: one ? [{ createdAt: "desc" }, { id: "desc" }] : [{ id: "asc" }],
    });
    const grouped = new Map<number, Array<Record<string, any>>>();
    for (const row of rows) {
      const list = grouped.get(row.modelId) ?? [];
      list.push(row);
      grouped.set(row.modelId, list);
    }
    return ids.map((id) => (one ? (grouped.get(id)?.[0] ?? null) : (grouped.get(id) ?? [])));
  }).load(parentId);
}

/** The owner of a polymorphic row, batched per owner type; tagged with its GraphQL type for the union. */
export function loadMorphOwner(ctx: Context, relation: string, modelType: string | null, modelId: number | null, info: GraphQLResolveInfo) {
  const owner = modelType ? byMorphClass.get(modelType) : undefined;
  if (!owner || modelId == null) return null;
  const typeName = pascal(owner.name);
  const query = queryFromInfo({ context: ctx, info, typeName });
  const key = `owner:${relation}:${owner.name}:${JSON.stringify(query)}`;
  return loader<number, unknown>(ctx, key, async (ids) => {
    const rows: Array<Record<string, any>> = await delegate(ctx, owner.model).findMany({
      ...query,
      where: { accountId: ctx.auth!.accountId, id: { in: [...ids] } },
    });
    const byId = new Map(rows.map((r) => [r.id, Object.assign(r, { [TYPE]: typeName })]));
    return ids.map((id) => byId.get(id) ?? null);
  }).load(modelId);
}
