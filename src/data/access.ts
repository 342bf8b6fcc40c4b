import type { Context } from "../request/context.ts";
import type { ResourceDef } from "../resources/define.ts";
import { ApiError, notFound, validationError } from "../core/errors.ts";
import { rememberName, rememberRow, tracksRows } from "../db/transaction-names.ts";
import type { StoredRow } from "../db/models-by-name.ts";
import type { StoreReads } from "../db/store-reads.ts";

/** Fails unless the request is authenticated, subscribed and holds every scope (or `*`). */
export function guard(ctx: Context, scopes: readonly string[]): number {
  if (!ctx.auth) throw ctx.authFailure ?? new ApiError("UNAUTHENTICATED");
  if (!ctx.auth.scopes.has("*") && scopes.some((s) => !ctx.auth!.scopes.has(s))) throw new ApiError("FORBIDDEN");
  return ctx.auth.accountId;
}

/** The account predicate: every root query of a resource goes through this. */
export const owned = (ctx: Context, def: ResourceDef, where: Record<string, unknown> = {}) =>
  def.link ? where : { ...where, accountId: ctx.auth!.accountId };

/** The row `id` of `def` in the caller's account, read through `reads` (the store, or a transaction); 404 when there is none. */
export async function findOwned(
  ctx: Context,
  reads: StoreReads,
  def: ResourceDef,
  id: number,
  query: object = {},
): Promise<StoredRow> {
  const row = await reads.findFirst(def.model, { ...query, where: owned(ctx, def, { id }) });
  if (!row) throw notFound();
  rememberName(reads, def.model, row);
  if (Object.keys(query).length === 0) rememberRow(reads, def.model, row);
  return row;
}

/** What a write reads of a row it refers to: its key, and its name where it has one (for a headline). */
export const keyAndName = (def: ResourceDef) => ({
  select: "name" in def.fields ? { id: true, name: true } : { id: true },
});

/**
 * The parent row `id` of `def` a write in `tx` goes under; 404 when there is none. Every column where the transaction
 * remembers whole rows for its updates' events (`trackRows`: a hook's update of the parent then reads it no more), else
 * only what `keyAndName` reads.
 */
export const findParent = (ctx: Context, tx: StoreReads, def: ResourceDef, id: number) =>
  findOwned(ctx, tx, def, id, tracksRows(tx) ? {} : keyAndName(def));

export interface Page<T = unknown> {
  nodes: T[];
  /** The number of rows the page is cut from (REST's `meta.total`), read with the page (`Store.findPage`). */
  totalCount: () => Promise<number>;
  page: number;
  perPage: number;
}

export function pageArgs(ctx: Context, page?: number | null, limit?: number | null) {
  const perPage = Math.min(limit ?? ctx.config.defaultPageSize, ctx.config.maxPageSize);
  const current = page ?? 1;
  if (!Number.isInteger(current) || current < 1)
    throw new ApiError("VALIDATION", "The page must be at least 1.", { page: ["The page must be at least 1."] });
  if (!Number.isInteger(perPage) || perPage < 1)
    throw new ApiError("VALIDATION", "The limit must be at least 1.", { limit: ["The limit must be at least 1."] });
  return { page: current, perPage };
}

/** Ties are broken by id so that paging never skips or repeats a row. */
export function stableOrder(orderBy: Record<string, unknown>[] = []) {
  return orderBy.some((o) => "id" in o) ? orderBy : [...orderBy, { id: "asc" as const }];
}

export async function findPage(
  ctx: Context,
  model: string,
  where: object,
  orderBy: Record<string, unknown>[],
  page: { page: number; perPage: number },
  query: object,
): Promise<Page> {
  const { rows, total } = await ctx.store.findPage(model, {
    ...query,
    where,
    orderBy: stableOrder(orderBy),
    skip: (page.page - 1) * page.perPage,
    take: page.perPage,
  });
  return { nodes: rows, totalCount: () => Promise.resolve(total), ...page };
}

/** Lists of items a request works through are capped: one request must not hold a transaction for unbounded work. */
export function capped<T>(ctx: Context, items: T[], field = "resources"): T[] {
  if (items.length > ctx.config.batchMaxItems) {
    throw validationError({
      [field]: [`The ${field} field must not have more than ${ctx.config.batchMaxItems} items.`],
    });
  }
  return items;
}

/** A Prisma select: a column's `true`, a relation's query (`{ select?, where?, ... }`). */
type Selection = Record<string, unknown>;
type Query = { select?: object };

/** Two Prisma selects of the same rows as one: columns of both, relations merged down. */
export function mergeSelect(a: Selection, b: Selection): Selection {
  const out: Selection = { ...a };
  for (const [key, value] of Object.entries(b)) {
    const mine = out[key];
    if (value === true) out[key] = mine ?? true;
    else if (mine === undefined || mine === true) out[key] = value;
    else out[key] = withColumns(mine as Query, ((value as Query).select ?? {}) as Selection);
  }
  return out;
}

/**
 * A query that also reads these columns: a select-mode query (a client's selection) names its columns and may leave
 * out the ones the caller reads itself; an include-mode query reads them all already.
 */
export const withColumns = <Q extends Query>(query: Q, select: Selection): Q =>
  query.select ? { ...query, select: mergeSelect(query.select as Selection, select) } : query;
