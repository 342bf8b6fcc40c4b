import type { NestedRoute, OperationKind, PivotDef, RelationDef, ResourceDef } from "./define.ts";
import { resourceNamed, resources } from "./index.ts";
import { camel, pascal } from "../graphql/names.ts";

export type Returns = "object" | "page" | "link" | "linkPage" | "links" | "changes";

/** One API operation: a GraphQL root field, and the REST route that executes it. */
export interface Operation {
  field: string;
  kind: OperationKind;
  root: "query" | "mutation";
  /** Resource whose rows are returned or written (the related one on nested routes). */
  def: ResourceDef;
  parent?: { def: ResourceDef; relation: RelationDef; route: NestedRoute };
  returns: Returns;
  scopes: string[];
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** REST path below `/{version}`, with `{param}` segments. */
  path: string;
  /** Allowed REST `include` values. */
  includes: string[];
}

const methodOf: Record<OperationKind, Operation["method"]> = {
  list: "GET", show: "GET", create: "POST", update: "PATCH", delete: "DELETE", attach: "POST", detach: "DELETE", sync: "PATCH",
  toggle: "PATCH", pivot: "PATCH", batchUpdate: "PATCH", batchDelete: "DELETE",
};
const ability: Record<OperationKind, string> = {
  list: "view", show: "view", create: "create", update: "update", delete: "delete", attach: "update", detach: "update", sync: "update",
  toggle: "update", pivot: "update", batchUpdate: "update", batchDelete: "delete",
};

function topLevel(def: ResourceDef, kind: OperationKind): Operation {
  const P = pascal(def.name);
  const field = { list: def.plural, show: def.name }[kind as "list" | "show"] ?? `${kind}${P}`;
  const item = kind === "list" || kind === "create" ? "" : `/{${def.param}}`;
  return {
    field, kind, def, root: kind === "list" || kind === "show" ? "query" : "mutation", returns: kind === "list" ? "page" : "object",
    scopes: [`${ability[kind]}:${def.scope}`], method: methodOf[kind], path: `/${def.path}${item}`, includes: def.includes,
  };
}

function nested(parent: ResourceDef, route: NestedRoute, kind: OperationKind): Operation {
  const relation = parent.relations[route.relation];
  if (!relation || relation.kind === "morphTo") throw new Error(`${parent.name}: nested route ${route.path} names no relation`);
  const def = resourceNamed(relation.target);
  const base = `/${parent.path}/{${parent.param}}/${route.path}`;
  const Parent = pascal(parent.name);
  const Many = pascal(camel(route.path));
  const One = pascal(camel(route.param));
  const m2m = relation.kind === "belongsToMany";
  const field = ({
    list: `${parent.name}${Many}`, show: `${parent.name}${One}`, create: `create${Parent}${One}`, update: `update${Parent}${One}`,
    delete: `delete${Parent}${One}`, attach: `attach${Parent}${Many}`, detach: `detach${Parent}${Many}`, sync: `sync${Parent}${Many}`,
    toggle: `toggle${Parent}${Many}`, pivot: `update${Parent}${One}Pivot`, batchUpdate: `batchUpdate${Parent}${Many}`,
    batchDelete: `batchDelete${Parent}${Many}`,
  } as const)[kind];
  const suffix = ({
    list: "", show: `/{${route.param}}`, create: "", update: `/{${route.param}}`, delete: `/{${route.param}}`, attach: "/attach",
    detach: "/detach", sync: "/sync", toggle: "/toggle", pivot: `/{${route.param}}/pivot`, batchUpdate: "/batch", batchDelete: "/batch",
  } as const)[kind];
  const returns: Returns = kind === "list" ? (m2m ? "linkPage" : "page")
    : ["attach", "detach", "sync", "toggle", "pivot"].includes(kind) ? "changes"
    : kind === "batchUpdate" || kind === "batchDelete" ? "links"
    : m2m ? "link" : "object";
  const scopes = kind === "list" ? [`view:${def.scope}`, `view:${parent.scope}`]
    : ["attach", "detach", "sync", "toggle"].includes(kind) ? [`update:${parent.scope}`]
    : [`${ability[kind]}:${def.scope}`];
  const own = m2m ? [relation.pivot.as, ...def.includes.filter((i) => i !== relation.pivot.as)] : def.includes;
  const includes = route.includes?.[kind] ?? (returns === "changes" ? def.includes : own);
  return {
    field, kind, def, parent: { def: parent, relation, route }, root: kind === "list" || kind === "show" ? "query" : "mutation", returns,
    scopes, method: methodOf[kind], path: base + suffix, includes,
  };
}

export const operations: Operation[] = resources.flatMap((def) => [
  ...(def.path ? def.operations.map((kind) => topLevel(def, kind)) : []),
  ...(def.nested ?? []).flatMap((route) => route.operations.map((kind) => nested(def, route, kind))),
]);

/** The pivot of a many-to-many operation; undefined for every other kind. */
export const pivotOf = (op: Operation): PivotDef | undefined =>
  op.parent?.relation.kind === "belongsToMany" ? op.parent.relation.pivot : undefined;
