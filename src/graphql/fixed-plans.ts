import type { DocumentNode, FieldNode, GraphQLResolveInfo, OperationDefinitionNode, SelectionNode } from "graphql";
import { Kind } from "graphql";
import { readsRowsDirectly } from "./planned-execution.ts";

/*
 * Plans made once per document instead of once per request. A root field's Prisma query comes from its selection
 * (Pothos's queryFromInfo walks it, calling each field's select function): 0.18 ms of W1's 2.2 ms of main thread, the
 * same query every time, since a REST document selects relations without arguments (bench/FINDINGS.md, "Plans made
 * once"). A document whose selections below its root fields take no arguments and whose select functions read
 * nothing of the request (REST's generated ones: src/rest/documents.ts) is marked here, and its plans are kept by
 * field node.
 *
 * Only where the planned executor runs the field: queryFromInfo also records, on the request's context, where each
 * row's preloaded relations are (Pothos's loader mappings), which graphql-js's resolvers look up and the planned
 * executor never does. An operation that runs on graphql-js (or again there) plans per request as before.
 */

/** Plans made to be kept, and plans taken from those kept, since the process started. */
export const fixedPlanStats = { made: 0, reused: 0 };

const fixedOperations = new WeakSet<OperationDefinitionNode>();
const plans = new WeakMap<FieldNode, Map<string, unknown>>();

/**
 * Marks `document`'s operations as planned once, those without arguments, directives or fragment spreads below their
 * root fields. The caller vouches for the rest of the rule above: no select function that reads the request.
 */
export function markFixedSelections(document: DocumentNode): void {
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    const below = definition.selectionSet.selections.flatMap((root) =>
      root.kind === Kind.FIELD ? (root.selectionSet?.selections ?? []) : [root],
    );
    if (!takesArguments(below)) fixedOperations.add(definition);
  }
}

function takesArguments(selections: readonly SelectionNode[]): boolean {
  return selections.some((s) => {
    if (s.directives?.length) return true;
    if (s.kind === Kind.FRAGMENT_SPREAD) return true;
    if (s.kind === Kind.FIELD && s.arguments?.length) return true;
    return !!s.selectionSet && takesArguments(s.selectionSet.selections);
  });
}

/**
 * `make()`'s plan for the field `info` resolves, under `key` (what the plan is of: its path, its type): made once and
 * kept, frozen, when the operation is marked and runs on the planned executor; else made now. Kept by field node and
 * the type the field is on, so that a node reached on more than one type could never share a plan between them.
 */
export function fixedPlan<T>(info: GraphQLResolveInfo, key: string, make: () => T): T {
  if (info.fieldNodes.length !== 1 || !fixedOperations.has(info.operation) || !readsRowsDirectly(info)) return make();
  const node = info.fieldNodes[0];
  let byKey = plans.get(node);
  if (!byKey) plans.set(node, (byKey = new Map()));
  const kept = `${info.parentType.name}.${key}`;
  let plan = byKey.get(kept) as T | undefined;
  if (plan !== undefined) {
    fixedPlanStats.reused++;
    return plan;
  }
  fixedPlanStats.made++;
  byKey.set(kept, (plan = deepFreeze(make())));
  return plan;
}

/** Frozen all the way down: a plan is shared by every request, and a caller that changed it would change theirs. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
