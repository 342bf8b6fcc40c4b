import type { ActionDef, CommandDef, NestedRoute, OperationKind, RowKind, PivotDef, RelationDef, ResourceDef, ViewDef } from "./define.ts";
import { resourceNamed, resources } from "./index.ts";
import { changeEvents } from "./change-events.ts";
import { camel, pascal } from "../core/names.ts";

/**
 * What an operation answers: one row, a page of rows, a page or list of link rows (many-to-many),
 * a list of rows (batch), or the ids a link operation changed.
 */
export type Returns = "object" | "objects" | "page" | "link" | "linkPage" | "links" | "changes" | "status" | "feed";

/** One API operation: a GraphQL root field, and the REST route that executes it. */
export interface Operation {
  field: string;
  kind: OperationKind;
  root: "query" | "mutation";
  /** Resource whose rows are returned or written (the related one on nested routes). */
  def: ResourceDef;
  parent?: { def: ResourceDef; relation: RelationDef; route: NestedRoute };
  view?: ViewDef;
  command?: CommandDef;
  /** An action's declaration, and the resource whose row it acts on (`def` is the resource of the row it answers). */
  action?: ActionDef;
  subject?: ResourceDef;
  returns: Returns;
  scopes: string[];
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** REST path below `/{version}`, with `{param}` segments. */
  path: string;
  /** Allowed REST `include` values. */
  includes: string[];
}

const methodOf: Record<OperationKind, Operation["method"]> = {
  list: "GET", show: "GET", create: "POST", update: "PATCH", delete: "DELETE", search: "POST",
  batchCreate: "POST", batchUpdate: "PATCH", batchDelete: "DELETE", associate: "POST", dissociate: "DELETE",
  attach: "POST", detach: "DELETE", sync: "PATCH", toggle: "PATCH", pivot: "PATCH", command: "POST", action: "POST", feed: "GET",
};
const ability: Record<OperationKind, string> = {
  list: "view", show: "view", create: "create", update: "update", delete: "delete", search: "view",
  batchCreate: "create", batchUpdate: "update", batchDelete: "delete", associate: "update", dissociate: "update",
  attach: "update", detach: "update", sync: "update", toggle: "update", pivot: "update", command: "update", action: "update", feed: "view",
};
const reads = new Set<OperationKind>(["list", "show", "search"]);
const linkChanges = new Set<OperationKind>(["attach", "detach", "sync", "toggle", "pivot"]);
const batches = new Set<OperationKind>(["batchCreate", "batchUpdate", "batchDelete"]);

// `search` runs its list's GraphQL field with filters, so the two routes share one field.
function topLevel(def: ResourceDef, kind: RowKind): Operation {
  const Plural = pascal(def.plural);
  const field = ({ list: def.plural, show: def.name, search: def.plural } as Partial<Record<OperationKind, string>>)[kind]
    ?? (batches.has(kind) ? `${kind}${Plural}` : `${kind}${pascal(def.name)}`);
  const suffix = ({ list: "", create: "", search: "/search", batchCreate: "/batch", batchUpdate: "/batch", batchDelete: "/batch" } as Partial<
    Record<OperationKind, string>
  >)[kind] ?? `/{${def.param}}`;
  return {
    field, kind, def, root: reads.has(kind) ? "query" : "mutation",
    returns: kind === "list" || kind === "search" ? "page" : batches.has(kind) ? "objects" : "object",
    scopes: [`${ability[kind]}:${def.scope}`], method: methodOf[kind], path: `/${def.path}${suffix}`, includes: def.includes,
  };
}

function viewOperation(def: ResourceDef, view: ViewDef, kind: "list" | "show"): Operation {
  return {
    field: kind === "list" ? view.field : `${view.field}Item`, kind, def, view, root: "query", returns: kind === "list" ? "page" : "object",
    scopes: view.scopes, method: "GET", path: `/${view.path}${kind === "show" ? `/{${def.param}}` : ""}`, includes: view.includes ?? [],
  };
}

function commandOperation(def: ResourceDef, command: CommandDef): Operation {
  return {
    field: command.field, kind: "command", def, command, root: "mutation", returns: "status", scopes: command.scopes, method: "POST",
    path: `/${command.path}`, includes: [],
  };
}

function actionOperation(def: ResourceDef, action: ActionDef): Operation {
  return {
    field: action.field, kind: "action", def: action.returns ? resourceNamed(action.returns) : def, action, subject: def, root: "mutation",
    returns: "object", scopes: [`${action.ability}:${def.scope}`], method: "POST", path: `/${def.path}/{${def.param}}/${action.path}`, includes: [],
  };
}

function nested(parent: ResourceDef, route: NestedRoute, kind: RowKind): Operation {
  const relation = parent.relations[route.relation];
  if (!relation || relation.kind === "morphTo") throw new Error(`${parent.name}: nested route ${route.path} names no relation`);
  const def = resourceNamed(relation.target);
  const base = `/${parent.path}/{${parent.param}}/${route.path}`;
  const Parent = pascal(parent.name);
  const One = pascal(camel(route.param));
  // A singular path served as a collection (`/events/{event}/image`) needs a list name apart from show's.
  const Many = pascal(camel(route.path)) === One ? `${One}List` : pascal(camel(route.path));
  const m2m = relation.kind === "belongsToMany";
  const field = ({
    list: `${parent.name}${Many}`, show: `${parent.name}${One}`, search: `${parent.name}${Many}`, create: `create${Parent}${One}`,
    update: `update${Parent}${One}`, delete: `delete${Parent}${One}`, batchCreate: `batchCreate${Parent}${Many}`,
    batchUpdate: `batchUpdate${Parent}${Many}`, batchDelete: `batchDelete${Parent}${Many}`, associate: `associate${Parent}${One}`,
    dissociate: `dissociate${Parent}${One}`, attach: `attach${Parent}${Many}`, detach: `detach${Parent}${Many}`, sync: `sync${Parent}${Many}`,
    toggle: `toggle${Parent}${Many}`, pivot: `update${Parent}${One}Pivot`,
  } as const)[kind];
  const suffix = ({
    list: "", show: `/{${route.param}}`, search: "/search", create: "", update: `/{${route.param}}`, delete: `/{${route.param}}`,
    batchCreate: "/batch", batchUpdate: "/batch", batchDelete: "/batch", associate: "/associate", dissociate: `/{${route.param}}/dissociate`,
    attach: "/attach", detach: "/detach", sync: "/sync", toggle: "/toggle", pivot: `/{${route.param}}/pivot`,
  } as const)[kind];
  const returns: Returns = kind === "list" || kind === "search" ? (m2m ? "linkPage" : "page")
    : linkChanges.has(kind) ? "changes"
    : batches.has(kind) ? (m2m ? "links" : "objects")
    : m2m ? "link" : "object";
  const scopes = kind === "list" || kind === "search" ? [...new Set([`view:${def.scope}`, `view:${parent.scope}`])]
    : kind === "associate" ? [`view:${parent.scope}`, `update:${def.scope}`]
    : linkChanges.has(kind) && kind !== "pivot" ? [`update:${parent.scope}`]
    : [`${ability[kind]}:${def.scope}`];
  const own = m2m ? [relation.pivot.as, ...def.includes.filter((i) => i !== relation.pivot.as)] : def.includes;
  const includes = route.includes?.[kind] ?? (returns === "changes" ? def.includes : own);
  return {
    field, kind, def, parent: { def: parent, relation, route }, root: reads.has(kind) ? "query" : "mutation", returns,
    scopes, method: methodOf[kind], path: base + suffix, includes,
  };
}

/**
 * The change feed (`GET /changes`): the account's events in order. Any key may read it; each event is shown only to
 * keys that may view its resource (src/graphql/changes.ts).
 */
const changeFeed: Operation = {
  field: "changes", kind: "feed", def: changeEvents, root: "query", returns: "feed", scopes: [], method: "GET", path: "/changes", includes: [],
};

export const operations: Operation[] = [...resources.flatMap((def) => [
  ...(def.path ? def.operations.map((kind) => topLevel(def, kind)) : []),
  ...(def.views ?? []).flatMap((view) => view.operations.map((kind) => viewOperation(def, view, kind))),
  ...(def.commands ?? []).map((command) => commandOperation(def, command)),
  ...(def.path ? (def.actions ?? []).map((action) => actionOperation(def, action)) : []),
  ...(def.nested ?? []).flatMap((route) => route.operations.map((kind) => nested(def, route, kind))),
]), changeFeed];

// Only a search may share its list's field; any other clash is a naming bug in the registry.
const fieldOwners = new Map<string, Operation>();
for (const op of operations) {
  const first = fieldOwners.get(op.field);
  if (first && !(first.kind === "list" && op.kind === "search" && first.path === op.path.replace(/\/search$/, ""))) {
    throw new Error(`Operations ${first.method} ${first.path} and ${op.method} ${op.path} share the GraphQL field ${op.field}`);
  }
  if (!first) fieldOwners.set(op.field, op);
}

/**
 * The scopes a key needs to read `def`'s rows on their own: those of its top-level list (or lookup); undefined for a
 * resource no top-level route reads. Subscriptions and the change feed show a resource's events to such keys.
 */
export const viewScopesOf = (def: ResourceDef): readonly string[] | undefined =>
  operations.find((op) => op.def === def && op.kind === "list" && !op.parent && !op.view)?.scopes ??
  operations.find((op) => op.def === def && op.kind === "show" && !op.parent && !op.view)?.scopes;

/** The pivot of a many-to-many operation; undefined for every other kind. */
export const pivotOf = (op: Operation): PivotDef | undefined =>
  op.parent?.relation.kind === "belongsToMany" ? op.parent.relation.pivot : undefined;

/**
 * Routes that address the parent's single related row (`/users/{user}/rank`, `/ranks/{rank}/image`):
 * the trailing id may be left out. A morph-one relation served as a collection (`/events/{event}/image`) is not one.
 */
export const isOneToOne = (op: Operation): boolean => {
  const rel = op.parent?.relation;
  return rel?.kind === "belongsTo" || (rel?.kind === "morphOne" && !op.parent!.route.operations.includes("list"));
};
