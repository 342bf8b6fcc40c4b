import type { Auth, Context } from "../request/context.ts";
import type { ResourceDef } from "../resources/define.ts";
import { ApiError, notFound, validationError } from "../core/errors.ts";
import { snake } from "../core/names.ts";
import { isPublishableScope } from "../resources/publishable.ts";
import { rememberName, rememberRow, tracksRows } from "../db/transaction-names.ts";
import type { StoredRow } from "../db/models-by-name.ts";
import type { StoreReads } from "../db/store-reads.ts";
import {
  selfServiceRights,
  type SelfServiceLink,
  type SelfServiceRight,
  type Where,
} from "../resources/self-service.ts";

/** The person a credential signs in as (an SSO token, a person's access token), who has the self-service rights. */
const personOf = (auth: Auth | null): number | null =>
  auth && (auth.kind === "sso" || auth.kind === "oauth") ? auth.userId : null;

/**
 * Whether the caller holds `scope` outright: `*`, or the scope itself. A publishable key holds only the scopes a
 * public page may (src/resources/publishable.ts), whatever its row says: authentication drops the others, and this
 * refuses them again, so that no path reading the scopes reaches, say, webhooks with a key edited in the database.
 */
const holdsOutright = (auth: Auth, scope: string) =>
  auth.kind === "publishable"
    ? auth.scopes.has(scope) && isPublishableScope(scope)
    : auth.scopes.has("*") || auth.scopes.has(scope);

/**
 * Whether the caller may not see the fields the registry marks `private` (a person's email, notes...): a publishable
 * key, whatever its scopes. REST leaves them out of the attributes, GraphQL answers them `null` with `FORBIDDEN`, and
 * filters and sorts on them are refused (`privateFieldRefusal`).
 */
export const hidesPrivate = (auth: Auth | null): boolean => auth?.kind === "publishable";

/** Why a filter or sort on a private field is refused to a publishable key. */
export const privateFieldRefusal = (field: string): string =>
  `The ${field} field is private: a publishable key cannot filter or sort on it.`;

/** Fails for a publishable key: what the caller reaches is no public page's (the change feed, subscriptions). */
export function refusePublishable(ctx: Context, what: string): void {
  if (ctx.auth?.kind === "publishable") throw new ApiError("FORBIDDEN", `A publishable key cannot read ${what}.`);
}

/**
 * Whether the caller holds `scope`, outright or (a person) as far as a self-service right reaches. A right to write
 * counts only where the caller says so (`writes`): a create or an update of one row, whose input and row the write
 * path checks against the right (`selfServiceInput`); never a batch, a link or a command under the same scope
 * (`update:user` lets a person rename themselves, not attach themselves a role).
 */
export function holds(auth: Auth, scope: string, writes = false): boolean {
  if (holdsOutright(auth, scope)) return true;
  if (personOf(auth) == null || !(scope in selfServiceRights)) return false;
  return scope.startsWith("view:") || (writes && !!selfServiceRights[scope].fields);
}

/** What a person's link operation must keep to: the links of the self-service rights its unheld scopes stand in for. */
export function selfServiceLinks(
  auth: Auth | null,
  scopes: readonly string[],
  parent: string,
  field: string,
  kind: string,
): { me: number; links: SelfServiceLink[] } | null {
  const me = personOf(auth);
  if (me == null || !auth) return null;
  const links: SelfServiceLink[] = [];
  for (const scope of scopes) {
    if (holdsOutright(auth, scope) || scope.startsWith("view:")) continue;
    const found = selfServiceRights[scope]?.links?.find(
      (l) => l.parent === parent && l.field === field && (l.kinds as readonly string[]).includes(kind),
    );
    if (!found) return null;
    links.push(found);
  }
  return links.length ? { me, links } : null;
}

/** Fails unless a link operation through self-service rights keeps to them: the person's own parent, or only them linked. */
export function checkSelfServiceLinks(
  through: { me: number; links: SelfServiceLink[] },
  parentId: number,
  linked: readonly number[],
  columns: Record<string, unknown> | undefined,
): void {
  for (const l of through.links) {
    if (l.who === "parent" && parentId !== through.me) throw notFound();
    if (l.who === "items" && linked.some((id) => id !== through.me))
      throw new ApiError("FORBIDDEN", "You may link only yourself here (your own like).");
    const refused = Object.keys(columns ?? {}).filter((c) => !(l.columns ?? []).includes(c));
    if (refused.length)
      throw new ApiError(
        "FORBIDDEN",
        `You may change only ${(l.columns ?? []).map(snake).join(", ") || "nothing"} here: not ${refused.map(snake).join(", ")}.`,
      );
  }
}

/** The self-service right `scope` is held through, with the person; null when it is held outright (or not at all). */
export function selfServiceOf(auth: Auth | null, scope: string): { me: number; right: SelfServiceRight } | null {
  const me = personOf(auth);
  if (me == null || holdsOutright(auth!, scope)) return null;
  const right = selfServiceRights[scope];
  return right ? { me, right } : null;
}

/** The rows of `def` a self-service right limits the caller to for `verb`, or null for no such limit. */
export function selfServiceRows(auth: Auth | null, def: ResourceDef, verb: ScopeVerb = "view"): Where | null {
  if (def.link) return null;
  const through = selfServiceOf(auth, `${verb}:${def.scope}`);
  return through?.right.rows?.(through.me) ?? null;
}

export type ScopeVerb = "view" | "create" | "update" | "delete";

/**
 * Fails unless the caller holds every scope outright (`*` or the scopes themselves): where what is read cannot be
 * narrowed to a person's own rows, such as a stream of every change of a resource.
 */
export function guardOutright(ctx: Context, scopes: readonly string[]): number {
  if (!ctx.auth) throw ctx.authFailure ?? new ApiError("UNAUTHENTICATED");
  if (scopes.some((s) => !holdsOutright(ctx.auth!, s))) throw new ApiError("FORBIDDEN");
  return ctx.auth.accountId;
}

/**
 * Fails unless the request is authenticated, subscribed and holds every scope (or `*`, or a self-service right: one
 * to write only for a single-row create or update, `selfServiceWrites`).
 */
export function guard(ctx: Context, scopes: readonly string[], selfServiceWrites = false): number {
  if (!ctx.auth) throw ctx.authFailure ?? new ApiError("UNAUTHENTICATED");
  if (scopes.some((s) => !holds(ctx.auth!, s, selfServiceWrites))) throw new ApiError("FORBIDDEN");
  return ctx.auth.accountId;
}

/**
 * The account predicate, narrowed to a person's own rows where `verb` (the operation's, on this resource) is held only
 * through a self-service right: every root query of a resource goes through this. No verb: the account's rows (a
 * parent looked up for an operation that does not read it).
 */
export function owned(
  ctx: Context,
  def: ResourceDef,
  where: Record<string, unknown> = {},
  verb: ScopeVerb | null = "view",
) {
  if (def.link) return where;
  const account: Record<string, unknown> = { ...where, accountId: ctx.auth!.accountId };
  const limit = verb && selfServiceRows(ctx.auth, def, verb);
  if (!limit) return account;
  const and = account.AND === undefined ? [] : Array.isArray(account.AND) ? account.AND : [account.AND];
  return { ...account, AND: [...(and as unknown[]), limit] };
}

/** The row `id` of `def` in the caller's account, read through `reads` (the store, or a transaction); 404 when there is none. */
export async function findOwned(
  ctx: Context,
  reads: StoreReads,
  def: ResourceDef,
  id: number,
  query: object = {},
  verb: ScopeVerb | null = "view",
): Promise<StoredRow> {
  const row = await reads.findFirst(def.model, { ...query, where: owned(ctx, def, { id }, verb) });
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
  findOwned(ctx, tx, def, id, tracksRows(tx) ? {} : keyAndName(def), null);

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

/**
 * A write through a self-service right: only the right's fields, with its `sets` put in, and (an update) only of a row
 * its `rows` reach; the input as it is when the caller holds the scope outright.
 */
export async function selfServiceInput(
  ctx: Context,
  reads: StoreReads,
  def: ResourceDef,
  input: Record<string, unknown>,
  existing: Record<string, unknown> | undefined,
): Promise<Record<string, unknown>> {
  if (def.link) return input;
  const through = selfServiceOf(ctx.auth, `${existing ? "update" : "create"}:${def.scope}`);
  if (!through) return input;
  const { me, right } = through;
  const allowed = new Set(right.fields ?? []);
  const sets = right.sets?.(me) ?? {};
  // A column the right sets may be sent as what it sets it to (`user_id` of one's own submission).
  const refused = Object.keys(input).filter(
    (key) => input[key] !== undefined && !allowed.has(key) && !(key in sets && input[key] === sets[key]),
  );
  if (refused.length) {
    throw new ApiError(
      "FORBIDDEN",
      `Your own ${def.label.toLowerCase()} is all you may change here, and only its ${[...allowed].map(snake).join(", ")}: ` +
        `not ${refused.map(snake).join(", ")}.`,
    );
  }
  const limit = right.rows?.(me);
  if (existing && limit && !(await reads.count(def.model, { where: { id: existing.id, AND: [limit] } })))
    throw notFound();
  return { ...input, ...sets };
}
