import { ApiError, notFound } from "../../core/errors.ts";
import { camel } from "../../core/names.ts";
import { findOwned, owned } from "../../data/access.ts";
import * as link from "../../data/links.ts";
import type { StoreReads } from "../../db/store.ts";
import type { Context } from "../../request/context.ts";
import { isOneToOne, pivotOf as pivotOfOp, type Operation } from "../../resources/operations.ts";

/*
 * What the operation kinds' modules share: the arguments' row ids, a nested route's row, and the one way a field
 * error's path is renamed.
 */

export type Args = Record<string, any>;
export type Row = Record<string, any>;
/** The REST facade's root fields and their types: served to REST documents only (the internal graph). */
export const INTERNAL = { subGraphs: ["internal"] };

/** The pivot of an operation known to be many-to-many. */
export const pivotOf = (op: Operation) => pivotOfOp(op)!;
/** The id of the row a single-row REST facade field addresses (its route's last `{param}`). */
export const idArg = (op: Operation, a: Args) => a[op.parent ? op.parent.route.param : op.def.param] as number | null | undefined;

/** Columns that tie a child row to its parent on a has-many or polymorphic route. */
export function childKeys(op: Operation, parent: Row): Row {
  const { def, relation } = op.parent!;
  if (relation.kind === "hasMany") return { [relation.foreignKey]: parent.id };
  if (relation.kind === "morphOne" || relation.kind === "morphMany") return { modelType: def.morphClass, modelId: parent.id };
  throw new Error(`${op.field}: no child keys for a ${relation.kind} relation`);
}

/** The one related row a nested single-row route addresses (parent `parentId`, related `id`), or 404. */
export async function nestedRowOf(op: Operation, parentId: number, id: number | null | undefined, ctx: Context, tx: StoreReads, query: object = {}) {
  const { def, relation } = op.parent!;
  const parent = await findOwned(ctx, tx, def, parentId);
  if (relation.kind === "belongsTo") {
    const current = parent[relation.foreignKey] as number | null;
    if (current == null || (id != null && id !== current)) throw notFound();
    return { parent, row: await findOwned(ctx, tx, op.def, current, query) };
  }
  if (relation.kind === "belongsToMany") {
    if (id == null) throw notFound();
    return { parent, row: await link.findLink(tx, pivotOf(op), parent.id, id, query) };
  }
  const oneToOne = isOneToOne(op);
  const row = await tx.findFirst(op.def.model, {
    ...query,
    where: owned(ctx, op.def, { ...childKeys(op, parent), ...(oneToOne ? {} : { id: id ?? -1 }) }),
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
  });
  if (!row || (id != null && id !== row.id)) throw notFound();
  return { parent, row };
}

/** The same row, addressed by a REST facade field's arguments. */
export const nestedRow = (op: Operation, a: Args, ctx: Context, tx: StoreReads, query: object = {}) =>
  nestedRowOf(op, a[op.parent!.def.param], idArg(op, a), ctx, tx, query);

/**
 * The GraphQL input paths of a batch item's field errors, where REST keys them otherwise: REST names an updated item
 * by its id and a field without `input` (`resources.7.name`), GraphQL by the item's position (`resources.1.input.name`).
 */
export const inputPathsOf = new WeakMap<ApiError, Record<string, string[]>>();

/** A snake_case field path as GraphQL names it (`resources.0.pivot.unit_id` → `resources.0.pivot.unitId`). */
export const camelPath = (key: string) => key.split(".").map(camel).join(".");

/**
 * The one way a field error's paths are renamed: an error with field errors becomes the same error (code, message,
 * messages) keyed by `rename(key)`; when `graphqlPath` is given, the GraphQL input paths are registered beside it
 * (`inputPathsOf`), for an error whose own keys stay REST's. Any other error is passed on as it is.
 */
export function renameFieldErrors(error: unknown, rename: (key: string) => string, graphqlPath?: (key: string) => string): unknown {
  if (!(error instanceof ApiError) || !error.fieldErrors) return error;
  const entries = Object.entries(error.fieldErrors);
  const renamed = new ApiError(error.code, error.message, Object.fromEntries(entries.map(([k, v]) => [rename(k), v])));
  if (graphqlPath) inputPathsOf.set(renamed, Object.fromEntries(entries.map(([k, v]) => [graphqlPath(k), v])));
  return renamed;
}

/** `work`, its field errors renamed as `renameFieldErrors` does. */
export const renamingErrors = <T>(work: Promise<T>, rename: (key: string) => string, graphqlPath?: (key: string) => string) =>
  work.catch((e) => Promise.reject(renameFieldErrors(e, rename, graphqlPath)));
