import {
  getLocation,
  getNamedType,
  getOperationAST,
  isAbstractType,
  isNonNullType,
  isObjectType,
  Kind,
  type DocumentNode,
  type ExecutionResult,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLSchema,
  type SelectionNode,
  type SelectionSetNode,
  type SourceLocation,
} from "graphql";
import type { Plugin } from "graphql-yoga";
import type { ResourceDef } from "../resources/define.ts";
import { resources } from "../resources/index.ts";
import { operations } from "../resources/operations.ts";
import { ApiError, errorKinds } from "../core/errors.ts";
import type { Context } from "../request/context.ts";
import { holds } from "../data/access.ts";
import { pascal, restRootField } from "../core/names.ts";

/*
 * Scopes on relations: a document that selects a resource's rows through another's (a REST `include`, a nested
 * GraphQL selection) needs `view:<that resource>` besides the root field's own scopes. The rule is static, computed
 * once per document from the schema's types: every object type is a resource, a page, a link row or a result type,
 * and a selected field (even `__typename`) on a resource's type, or on its connection or edge (a nested list's
 * `totalCount`, cursors and link columns), reads that resource. Abstract positions (a
 * polymorphic owner) read the member types the selection reaches: those named by inline fragments, or every member
 * for a field (only `__typename` is possible) selected on the union itself.
 */

/** The view scope of every resource that has one: a resource no route serves (schedules, tags) is read with its parent, as a link row is. */
const viewScopes = new Set(operations.flatMap((op) => op.scopes).filter((s) => s.startsWith("view:")));
const scopeOfType = new Map<string, string | null>(
  resources.map((def) => [
    pascal(def.name),
    !def.link && viewScopes.has(`view:${def.scope}`) ? `view:${def.scope}` : null,
  ]),
);
const resourceOfType = new Map<string, ResourceDef>(resources.map((def) => [pascal(def.name), def]));
/**
 * The type whose rows a type holds: a connection's or an edge's node type (its page fields, cursors and link columns
 * are a read of those rows: `rankRecords { totalCount }` counts rank records), else the type itself.
 */
function rowTypeOf(type: GraphQLObjectType): string {
  if (!/(Connection|Edge)$/.test(type.name)) return type.name;
  const fields = type.getFields();
  const rows = fields.nodes ?? fields.node;
  return rows ? getNamedType(rows.type).name : type.name;
}
/** What each root field needs: its own scopes, and the resource whose rows it returns (read under those scopes). */
interface RootField {
  scopes: readonly string[];
  def?: ResourceDef;
  /**
   * Its rows may be of any type, and it checks each row's view scope as it runs (`node`, `nodes`: null for a type the
   * key may not view): a field selected on the interface itself (`id`, `__typename`) needs no scope here; one selected
   * through a fragment on a type (`... on Rank`) needs that type's, as do relations below.
   */
  anyType?: boolean;
  /** Runs without any credential (a public form's): the key check lets it through (`Operation.anonymous`). */
  anonymous?: boolean;
}
const rootFields = new Map<string, RootField>();
/** The `own` of a position whose rows are checked as they are read (see RootField.anyType). */
const ANY_TYPE = "*";
for (const op of operations) if (!rootFields.has(restRootField(op.field))) rootFields.set(restRootField(op.field), op);

/** Declares a public root field's scopes and resource (src/graphql/roots.ts). */
export function registerRootField(field: string, root: RootField): void {
  rootFields.set(field, root);
}

/** Whether the root field `field` runs without a credential (`RootField.anonymous`). */
export const isAnonymousRootField = (field: string): boolean => rootFields.get(field)?.anonymous === true;

/** Every `view:` scope a document can need: what a client that reads everything, with every include, must hold. */
export const relationViewScopes = (): string[] => [...viewScopes].sort();

interface FieldNeed {
  /** Response keys from the root field to the field that reads the relation (no list positions: the rule is per field). */
  path: string[];
  node: FieldNode;
  scopes: Set<string>;
}

interface RootCheck {
  /** The root field's own scopes: when the key lacks one, its resolver answers FORBIDDEN and the relations are moot. */
  scopes: readonly string[];
  needs: FieldNeed[];
  /** Its response key, and whether it can be left out alone: selected directly on the operation, its type nullable. */
  key: string;
  alone: boolean;
}

/** A relation read the key may not make: FORBIDDEN, located on the field that reads it. */
class RelationForbidden extends ApiError {
  constructor(need: FieldNeed, missing: string[]) {
    super(
      "FORBIDDEN",
      `${errorKinds.FORBIDDEN.message} Missing scope${missing.length > 1 ? "s" : ""}: ${missing.join(", ")}.`,
    );
    const location = need.node.loc ? [getLocation(need.node.loc.source, need.node.loc.start)] : undefined;
    // ApiError takes no GraphQL options; the path and location are what a client needs to find the field.
    Object.assign(this as { path?: readonly string[]; locations?: readonly SourceLocation[] }, {
      path: need.path,
      locations: location,
    });
  }
}

/** A selection left out by a literal `@skip(if: true)` or `@include(if: false)`; a variable condition counts as selected. */
const skipped = (selection: SelectionNode) =>
  selection.directives?.some((d) => {
    if (d.name.value !== "skip" && d.name.value !== "include") return false;
    const condition = d.arguments?.find((a) => a.name.value === "if")?.value;
    return condition?.kind === Kind.BOOLEAN && condition.value === (d.name.value === "skip");
  }) ?? false;

/** The relation reads of each root field of one operation of `document`. */
function analyse(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined): RootCheck[] {
  const operation = getOperationAST(document, operationName);
  const rootType = operation && schema.getRootType(operation.operation);
  if (!operation || !rootType) return [];
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);

  const possibleTypes = (type: ReturnType<typeof getNamedType>): readonly GraphQLObjectType[] =>
    isObjectType(type) ? [type] : isAbstractType(type) ? schema.getPossibleTypes(type) : [];
  const checks: RootCheck[] = [];
  for (const { node } of fieldsOf([rootType], operation.selectionSet)) {
    const definition = rootType.getFields()[node.name.value];
    if (node.name.value.startsWith("__") || !definition || !node.selectionSet) continue;
    const op = rootFields.get(node.name.value);
    const needs = new Map<string, FieldNeed>();
    const rootTypes = possibleTypes(getNamedType(definition.type));

    /** Adds the view scopes of `types`, read at `path` through `owner`, unless they are the rows this position already holds (`own`). */
    const read = (types: readonly GraphQLObjectType[], path: string[], owner: FieldNode, own: string | null) => {
      for (const type of types) {
        const name = rowTypeOf(type);
        const scope = scopeOfType.get(name);
        if (!scope || name === own || (own === ANY_TYPE && types === rootTypes)) continue;
        const at = path.join(".");
        let need = needs.get(at);
        if (!need) needs.set(at, (need = { path, node: owner, scopes: new Set() }));
        need.scopes.add(scope);
      }
    };
    /**
     * `types`: the object types the rows at this position may have; `own`: the resource type whose rows this position
     * holds, or the helpers around them (its connection and edges, a link row, a payload), whose read is already
     * checked: the root field's own rows (its own scopes cover them), or a relation's rows checked where it is selected.
     */
    const visit = (
      types: readonly GraphQLObjectType[],
      selectionSet: SelectionSetNode,
      path: string[],
      owner: FieldNode,
      own: string | null,
    ): void => {
      for (const selected of fieldsOf(types, selectionSet)) {
        read(selected.types, path, owner, own);
        if (!selected.node.selectionSet) continue;
        const key = (selected.node.alias ?? selected.node.name).value;
        for (const type of selected.types) {
          const child = type.getFields()[selected.node.name.value];
          if (!child) continue;
          const def = resourceOfType.get(type.name);
          const next = rowTypeOf(type) !== type.name ? rowTypeOf(type) : def && !def.link ? null : own;
          visit(
            possibleTypes(getNamedType(child.type)),
            selected.node.selectionSet,
            [...path, key],
            selected.node,
            next,
          );
        }
      }
    };
    visit(
      rootTypes,
      node.selectionSet,
      [(node.alias ?? node.name).value],
      node,
      op?.anyType ? ANY_TYPE : op?.def ? pascal(op.def.name) : null,
    );
    const key = (node.alias ?? node.name).value;
    checks.push({
      scopes: op?.scopes ?? [],
      needs: [...needs.values()],
      key,
      alone: !isNonNullType(definition.type) && operation.selectionSet.selections.includes(node),
    });
  }
  return checks;

  /** The fields of a selection set, each with the object types it is selected on (narrowed by fragments' type conditions). */
  function fieldsOf(types: readonly GraphQLObjectType[], selectionSet: SelectionSetNode, seen = new Set<string>()) {
    const out: Array<{ node: FieldNode; types: readonly GraphQLObjectType[] }> = [];
    for (const selection of selectionSet.selections) {
      if (skipped(selection)) continue;
      if (selection.kind === Kind.FIELD) {
        out.push({ node: selection, types });
        continue;
      }
      let fragment: { typeCondition?: { name: { value: string } }; selectionSet: SelectionSetNode } | undefined =
        selection.kind === Kind.INLINE_FRAGMENT ? selection : undefined;
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        if (seen.has(selection.name.value)) continue;
        fragment = fragments.get(selection.name.value);
        seen = new Set([...seen, selection.name.value]);
      }
      if (!fragment) continue;
      const condition = fragment.typeCondition && schema.getType(fragment.typeCondition.name.value);
      const narrowed = !condition
        ? types
        : types.filter((t) => t === condition || (isAbstractType(condition) && schema.isSubType(condition, t)));
      if (narrowed.length) out.push(...fieldsOf(narrowed, fragment.selectionSet, seen));
    }
    return out;
  }
}

/**
 * Requires `view:<resource>` (or `*`) for every resource a document reads through a relation, before the operation
 * runs: the same check for REST includes (their documents are prepared once per route and include set) and for
 * GraphQL selections. The analysis is cached by document object, so a prepared or parsed-once document is walked once.
 * Root fields are independent: one that reads a relation the key may not read does not run and answers null with its
 * errors, the others run (REST answers a document's first error: its single root field's 403, as before).
 */
export function relationScopesPlugin(): Plugin<Context> {
  const cache = new WeakMap<DocumentNode, Map<string, RootCheck[]>>();
  /** The document's checks and what the key lacks; null when the key holds every scope (`*`) or none (no key). */
  const refusalsOf = (args: {
    contextValue: unknown;
    document: unknown;
    operationName?: string | null;
    schema: GraphQLSchema;
  }) => {
    const auth = (args.contextValue as Context).auth;
    // Without a key the root fields answer UNAUTHENTICATED; `*` holds every scope.
    if (!auth || auth.scopes.has("*")) return null;
    // A person holds the self-service rights too: the rows they reach are narrowed as they are read (owned, planPage).
    const scopes = { has: (scope: string) => holds(auth, scope) };
    const document = args.document as DocumentNode;
    let byOperation = cache.get(document);
    if (!byOperation) cache.set(document, (byOperation = new Map()));
    const name = args.operationName ?? "";
    let checks = byOperation.get(name);
    if (!checks) byOperation.set(name, (checks = analyse(args.schema, document, args.operationName)));
    const errors: ApiError[] = [];
    const refused = new Set<string>();
    for (const check of checks) {
      if (check.scopes.some((s) => !scopes.has(s))) continue;
      for (const need of check.needs) {
        const missing = [...need.scopes].filter((s) => !scopes.has(s)).sort();
        if (!missing.length) continue;
        errors.push(new RelationForbidden(need, missing));
        refused.add(check.key);
      }
    }
    return { checks, errors, refused, document };
  };
  return {
    // A subscription has one root field: a relation its key may not read refuses it before it starts.
    onSubscribe({ args, setResultAndStopExecution }) {
      const errors = refusalsOf(args)?.errors;
      if (errors?.length) setResultAndStopExecution({ errors });
    },
    onExecute({ args, executeFn, setExecuteFn, setResultAndStopExecution }) {
      const found = refusalsOf(args);
      if (!found?.errors.length) return;
      const { checks, errors, refused, document } = found;
      // A refused field that cannot be null alone (non-null, or selected through a fragment) takes the whole data.
      if (checks.some((c) => refused.has(c.key) && !c.alone)) return setResultAndStopExecution({ data: null, errors });
      const operation = getOperationAST(document, args.operationName)!;
      const runs = operation.selectionSet.selections.some(
        (s) => s.kind !== Kind.FIELD || !refused.has((s.alias ?? s.name).value),
      );
      if (!runs)
        return setResultAndStopExecution({ data: Object.fromEntries([...refused].map((key) => [key, null])), errors });
      const pruned: DocumentNode = {
        ...document,
        definitions: document.definitions.map((d) =>
          d !== operation
            ? d
            : {
                ...operation,
                selectionSet: {
                  ...operation.selectionSet,
                  selections: operation.selectionSet.selections.filter(
                    (s) => s.kind !== Kind.FIELD || !refused.has((s.alias ?? s.name).value),
                  ),
                },
              },
        ),
      };
      // The response keys in the document's order: the refused ones null where they were asked.
      const keys = operation.selectionSet.selections.flatMap((s) =>
        s.kind === Kind.FIELD ? [(s.alias ?? s.name).value] : [],
      );
      setExecuteFn(async (executeArgs) => {
        const result = (await executeFn({ ...executeArgs, document: pruned })) as ExecutionResult;
        if (result.data == null) return { ...result, errors: [...errors, ...(result.errors ?? [])] };
        const data: Record<string, unknown> = {};
        for (const key of keys) data[key] = refused.has(key) ? null : result.data[key];
        const merged: Record<string, unknown> = { ...data, ...result.data };
        for (const key of refused) merged[key] = null;
        return { ...result, data: merged, errors: [...errors, ...(result.errors ?? [])] };
      });
    },
  };
}
