import type {
  ActionDef,
  CommandDef,
  NestedRoute,
  OperationKind,
  RowKind,
  PivotDef,
  PublicRouteDef,
  RelationDef,
  ResourceDef,
  ViewDef,
} from "./define.ts";
import { resourceNamed, resources } from "./index.ts";
import { changeEvents } from "./change-events.ts";
import { camel, pascal } from "../core/names.ts";

/**
 * What an operation answers: one row, a page of rows, a page or list of link rows (many-to-many),
 * a list of rows (batch), the ids a link operation changed, a command's status or its `result` (`CommandDef.answer`).
 */
export type Returns =
  | "object"
  | "objects"
  | "page"
  | "link"
  | "linkPage"
  | "links"
  | "changes"
  | "status"
  | "result"
  | "feed"
  | "publicForm"
  | "publicSubmission";

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
  /**
   * Runs without any credential, and alike with any (a public form): the pipeline lets it through without a key, and
   * it finds its account itself (`{account}`, a slug).
   */
  anonymous?: boolean;
  /** Path parameters that are text (a slug, or a slug or id), not row ids. */
  textParams?: readonly string[];
}

/**
 * The names a route's field and path are made of: at the top level the resource's (`rank`, `ranks`, `{rank}`), on a
 * nested route the parent's with the route's (`userRank`, `userRanks`, `{rank}`), on a view the view's.
 */
interface Named {
  name: string;
  plural: string;
  param: string;
}
interface RouteNames extends Named {
  Name: string;
  Plural: string;
}

/** What the catalogue makes of a row kind's operation: one row per kind. */
interface CatalogueKind {
  method: Operation["method"];
  root: Operation["root"];
  /** Its field and the suffix of its path. */
  field(n: RouteNames): string;
  path(n: RouteNames): string;
  /** What it answers on a route of rows, and on a many-to-many route (its link rows). */
  returns: { rows: Returns; links: Returns };
  /** The verb of its scope on the resource written or read (`update:rank`). */
  ability: "view" | "create" | "update" | "delete";
  /** Its scopes on a nested route, where they are not its ability on the related resource. */
  nestedScopes?(def: ResourceDef, parent: ResourceDef): string[];
  /** The kind whose field it runs, with other arguments (a search: its list's). */
  runs?: RowKind;
}

const byId = (n: RouteNames) => `/{${n.param}}`;
const one = { rows: "object", links: "link" } as const;
const page = { rows: "page", links: "linkPage" } as const;
const batch = { rows: "objects", links: "links" } as const;
const changes = { rows: "changes", links: "changes" } as const;
const viewBoth = (def: ResourceDef, parent: ResourceDef) => [...new Set([`view:${def.scope}`, `view:${parent.scope}`])];
/** The link kinds change the parent's links (a pivot, one link's columns: the related row's). */
const onParent = (_def: ResourceDef, parent: ResourceDef) => [`update:${parent.scope}`];

const catalogueKinds: Record<RowKind, CatalogueKind> = {
  list: {
    method: "GET",
    root: "query",
    ability: "view",
    returns: page,
    field: (n) => n.plural,
    path: () => "",
    nestedScopes: viewBoth,
  },
  // `search` runs its list's GraphQL field with filters, so the two routes share one field.
  search: {
    method: "POST",
    root: "query",
    ability: "view",
    returns: page,
    field: (n) => n.plural,
    path: () => "/search",
    nestedScopes: viewBoth,
    runs: "list",
  },
  show: {
    method: "GET",
    root: "query",
    ability: "view",
    returns: one,
    field: (n) => n.name,
    path: byId,
  },
  create: {
    method: "POST",
    root: "mutation",
    ability: "create",
    returns: one,
    field: (n) => `create${n.Name}`,
    path: () => "",
  },
  update: {
    method: "PATCH",
    root: "mutation",
    ability: "update",
    returns: one,
    field: (n) => `update${n.Name}`,
    path: byId,
  },
  delete: {
    method: "DELETE",
    root: "mutation",
    ability: "delete",
    returns: one,
    field: (n) => `delete${n.Name}`,
    path: byId,
  },
  batchCreate: {
    method: "POST",
    root: "mutation",
    ability: "create",
    returns: batch,
    field: (n) => `batchCreate${n.Plural}`,
    path: () => "/batch",
  },
  batchUpdate: {
    method: "PATCH",
    root: "mutation",
    ability: "update",
    returns: batch,
    field: (n) => `batchUpdate${n.Plural}`,
    path: () => "/batch",
  },
  batchDelete: {
    method: "DELETE",
    root: "mutation",
    ability: "delete",
    returns: batch,
    field: (n) => `batchDelete${n.Plural}`,
    path: () => "/batch",
  },
  associate: {
    method: "POST",
    root: "mutation",
    ability: "update",
    returns: one,
    field: (n) => `associate${n.Name}`,
    path: () => "/associate",
    nestedScopes: (def, parent) => [`view:${parent.scope}`, `update:${def.scope}`],
  },
  dissociate: {
    method: "DELETE",
    root: "mutation",
    ability: "update",
    returns: one,
    field: (n) => `dissociate${n.Name}`,
    path: (n) => `${byId(n)}/dissociate`,
  },
  attach: {
    method: "POST",
    root: "mutation",
    ability: "update",
    returns: changes,
    field: (n) => `attach${n.Plural}`,
    path: () => "/attach",
    nestedScopes: onParent,
  },
  detach: {
    method: "DELETE",
    root: "mutation",
    ability: "update",
    returns: changes,
    field: (n) => `detach${n.Plural}`,
    path: () => "/detach",
    nestedScopes: onParent,
  },
  sync: {
    method: "PATCH",
    root: "mutation",
    ability: "update",
    returns: changes,
    field: (n) => `sync${n.Plural}`,
    path: () => "/sync",
    nestedScopes: onParent,
  },
  toggle: {
    method: "PATCH",
    root: "mutation",
    ability: "update",
    returns: changes,
    field: (n) => `toggle${n.Plural}`,
    path: () => "/toggle",
    nestedScopes: onParent,
  },
  pivot: {
    method: "PATCH",
    root: "mutation",
    ability: "update",
    returns: changes,
    field: (n) => `update${n.Name}Pivot`,
    path: (n) => `${byId(n)}/pivot`,
  },
};

/** An operation of a row kind, from its kind's row: `named` is what the field and path are made of. */
function rowOperation(kind: RowKind, def: ResourceDef, named: Named, base: string, m2m = false) {
  const k = catalogueKinds[kind];
  const names = { ...named, Name: pascal(named.name), Plural: pascal(named.plural) };
  return {
    field: k.field(names),
    kind,
    def,
    root: k.root,
    returns: m2m ? k.returns.links : k.returns.rows,
    scopes: [`${k.ability}:${def.scope}`],
    method: k.method,
    path: base + k.path(names),
  };
}

function topLevel(def: ResourceDef, kind: RowKind): Operation {
  return { ...rowOperation(kind, def, def, `/${def.path}`), includes: def.includes };
}

function viewOperation(def: ResourceDef, view: ViewDef, kind: "list" | "show"): Operation {
  const names = { name: `${view.field}Item`, plural: view.field, param: def.param };
  const includes = view.includes ?? [];
  return { ...rowOperation(kind, def, names, `/${view.path}`), scopes: view.scopes, view, includes };
}

function commandOperation(def: ResourceDef, command: CommandDef): Operation {
  return {
    field: command.field,
    kind: "command",
    def,
    command,
    root: "mutation",
    returns: command.answer ? "result" : "status",
    scopes: command.scopes,
    method: "POST",
    path: `/${command.path}`,
    includes: [],
  };
}

function actionOperation(def: ResourceDef, action: ActionDef): Operation {
  return {
    field: action.field,
    kind: "action",
    def: action.returns ? resourceNamed(action.returns) : def,
    action,
    subject: def,
    root: "mutation",
    returns: "object",
    scopes: [`${action.ability}:${def.scope}`],
    method: "POST",
    path: `/${def.path}/{${def.param}}/${action.path}`,
    includes: [],
  };
}

function publicOperation(def: ResourceDef, route: PublicRouteDef): Operation {
  const show = route.kind === "publicShow";
  return {
    field: route.field,
    kind: route.kind,
    def,
    root: show ? "query" : "mutation",
    returns: show ? "publicForm" : "publicSubmission",
    scopes: [],
    method: show ? "GET" : "POST",
    path: `/public/{account}/${route.path}`,
    includes: [],
    anonymous: true,
    textParams: ["account", def.param],
  };
}

function nested(parent: ResourceDef, route: NestedRoute, kind: RowKind): Operation {
  const relation = parent.relations[route.relation];
  if (!relation || relation.kind === "morphTo")
    throw new Error(`${parent.name}: nested route ${route.path} names no relation`);
  const def = resourceNamed(relation.target);
  const One = pascal(camel(route.param));
  // A singular path served as a collection (`/events/{event}/image`) needs a list name apart from show's.
  const Many = pascal(camel(route.path)) === One ? `${One}List` : pascal(camel(route.path));
  const names = { name: `${parent.name}${One}`, plural: `${parent.name}${Many}`, param: route.param };
  const m2m = relation.kind === "belongsToMany";
  const op = rowOperation(kind, def, names, `/${parent.path}/{${parent.param}}/${route.path}`, m2m);
  const scopes = catalogueKinds[kind].nestedScopes?.(def, parent) ?? op.scopes;
  const own = m2m ? [relation.pivot.as, ...def.includes.filter((i) => i !== relation.pivot.as)] : def.includes;
  const includes = route.includes?.[kind] ?? (op.returns === "changes" ? def.includes : own);
  return { ...op, parent: { def: parent, relation, route }, scopes, includes };
}

/**
 * The change feed (`GET /changes`): the account's events in order. Any key may read it; each event is shown only to
 * keys that may view its resource (src/graphql/changes.ts).
 */
const changeFeed: Operation = {
  field: "changes",
  kind: "feed",
  def: changeEvents,
  root: "query",
  returns: "feed",
  scopes: [],
  method: "GET",
  path: "/changes",
  includes: [],
};

export const operations: Operation[] = [
  ...resources.flatMap((def) => [
    ...(def.path ? def.operations.map((kind) => topLevel(def, kind)) : []),
    ...(def.views ?? []).flatMap((view) => view.operations.map((kind) => viewOperation(def, view, kind))),
    ...(def.commands ?? []).map((command) => commandOperation(def, command)),
    ...(def.path ? (def.actions ?? []).map((action) => actionOperation(def, action)) : []),
    ...(def.nested ?? []).flatMap((route) => route.operations.map((kind) => nested(def, route, kind))),
    ...(def.publicRoutes ?? []).map((route) => publicOperation(def, route)),
  ]),
  changeFeed,
];

// Only a search may share its list's field; any other clash is a naming bug in the registry.
const fieldOwners = new Map<string, Operation>();
for (const op of operations) {
  const first = fieldOwners.get(op.field);
  const runs = op.kind in catalogueKinds ? catalogueKinds[op.kind as RowKind].runs : undefined;
  if (first && !(runs === first.kind && first.path === op.path.replace(/\/search$/, ""))) {
    throw new Error(
      `Operations ${first.method} ${first.path} and ${op.method} ${op.path} share the GraphQL field ${op.field}`,
    );
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
