import type { NestedRoute, OperationKind, PivotDef, RelationDef, ResourceDef } from "../../src/resources/define.ts";
import { operations, pivotOf, isOneToOne, type Operation } from "../../src/resources/operations.ts";
import { resources } from "../../src/resources/index.ts";

/** The resource's own (top-level, non-view) operation of `kind`, if it has one. */
export const topOp = (def: ResourceDef, kind: OperationKind): Operation | undefined =>
  operations.find((o) => o.def === def && !o.parent && !o.view && o.kind === kind);

/**
 * An action that makes a row of `def` from a row of another resource and needs no input (`POST /webhooks/{webhook}/test`
 * logs a webhook delivery): how a test makes rows only the service writes.
 */
export const makingAction = (def: ResourceDef): Operation | undefined =>
  operations.find(
    (o) =>
      o.kind === "action" &&
      o.def === def &&
      o.subject !== def &&
      !Object.values(o.action!.input ?? {}).some((f) => f.required),
  );

/** Resources with a top-level REST collection and a create operation. */
export const creatable = (): ResourceDef[] => resources.filter((def) => def.path && topOp(def, "create"));

/** The REST path of `op` under `/v2`, with `{param}` segments filled from `params`. */
export function pathOf(op: Operation, params: Record<string, number | string> = {}, query = ""): string {
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (params[name] === undefined) throw new Error(`${op.field}: no value for {${name}}`);
    return String(params[name]);
  });
  return `/v2${path}${query ? `?${query}` : ""}`;
}

/** One nested REST collection (`/users/{user}/rank-records`) and its operations, from the catalogue. */
export interface NestedGroup {
  key: string;
  parent: ResourceDef;
  route: NestedRoute;
  relation: Exclude<RelationDef, { kind: "morphTo" }>;
  def: ResourceDef;
  ops: Map<OperationKind, Operation>;
  pivot?: PivotDef;
}

export function nestedGroups(): NestedGroup[] {
  const groups = new Map<string, NestedGroup>();
  for (const op of operations) {
    if (!op.parent) continue;
    const key = `${op.parent.def.path}/{${op.parent.def.param}}/${op.parent.route.path}`;
    let group = groups.get(key);
    if (!group) {
      group = {
        key,
        parent: op.parent.def,
        route: op.parent.route,
        relation: op.parent.relation as NestedGroup["relation"],
        def: op.def,
        ops: new Map(),
        pivot: pivotOf(op),
      };
      groups.set(key, group);
    }
    group.ops.set(op.kind, op);
  }
  return [...groups.values()];
}

/**
 * Nested collections of child rows owned through a foreign key or a polymorphic owner (not one-to-one, not many-to-many)
 * that a client writes (not a log the service keeps, such as a webhook's deliveries).
 */
export const childCollections = (): NestedGroup[] =>
  nestedGroups().filter(
    (g) =>
      g.relation.kind !== "belongsToMany" &&
      g.ops.has("list") &&
      g.ops.has("create") &&
      !isOneToOne([...g.ops.values()][0]) &&
      !g.ops.has("attach"),
  );

/** Nested collections served with link operations: many-to-many relations, and morph-many ones that offer attach/detach. */
export const linkCollections = (): NestedGroup[] =>
  nestedGroups().filter(
    (g) =>
      g.relation.kind === "belongsToMany" ||
      (g.relation.kind === "morphMany" && (g.ops.has("attach") || g.ops.has("sync"))),
  );

/** Columns of `def` set by a nested route rather than the client: the foreign key or the polymorphic owner. */
export function fixedColumns(group: { relation: RelationDef }): string[] {
  const rel = group.relation;
  if (rel.kind === "hasMany") return [rel.foreignKey];
  if (rel.kind === "morphOne" || rel.kind === "morphMany") return ["modelType", "modelId"];
  return [];
}
