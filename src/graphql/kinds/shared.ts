import { ApiError, notFound } from "../../core/errors.ts";
import { camel, pascal } from "../../core/names.ts";
import { findOwned, owned, type ScopeVerb } from "../../data/access.ts";
import * as link from "../../data/links.ts";
import type { StoreReads } from "../../db/store-reads.ts";
import type { Context } from "../../request/context.ts";
import { isOneToOne, pivotOf as pivotOfOp, type Operation } from "../../resources/operations.ts";
import type { ResourceDef } from "../../resources/define.ts";
import { linkResourceOf } from "../../resources/index.ts";
import { queryFromInfo } from "@pothos/plugin-prisma";
import type { GraphQLResolveInfo } from "graphql";
import type { Builder, SubGraph } from "../builder.ts";
import { fixedPlan } from "../fixed-plans.ts";
import type { ObjectRefs } from "../objects.ts";
import type { Inputs } from "./inputs.ts";
import {
  dynamic,
  type Args,
  type ArgMap,
  type DynamicFieldBuilder,
  type DynamicInputFieldBuilder,
  type FieldMap,
  type FieldRef,
  type InputFieldMap,
  type OutputRef,
  type Row,
} from "../pothos-dynamic.ts";

/*
 * What the operation kinds' modules share: the arguments' row ids, a nested route's row, and the one way a field
 * error's path is renamed.
 */

export type { Args, Row };
/** The id of a row read from the store. */
export const idOf = (row: Row) => row.id as number;
/** The REST facade's root fields and their types: served to REST documents only (the internal graph). */
export const INTERNAL: { subGraphs: readonly SubGraph[] } = { subGraphs: ["internal"] };

/*
 * An argument as GraphQL coerced it. Its type is the argument's GraphQL type, checked before any resolver runs, so
 * these name the type rather than test it; a nullable argument may be absent or null.
 */
export const intArg = (a: Args, name: string) => a[name] as number;
export const nullableIntArg = (a: Args, name: string) => a[name] as number | null | undefined;
export const intsArg = (a: Args, name: string) => a[name] as number[];
export const flagArg = (a: Args, name: string) => a[name] as boolean | null | undefined;
/** An input object (a row's attributes, link columns): required, or nullable (`inputArg`). */
export const rowArg = (a: Args, name: string) => a[name] as Row;
export const inputArg = (a: Args, name: string) => a[name] as Row | null | undefined;
/** A list of input objects (a batch's rows). */
export const inputsArg = <T = Row>(a: Args, name: string) => a[name] as T[];

/** The pivot of an operation known to be many-to-many. */
export const pivotOf = (op: Operation) => pivotOfOp(op)!;
/** The id of the row a single-row REST facade field addresses (its route's last `{param}`). */
export const idArg = (op: Operation, a: Args) => nullableIntArg(a, op.parent ? op.parent.route.param : op.def.param);

/** Columns that tie a child row to its parent on a has-many or polymorphic route. */
const VERBS: Partial<Record<Operation["kind"], ScopeVerb>> = {
  show: "view",
  list: "view",
  search: "view",
  update: "update",
  batchUpdate: "update",
  delete: "delete",
  batchDelete: "delete",
};
/**
 * The verb by which `op` reaches rows of its own resource, for a person's self-service narrowing (`owned`); none for an
 * operation that reads rows only to answer what it wrote.
 */
export const verbOf = (op: Operation): ScopeVerb | null => VERBS[op.kind] ?? null;
/** The verb by which `op` reads its parent: a view where its scopes name the parent's, else none (an existence check). */
export const parentVerb = (op: Operation): ScopeVerb | null =>
  op.parent && op.scopes.includes(`view:${op.parent.def.scope}`) ? "view" : null;

export function childKeys(op: Operation, parent: Row): Row {
  const { def, relation } = op.parent!;
  if (relation.kind === "hasMany") return { [relation.foreignKey]: parent.id };
  if (relation.kind === "morphOne" || relation.kind === "morphMany")
    return { modelType: def.morphClass, modelId: parent.id };
  throw new Error(`${op.field}: no child keys for a ${relation.kind} relation`);
}

/** The one related row a nested single-row route addresses (parent `parentId`, related `id`), or 404. */
export async function nestedRowOf(
  op: Operation,
  parentId: number,
  id: number | null | undefined,
  ctx: Context,
  tx: StoreReads,
  query: object = {},
) {
  const { def, relation } = op.parent!;
  const parent = await findOwned(ctx, tx, def, parentId, {}, parentVerb(op));
  if (relation.kind === "belongsTo") {
    const current = parent[relation.foreignKey] as number | null;
    if (current == null || (id != null && id !== current)) throw notFound();
    return { parent, row: await findOwned(ctx, tx, op.def, current, query, verbOf(op)) };
  }
  if (relation.kind === "belongsToMany") {
    if (id == null) throw notFound();
    return { parent, row: await link.findLink(tx, pivotOf(op), parent.id, id, query) };
  }
  const oneToOne = isOneToOne(op);
  const row = await tx.findFirst(op.def.model, {
    ...query,
    where: owned(ctx, op.def, { ...childKeys(op, parent), ...(oneToOne ? {} : { id: id ?? -1 }) }, verbOf(op)),
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
  });
  if (!row || (id != null && id !== row.id)) throw notFound();
  return { parent, row };
}

/** The same row, addressed by a REST facade field's arguments. */
export const nestedRow = (op: Operation, a: Args, ctx: Context, tx: StoreReads, query: object = {}) =>
  nestedRowOf(op, intArg(a, op.parent!.def.param), idArg(op, a), ctx, tx, query);

/**
 * The GraphQL input paths of a batch item's field errors, where REST keys them otherwise: REST names an updated item
 * by its id and a field without `input` (`resources.7.name`), GraphQL by the item's position (`resources.1.input.name`).
 */
export const inputPathsOf = new WeakMap<ApiError, Record<string, string[]>>();

/** A snake_case field path as GraphQL names it (`resources.0.pivot.unit_id` → `resources.0.pivot.unitId`). */
export const camelPath = (key: string) => key.split(".").map(camel).join(".");

/**
 * The one way a field error's paths are renamed: an error with field errors becomes the same error (code, message,
 * messages) keyed by `rename(key)`; when `graphqlPath` is given, the GraphQL input paths are registered beside it
 * (`inputPathsOf`), for an error whose own keys stay REST's. Any other error is passed on as it is.
 */
export function renameFieldErrors(
  error: unknown,
  rename: (key: string) => string,
  graphqlPath?: (key: string) => string,
): unknown {
  if (!(error instanceof ApiError) || !error.fieldErrors) return error;
  const entries = Object.entries(error.fieldErrors);
  const renamed = new ApiError(error.code, error.message, Object.fromEntries(entries.map(([k, v]) => [rename(k), v])));
  if (graphqlPath) inputPathsOf.set(renamed, Object.fromEntries(entries.map(([k, v]) => [graphqlPath(k), v])));
  return renamed;
}

/** `work`, its field errors renamed as `renameFieldErrors` does. */
export const renamingErrors = <T>(
  work: Promise<T>,
  rename: (key: string) => string,
  graphqlPath?: (key: string) => string,
) =>
  work.catch((e: unknown) => {
    throw renameFieldErrors(e, rename, graphqlPath);
  });

/** The words an operation's description is made of. */
export interface Words {
  /** `rank`, `ranks`: the rows the operation returns or writes. */
  one: string;
  rows: string;
  /** The parent's label on a nested route, else empty; ` of a user` there, else empty. */
  parent: string;
  of: string;
  /** The resource's own description. */
  what: string;
}

/** What the REST facade gives a kind to make its root field with. */
export interface FacadeParts {
  builder: Builder;
  refs: ObjectRefs;
  args: ArgMap;
  /** The field's description: the kind's summary, then the REST route (`rest`). */
  description: string;
  rest: string;
  /** Types several kinds answer, made once. */
  types: { changes: OutputRef; commandStatus: OutputRef };
}

/**
 * One operation kind in the REST facade (the internal graph's `rest<Operation>` fields): what it does, its
 * arguments after the ids every kind takes, and its field (result type and resolver). The kinds' index
 * (`src/graphql/kinds/index.ts`) has one per kind.
 */
export interface FacadeKind {
  /** Takes the id of the row it addresses (its route's `{id}`). */
  addressesRow?: boolean;
  /** What the operation does, in a sentence or two; a view's (list and show), after the view's description. */
  summary(op: Operation, words: Words): string;
  ofView?(words: Words): string;
  /** The other route that runs the same field, for its description (a list's search). */
  alsoRoutes?(op: Operation): string;
  args?(t: DynamicFieldBuilder, op: Operation, made: Inputs, words: Words, builder: Builder): ArgMap;
  field(t: DynamicFieldBuilder, op: Operation, parts: FacadeParts): FieldRef;
  /**
   * Its root field in the public graph (a list's connection, a show's lookup, a mutation), for a top-level operation
   * (an action's: on its subject) or a view's; none if absent.
   */
  addPublic?(parts: PublicParts, op: Operation): void;
}

/**
 * The query of the rows a root field returns (under `under`, a page's `nodes`), as `t.prismaField` plans it: once per
 * REST document (fixed-plans.ts).
 */
export const rowsQuery = (ctx: Context, info: GraphQLResolveInfo, under?: string): object =>
  fixedPlan(info, under ?? "rows", () => queryFromInfo({ context: ctx, info, path: under ? [under] : [] }));

/** The resource whose rows an operation answers: a many-to-many route's are its link rows. */
export const rowsDef = (op: Operation): ResourceDef => {
  const pivot = pivotOfOp(op);
  return pivot ? linkResourceOf(pivot) : op.def;
};

/** What the public graph's root fields (src/graphql/roots.ts) give a kind to add its root field with. */
export interface PublicParts {
  builder: Builder;
  refs: ObjectRefs;
  /** A payload type: the kind's fields, and `query`. */
  payload(name: string, fields: (t: DynamicFieldBuilder) => FieldMap, description: string): OutputRef;
  /**
   * A root field's description: what it does, then the REST route that does the same (and `also`, the other routes
   * that run it) and the scopes both need.
   */
  withRoute(text: string, op: Operation | undefined, also?: string): string;
  /** The fields of `Create<Name>Input` (`create`) and `<Name>Patch`. */
  inputFields(t: DynamicInputFieldBuilder, def: ResourceDef, create: boolean): InputFieldMap;
  /** The top-level operation of `kind` on `def`. */
  topLevel(def: ResourceDef, kind: Operation["kind"]): Operation | undefined;
}

/** The names a public mutation of `def` is made of. */
export const publicNames = (p: PublicParts, def: ResourceDef) => ({
  b: dynamic(p.builder),
  Name: pascal(def.name),
  Plural: pascal(def.plural),
  one: def.label.toLowerCase(),
  node: p.refs.objects.get(def.name),
});
