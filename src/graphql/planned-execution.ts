import {
  defaultFieldResolver,
  getArgumentValues,
  getNamedType,
  GraphQLError,
  isAbstractType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  locatedError,
  OperationTypeNode,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type FieldNode,
  type GraphQLField,
  type GraphQLFieldResolver,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";
import {
  addPath,
  buildExecutionContext,
  buildResolveInfo,
  collectFields,
  collectSubfields,
  pathToArray,
  type ExecutionContext,
  type Path,
} from "./graphql-js-internals.ts";
import {
  argMappersOf,
  definedResolver,
  exposedColumn,
  loadedCheckOf,
  readsPreloaded,
  type ArgMapper,
  type LoadedCheck,
} from "./pothos-internals.ts";

/*
 * Planned execution of read operations: our own executor for the queries whose every field is a column, a relation
 * Pothos preloads, or a resolver that needs no response path; anything else (mutations, introspection, abstract types,
 * one relation under two aliases) runs on graphql-js.
 *
 * Why it exists (bench/FINDINGS.md, "Planned execution"): a page of 100 users with 20 records each is some 16,000
 * fields. graphql-js builds a resolve info, a path and an argument object for each, and Pothos's prisma plugin finds
 * each row's preloaded relations by that path (@pothos/selection-mapper, a WeakMap entry per path link): together
 * about 70% of the CPU of such a request. The rows themselves were already loaded, by the root field's one planned
 * query per level (queryFromInfo, as on graphql-js). So this executor resolves each field once per request (its
 * arguments, its resolve info) and then per row only reads the column or calls the unwrapped resolver; a relation
 * field reads what the planned query put on its parent row, as Pothos's own resolver does once it has found the
 * row's mapping.
 *
 * The response is graphql-js's: the same field order, serialisation, error paths and null propagation (the test
 * suite runs every document both ways, test/planned-execution.test.ts). A row that turns out not to carry a field's
 * preloaded data (Pothos left it out of the plan) makes the whole operation run again on graphql-js, and is counted.
 *
 * What it takes from graphql-js's internal modules is in ./graphql-js-internals.ts, what it reads of Pothos's field
 * extensions in ./pothos-internals.ts: each says what it relies on and why the public API did not do.
 */

/** What the executor did, since the process started: operations planned, left to graphql-js, and run again there. */
export const plannedExecutionStats = { planned: 0, graphqlJs: 0, rerun: 0 };

type Resolver = GraphQLFieldResolver<unknown, unknown>;
type Completer = (result: unknown, path: Path | undefined) => unknown;

/** A field's data was not on its parent row: the operation runs again on graphql-js. */
class NotPreloaded extends Error {}

interface FieldPlan {
  responseKey: string;
  fieldName: string;
  fieldNodes: readonly FieldNode[];
  parentType: GraphQLObjectType;
  field: GraphQLField<unknown, unknown>;
  /** The column an exposed field reads (`t.expose`), else null. */
  column: string | null;
  /** Whether the field reads data the planned query put on its parent row (Pothos's prisma select fields). */
  preloaded: boolean;
  /** Pothos's check that a relation's data is on the row (`loadedCheckOf`). */
  loaded: LoadedCheck | null;
  resolve: Resolver;
  /** Pothos's argument mappers (prisma-utils' filter inputs), which its wrapper would have applied before `resolve`. */
  argMappers: ArgMapper[];
  /** `__typename`. */
  typename: boolean;
  /** Whether the field's type is non-null: its failure nulls its parent. */
  nonNull: boolean;
  /** The arguments, or why they are invalid: the same for every row (variables cannot change within an execution). */
  args?: { values: Record<string, unknown> } | { error: unknown };
  /** One resolve info for every row: resolvers here read its field nodes, types and variables, not its path. */
  info?: GraphQLResolveInfo;
  complete?: Completer;
  /** The fields selected on the object this field returns. */
  subfields?: FieldPlan[];
}

interface Execution {
  context: ExecutionContext;
  errors: GraphQLError[];
  /** Nullable fields still settling, each written into its object when it does (never rejected: see `later`). */
  pending: Array<Promise<void>>;
  /** What a pending field threw (a row without its preloaded data: the operation runs again on graphql-js). */
  failure?: unknown;
  /** The rows waiting on each promise a resolver returned. */
  waiters: Map<Promise<unknown>, Waiter[]>;
}

const isPromise = (value: unknown): value is Promise<unknown> =>
  typeof (value as Promise<unknown> | null)?.then === "function";

/**
 * Whether an operation can run here, decided once per document: a query whose fields are all planned kinds. A field
 * that loads rows (a relation, a connection) may appear under one response key per selection set, since the planned
 * query keeps one copy of a relation per parent row.
 */
const verdicts = new WeakMap<DocumentNode, Map<string, boolean>>();
function canPlan(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined): boolean {
  let byName = verdicts.get(document);
  if (!byName) verdicts.set(document, (byName = new Map()));
  const key = operationName ?? "";
  let verdict = byName.get(key);
  if (verdict === undefined) byName.set(key, (verdict = judge(schema, document, operationName)));
  return verdict;
}

function judge(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined): boolean {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const operation = operationName
    ? operations.find((o) => o.name?.value === operationName)
    : operations.length === 1
      ? operations[0]
      : undefined;
  const query = schema.getQueryType();
  if (!operation || operation.operation !== OperationTypeNode.QUERY || !query) return false;
  const fragments = new Map(
    document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])),
  );
  const visiting = new Set<string>();
  const check = (type: GraphQLObjectType, selections: SelectionSetNode[], root: boolean): boolean => {
    // Every field of these selection sets on `type`, by name, with its response keys and nested selection sets.
    const byName = new Map<string, { keys: Set<string>; nested: SelectionSetNode[] }>();
    const gather = (set: SelectionSetNode): boolean => {
      for (const selection of set.selections) {
        if (selection.kind === Kind.FIELD) {
          const entry = byName.get(selection.name.value) ?? { keys: new Set(), nested: [] };
          byName.set(selection.name.value, entry);
          entry.keys.add(selection.alias?.value ?? selection.name.value);
          if (selection.selectionSet) entry.nested.push(selection.selectionSet);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          if (!gather(selection.selectionSet)) return false;
        } else {
          const fragment = fragments.get(selection.name.value);
          if (!fragment || visiting.has(fragment.name.value)) return false;
          visiting.add(fragment.name.value);
          const ok = gather(fragment.selectionSet);
          visiting.delete(fragment.name.value);
          if (!ok) return false;
        }
      }
      return true;
    };
    if (!selections.every(gather)) return false;
    const fields = type.getFields();
    for (const [name, { keys, nested }] of byName) {
      if (keys.has("__proto__")) return false;
      if (name === "__typename") continue;
      const field = fields[name];
      if (!field) return false;
      const named = getNamedType(field.type);
      if (isAbstractType(named)) return false;
      if (isLeafType(named)) continue;
      if (!root && keys.size > 1) return false;
      if (!isObjectType(named) || !check(named, nested, false)) return false;
    }
    return true;
  };
  return check(query, [operation.selectionSet], true);
}

/**
 * Runs `args` here when it is a planned kind of operation; otherwise, or when a row lacks its preloaded data, on
 * `graphqlJs`.
 */
export function plannedExecute(
  args: ExecutionArgs,
  graphqlJs: (args: ExecutionArgs) => ExecutionResult | Promise<ExecutionResult>,
): ExecutionResult | Promise<ExecutionResult> {
  if (!canPlan(args.schema, args.document, args.operationName)) {
    plannedExecutionStats.graphqlJs++;
    return graphqlJs(args);
  }
  const context = buildExecutionContext(args);
  if (!("schema" in context)) return { errors: context };
  plannedExecutionStats.planned++;
  const execution: Execution = { context, errors: [], pending: [], waiters: new Map() };
  const rerun = (error: unknown) => {
    if (!(error instanceof NotPreloaded)) throw error;
    plannedExecutionStats.rerun++;
    return graphqlJs(args);
  };
  try {
    const query = context.schema.getQueryType()!;
    const roots = planFields(
      execution,
      query,
      collectFields(context.schema, context.fragments, context.variableValues, query, context.operation.selectionSet),
    );
    const data = executeFields(execution, query, context.rootValue, undefined, roots);
    if (!isPromise(data) && execution.pending.length === 0) return response(execution, data);
    return settle(execution, data).then(
      (value) => response(execution, value),
      (error) => (error instanceof NotPreloaded ? rerun(error) : response(execution, null, error)),
    );
  } catch (error) {
    return error instanceof NotPreloaded ? rerun(error) : response(execution, null, error);
  }
}

/** The data once it and every field written later have settled (settling one may start more). */
async function settle(execution: Execution, data: unknown): Promise<unknown> {
  const value = await data;
  while (execution.pending.length) await Promise.all(execution.pending.splice(0));
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows what a resolver threw, as graphql-js would
  if (execution.failure !== undefined) throw execution.failure;
  return value;
}

/**
 * `promise` as one of the execution's pending fields. It cannot reject: a field's own error is in the response by
 * then, and anything else (a row without its preloaded data) is kept for `settle`, so nothing is left unhandled when
 * the operation ends, or runs again, before every pending field has settled.
 */
function pend(execution: Execution, promise: Promise<unknown>): void {
  execution.pending.push(promise.then(undefined, (error) => void (execution.failure ??= error)) as Promise<void>);
}

function response(execution: Execution, data: unknown, error?: unknown): ExecutionResult {
  if (error !== undefined) execution.errors.push(error as GraphQLError);
  return execution.errors.length === 0
    ? { data: data as Record<string, unknown> }
    : { errors: execution.errors, data: data as Record<string, unknown> | null };
}

function planFields(
  execution: Execution,
  parentType: GraphQLObjectType,
  collected: Map<string, readonly FieldNode[]>,
): FieldPlan[] {
  const plans: FieldPlan[] = [];
  for (const [responseKey, fieldNodes] of collected) {
    const fieldName = fieldNodes[0].name.value;
    if (fieldName === "__typename") {
      plans.push({
        responseKey,
        fieldName,
        fieldNodes,
        parentType,
        field: null as never,
        column: null,
        preloaded: false,
        loaded: null,
        resolve: () => parentType.name,
        argMappers: [],
        typename: true,
        nonNull: true,
      });
      continue;
    }
    const field = parentType.getFields()[fieldName];
    const preloaded = readsPreloaded(field);
    // Pothos's prisma plugin wraps a select field's resolver to find the row's preloaded data by its response path;
    // here the data is known to be on the row, so the field's own resolver runs.
    const resolve: Resolver = (preloaded ? definedResolver(field) : field.resolve) ?? defaultFieldResolver;
    const column = exposedColumn(field);
    const argMappers = preloaded ? argMappersOf(field) : [];
    plans.push({
      responseKey,
      fieldName,
      fieldNodes,
      parentType,
      field,
      column,
      preloaded,
      loaded: loadedCheckOf(field),
      resolve,
      argMappers,
      typename: false,
      nonNull: isNonNullType(field.type),
    });
  }
  return plans;
}

/**
 * The fields of `parent` (an object row, or the root value) as the response object, or a promise of it. A nullable
 * field that resolves later is written into the object when it settles (the execution waits for it before it answers):
 * its failure stops at itself, so the object need not wait. Only a non-null one makes the object a promise, as it may
 * yet null the object.
 */
function executeFields(
  execution: Execution,
  type: GraphQLObjectType,
  parent: unknown,
  path: Path | undefined,
  plans: FieldPlan[],
): unknown {
  // A literal, not graphql-js's Object.create(null): V8 keeps null-prototype objects in dictionary mode, slower to fill
  // and to serialise; rows of one selection share one shape. (A `__proto__` response key is left to graphql-js.)
  const result: Record<string, unknown> = {};
  let pending: Array<Promise<unknown>> | null = null;
  for (let i = 0; i < plans.length; i++) {
    const plan = plans[i];
    const value = executeField(execution, plan, parent, path, result);
    if (value === LATER) continue;
    result[plan.responseKey] = value;
    if (isPromise(value)) (pending ??= []).push(settleInto(result, plan.responseKey, value));
  }
  return pending ? allInto(pending, result) : result;
}

// The promise callbacks live in functions of their own: a closure in executeFields or executeField would make V8
// allocate its captured variables on every call, for every field of every row, promise or not.
const settleInto = (into: Record<string, unknown>, key: string, value: Promise<unknown>) =>
  value.then((settled) => void (into[key] = settled));
const allInto = (pending: Array<Promise<unknown>>, result: unknown) => Promise.all(pending).then(() => result);

/** A nullable field's value will be written into its object once it settles. */
const LATER = Symbol("later");

function executeField(
  execution: Execution,
  plan: FieldPlan,
  parent: unknown,
  parentPath: Path | undefined,
  into: Record<string, unknown>,
): unknown {
  if (plan.typename) return plan.parentType.name;
  let result: unknown;
  try {
    if (plan.column !== null) {
      result = (parent as Record<string, unknown>)[plan.column];
      if (result === undefined && plan.preloaded) throw new NotPreloaded(`${plan.parentType.name}.${plan.fieldName}`);
    } else {
      const info = infoOf(execution, plan, parentPath);
      if (plan.loaded && !plan.loaded(parent, info, execution.context.contextValue))
        throw new NotPreloaded(`${plan.parentType.name}.${plan.fieldName}`);
      result = plan.resolve(parent, argsOf(plan, execution, info), execution.context.contextValue, info);
    }
    const complete = plan.complete ?? (plan.complete = completer(execution, plan, plan.field.type));
    if (isPromise(result)) {
      if (plan.nonNull) return completeAsync(execution, plan, parentPath, result);
      into[plan.responseKey] = null;
      later(execution, result, { plan, parentPath, into });
      return LATER;
    }
    const completed = complete(result, parentPath);
    return isPromise(completed) ? failingAt(execution, plan, parentPath, completed) : completed;
  } catch (error) {
    return fieldError(execution, plan, parentPath, error);
  }
}

/** A non-null field's promise, completed when it settles (its failure is thrown on to its parent). */
function completeAsync(
  execution: Execution,
  plan: FieldPlan,
  parentPath: Path | undefined,
  result: Promise<unknown>,
): Promise<unknown> {
  // Inline callbacks: the bundle names every closure bound to a variable (esbuild's keepNames), at a cost per call.
  return result.then(
    (resolved) => {
      try {
        const completed = plan.complete!(resolved, parentPath);
        return isPromise(completed) ? failingAt(execution, plan, parentPath, completed) : completed;
      } catch (error) {
        return fieldError(execution, plan, parentPath, error);
      }
    },
    (error) => fieldError(execution, plan, parentPath, error),
  );
}

/** `completed`, with a failure handled as the field's error. */
const failingAt = (execution: Execution, plan: FieldPlan, parentPath: Path | undefined, completed: Promise<unknown>) =>
  completed.then(undefined, (error) => fieldError(execution, plan, parentPath, error));

/** A nullable field of one row whose value is still a promise. */
interface Waiter {
  plan: FieldPlan;
  parentPath: Path | undefined;
  into: Record<string, unknown>;
}

/**
 * Completes `waiter` when `promise` settles. Rows waiting on the same promise (a DataLoader gives every row that asks
 * for one key the same one: 2,000 records of 50 ranks wait on 50 images) share one callback, not a promise chain each.
 */
function later(execution: Execution, promise: Promise<unknown>, waiter: Waiter): void {
  let waiters = execution.waiters.get(promise);
  if (!waiters) {
    execution.waiters.set(promise, (waiters = []));
    pend(execution, completeAllLater(execution, promise, waiters));
  }
  waiters.push(waiter);
}

const completeAllLater = (execution: Execution, promise: Promise<unknown>, waiters: Waiter[]) =>
  promise.then(
    (resolved) => {
      for (const w of waiters) completeLater(execution, w, resolved, false);
    },
    (error) => {
      for (const w of waiters) completeLater(execution, w, error, true);
    },
  );

function completeLater(
  execution: Execution,
  { plan, parentPath, into }: Waiter,
  settled: unknown,
  failed: boolean,
): void {
  try {
    if (failed) throw settled;
    const completed = plan.complete!(settled, parentPath);
    if (!isPromise(completed)) {
      into[plan.responseKey] = completed;
      return;
    }
    pend(execution, settleInto(into, plan.responseKey, failingAt(execution, plan, parentPath, completed)));
  } catch (error) {
    into[plan.responseKey] = fieldError(execution, plan, parentPath, error);
  }
}

/** graphql-js's handling: located at the field, thrown on to the parent when the field is non-null, else recorded. */
function fieldError(execution: Execution, plan: FieldPlan, parentPath: Path | undefined, raw: unknown): null {
  if (raw instanceof NotPreloaded) throw raw;
  const error = locatedError(
    raw,
    plan.fieldNodes,
    pathToArray(addPath(parentPath, plan.responseKey, plan.parentType.name)),
  );
  if (plan.nonNull) throw error;
  execution.errors.push(error);
  return null;
}

function argsOf(plan: FieldPlan, execution: Execution, info: GraphQLResolveInfo): Record<string, unknown> {
  if (!plan.args) {
    try {
      let values = getArgumentValues(plan.field, plan.fieldNodes[0], execution.context.variableValues);
      for (const map of plan.argMappers) {
        const mapped = map(values, execution.context.contextValue, info);
        if (isPromise(mapped))
          throw new NotPreloaded(`${plan.parentType.name}.${plan.fieldName}: asynchronous argument mapper`);
        values = mapped as Record<string, unknown>;
      }
      plan.args = { values };
    } catch (error) {
      if (error instanceof NotPreloaded) throw error;
      plan.args = { error };
    }
  }
  if ("error" in plan.args) throw plan.args.error;
  return plan.args.values;
}

function infoOf(execution: Execution, plan: FieldPlan, parentPath: Path | undefined): GraphQLResolveInfo {
  if (plan.info) return plan.info;
  plan.info = buildResolveInfo(
    execution.context,
    plan.field,
    plan.fieldNodes,
    plan.parentType,
    addPath(parentPath, plan.responseKey, plan.parentType.name),
  );
  ownInfos.add(plan.info);
  return plan.info;
}

const ownInfos = new WeakSet<GraphQLResolveInfo>();

/**
 * Whether this executor resolves the field `info` is of: it reads each row's preloaded relations straight off the row,
 * so the loader mappings Pothos records for graphql-js's resolvers (by response path) are never looked up.
 */
export const readsRowsDirectly = (info: GraphQLResolveInfo): boolean => ownInfos.has(info);

/**
 * How a field's resolved value becomes its response value, made once per field from its type. It is given the path of
 * the object the field is on (a list item's own path, inside a list) and makes the field's path only where an object
 * or list needs one: a leaf needs none.
 */
function completer(execution: Execution, plan: FieldPlan, type: GraphQLOutputType, inList = false): Completer {
  const pathOf = inList
    ? (path: Path | undefined) => path!
    : (path: Path | undefined) => addPath(path, plan.responseKey, plan.parentType.name);
  if (isNonNullType(type)) {
    const inner = completer(execution, plan, type.ofType, inList);
    const required = (value: unknown) => {
      if (value === null)
        throw new Error(`Cannot return null for non-nullable field ${plan.parentType.name}.${plan.fieldName}.`);
      return value;
    };
    return (result, path) => {
      const value = inner(result, path);
      return isPromise(value) ? value.then(required) : required(value);
    };
  }
  if (isListType(type)) {
    const item = completer(execution, plan, type.ofType, true);
    const itemNullable = !isNonNullType(type.ofType);
    return (result, path) => {
      if (result instanceof Error) throw result;
      if (result == null) return null;
      if (!Array.isArray(result))
        throw new GraphQLError(
          `Expected Iterable, but did not find one for field "${plan.parentType.name}.${plan.fieldName}".`,
        );
      const listPath = pathOf(path);
      let pending = false;
      const values = result.map((value, index) => {
        const itemPath = addPath(listPath, index, undefined);
        try {
          const completed = item(value, itemPath);
          if (!isPromise(completed)) return completed;
          pending = true;
          return completed.then(undefined, (error) => itemError(execution, plan, itemPath, itemNullable, error));
        } catch (error) {
          return itemError(execution, plan, itemPath, itemNullable, error);
        }
      });
      return pending ? Promise.all(values) : values;
    };
  }
  if (isLeafType(type)) {
    return (result) => {
      if (result instanceof Error) throw result;
      if (result == null) return null;
      const serialized = type.serialize(result);
      if (serialized == null)
        throw new Error(
          `Expected \`${type.name}.serialize(${String(result)})\` to return non-nullable value, returned: ${String(serialized)}`,
        );
      return serialized;
    };
  }
  if (!isObjectType(type)) throw new NotPreloaded(`abstract type ${type.name}`);
  return (result, path) => {
    if (result instanceof Error) throw result;
    if (result == null) return null;
    const subfields =
      plan.subfields ??
      (plan.subfields = planFields(
        execution,
        type,
        collectSubfields(
          execution.context.schema,
          execution.context.fragments,
          execution.context.variableValues,
          type,
          plan.fieldNodes,
        ),
      ));
    return executeFields(execution, type, result, pathOf(path), subfields);
  };
}

function itemError(execution: Execution, plan: FieldPlan, path: Path, nullable: boolean, raw: unknown): null {
  if (raw instanceof NotPreloaded) throw raw;
  const error = locatedError(raw, plan.fieldNodes, pathToArray(path));
  if (!nullable) throw error;
  execution.errors.push(error);
  return null;
}
