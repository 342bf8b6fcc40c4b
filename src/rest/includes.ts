import { ownEntry, type RelationDef, type ResourceDef } from "../resources/define.ts";
import { resourceNamed } from "../resources/index.ts";
import { pivotOf, type Operation } from "../resources/operations.ts";
import { validationError } from "../core/errors.ts";

/** Requested relations as a tree: `rank.image,author` → { rank: { image: {} }, author: {} }. */
export type IncludeTree = Map<string, IncludeTree>;

/** Parses and checks `include` against an operation's allow-list; returns the normalised, sorted values. */
export function parseIncludes(raw: string | null, allowed: readonly string[]): string[] {
  if (raw === null || raw.trim() === "") return [];
  const values = [
    ...new Set(
      raw
        .split(",")
        .map((v) => v.trim())
        .filter(Boolean),
    ),
  ].sort();
  const rejected = values.filter((v) => !isAllowed(v, allowed));
  if (rejected.length) {
    const list = allowed.length ? allowed.join(", ") : "none";
    throw validationError({
      include: rejected.map((v) => `The ${v} include is not allowed. Allowed values: ${list}.`),
    });
  }
  return values;
}

/**
 * `includes` of a search body: `[{"relation": "rank"}]`, checked like the query parameter; with the search `op`, a
 * value the allow-list lets through only by a wildcard (`rank.*`) must also name real relations, and is refused
 * under its own key (`includes.0.relation`) when it does not.
 */
export function searchIncludes(raw: unknown, allowed: readonly string[], op?: Operation): string[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw validationError({ includes: ["The includes field must be an array."] });
  const bag: Record<string, string[]> = {};
  const values: string[] = [];
  for (const [index, item] of raw.entries()) {
    const relation =
      typeof item === "string"
        ? item
        : item && typeof item === "object"
          ? (item as { relation?: unknown }).relation
          : undefined;
    if (typeof relation !== "string" || relation === "")
      bag[`includes.${index}.relation`] = ["The relation field is required."];
    else if (!isAllowed(relation, allowed))
      bag[`includes.${index}.relation`] = [
        `The ${relation} include is not allowed. Allowed values: ${allowed.join(", ") || "none"}.`,
      ];
    else if (
      typeof item === "object" &&
      ((item as { filters?: unknown[] }).filters?.length || (item as { limit?: unknown }).limit != null)
    ) {
      bag[`includes.${index}.filters`] = [
        "Filtering or limiting an included relation is not supported; search the related collection instead.",
      ];
    } else if (op && !allowed.includes(relation) && !namesRelations(op, relation)) {
      bag[`includes.${index}.relation`] = [`The ${relation} include names no relation.`];
    } else values.push(relation);
  }
  if (Object.keys(bag).length) throw validationError(bag);
  return values;
}

/** At most `includeMaxCount` values of at most `includeMaxDepth` segments: each include widens the query. */
export function capIncludes(values: string[], limits: { includeMaxCount: number; includeMaxDepth: number }): string[] {
  if (values.length > limits.includeMaxCount) {
    throw validationError({ include: [`At most ${limits.includeMaxCount} include values may be given at once.`] });
  }
  const deep = values.filter((v) => v.split(".").length > limits.includeMaxDepth);
  if (deep.length) {
    throw validationError({
      include: deep.map((v) => `The ${v} include is nested deeper than ${limits.includeMaxDepth} levels.`),
    });
  }
  return values;
}

/** Whether `value` names relations of the rows `op` answers with (on a link route, the related resource's and its pivot). */
function namesRelations(op: Operation, value: string): boolean {
  const pivot = pivotOf(op);
  try {
    if (pivot) includeTree(resourceNamed(pivot.related), [value], [pivot.as]);
    else includeTree(op.def, [value]);
    return true;
  } catch {
    return false;
  }
}

const isAllowed = (value: string, allowed: readonly string[]) =>
  allowed.includes(value) ||
  allowed.some((a) => a.endsWith(".*") && value.startsWith(a.slice(0, -1)) && value.length > a.length - 1);

/**
 * Builds the tree of relations to embed. `x.*` embeds `x` with every relation `x`'s resource allows.
 * `accessors` are names that are not relations of `def` but of the link rows (a pivot shown as `record`).
 */
export function includeTree(
  def: ResourceDef,
  values: readonly string[],
  accessors: readonly string[] = [],
): IncludeTree {
  const tree: IncludeTree = new Map();
  for (const value of values) {
    let node = tree;
    let at: ResourceDef | null = def;
    let pivotAccessors = accessors;
    for (const segment of value.split(".")) {
      if (segment === "*") {
        for (const name of at?.includes ?? [])
          if (!name.includes("*") && !name.includes(".")) node.set(name, node.get(name) ?? new Map());
        break;
      }
      if (pivotAccessors.includes(segment)) {
        node.set(segment, node.get(segment) ?? new Map());
        break;
      }
      const relation: RelationDef | undefined = ownEntry(at?.relations, segment);
      if (!relation)
        throw validationError({
          include: [
            `The ${value} include names no relation: ${at?.label.toLowerCase() ?? "the owner"} has no ${segment}.`,
          ],
        });
      const child: IncludeTree = node.get(segment) ?? new Map();
      node.set(segment, child);
      node = child;
      at = relation.kind === "morphTo" ? null : resourceNamed(relation.target);
      pivotAccessors = relation.kind === "belongsToMany" ? [relation.pivot.as] : [];
    }
  }
  return tree;
}
