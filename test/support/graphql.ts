import {
  getNamedType,
  isCompositeType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isLeafType,
  isNonNullType,
  isObjectType,
  isUnionType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
} from "graphql";
import { encodeGlobalID } from "@pothos/plugin-relay";
import type { RelationDef, ResourceDef } from "../../src/resources/define.ts";
import { operations, type Operation } from "../../src/resources/operations.ts";
import { pascal } from "../../src/core/names.ts";
import { variablesOf } from "../../src/rest/kinds.ts";
import type { Client, Reply } from "../harness.ts";

/*
 * The public graph (`/graphql`) as a client sees it, derived from the registry: which public root field does what a
 * REST operation does, and the GraphQL request that does it with the arguments a REST request carries. REST-only
 * operations (nested writes, batch updates and deletes, pivots, associations, commands) have no public field.
 *
 * - a top-level list or search → the resource's connection (`users(first:, where:)`), a view's list → the view's;
 * - a top-level show → the lookup (`user(rowId:)`), a view's show → `node(id:)`;
 * - a nested list, search or show → the parent's lookup (or `node(id:)`) and its relation: a connection
 *   (`user(rowId:) { rankRecords(where:) { nodes } }`) or a to-one field;
 * - create, update, delete and their batches → the payload mutations; attach, detach, sync, toggle, pivot → the link
 *   mutations; a command → its mutation.
 * A mapping is used only when the schema has the field, so the public surface may grow without a change here.
 */

export interface PublicRequest {
  /** The public root field the request runs. */
  field: string;
  query: string;
  operationName: "Client";
  variables: Record<string, unknown>;
  root: "query" | "mutation";
}

/** A REST id of `def` as a public global id. */
export const globalId = (def: ResourceDef, rowId: number) => encodeGlobalID(pascal(def.name), rowId);

/** The public lookup (`user(rowId:)`) of a resource, if it has one. */
const lookupOf = (schema: GraphQLSchema, def: ResourceDef) =>
  schema
    .getQueryType()!
    .getFields()
    [def.name]?.args.some((a) => a.name === "rowId")
    ? def.name
    : undefined;

/** The public object field of a relation: a many-to-many one is named by its relation key unless it is a filtered subset. */
export function relationFieldOf(schema: GraphQLSchema, parent: ResourceDef, relation: RelationDef): string | undefined {
  const type = schema.getType(pascal(parent.name)) as GraphQLObjectType | undefined;
  if (!type) return undefined;
  const key = Object.entries(parent.relations).find(([, r]) => r === relation)?.[0];
  const named = "filter" in relation && relation.filter ? relation.filter.name : relation.field;
  const candidates =
    relation.kind === "belongsToMany" && !("filter" in relation && relation.filter) ? [key, named] : [named, key];
  return candidates.find((c): c is string => !!c && !!type.getFields()[c]);
}

/** The public root field that does what `op` does, or undefined for REST-only operations. */
export function publicFieldOf(schema: GraphQLSchema, op: Operation): string | undefined {
  const query = schema.getQueryType()!.getFields();
  const mutation = schema.getMutationType()!.getFields();
  const Name = pascal(op.def.name);
  if (op.parent) {
    if (op.root === "query") {
      if (!relationFieldOf(schema, op.parent.def, op.parent.relation)) return undefined;
      return lookupOf(schema, op.parent.def) ?? "node";
    }
    return ["attach", "detach", "sync", "toggle", "pivot"].includes(op.kind) &&
      op.parent.relation.kind === "belongsToMany" &&
      mutation[op.field]
      ? op.field
      : undefined;
  }
  if (op.kind === "command" || op.kind === "action") return mutation[op.field] ? op.field : undefined;
  if (op.kind === "feed") return query[op.field] ? op.field : undefined;
  if (op.view) return op.kind === "list" ? (query[op.view.field] ? op.view.field : undefined) : "node";
  const candidates: Partial<Record<Operation["kind"], string>> = {
    list: op.def.plural,
    search: op.def.plural,
    show: op.def.name,
    create: `create${Name}`,
    update: `update${Name}`,
    delete: `delete${Name}`,
    batchCreate: `create${pascal(op.def.plural)}`,
    batchUpdate: `update${pascal(op.def.plural)}`,
    batchDelete: `delete${pascal(op.def.plural)}`,
  };
  const name = candidates[op.kind];
  if (!name) return undefined;
  return (op.root === "query" ? query : mutation)[name] ? name : undefined;
}

/** Operations with a public root field of their own (no nested reads, no searches, no view shows): one per root field. */
export function publicRootOperations(schema: GraphQLSchema): Array<{ op: Operation; field: string }> {
  return operations
    .filter((op) => op.kind !== "search" && !(op.parent && op.root === "query") && !(op.view && op.kind === "show"))
    .flatMap((op) => {
      const field = publicFieldOf(schema, op);
      return field ? [{ op, field }] : [];
    });
}

// ── Selections ────────────────────────────────────────────────────────────────────────────────────

const hasRequiredArgs = (f: GraphQLField<unknown, unknown>) =>
  f.args.some((a) => isNonNullType(a.type) && a.defaultValue === undefined);
/** The row type of a connection type (`UserConnection` → `User`), or undefined. */
const connectionRow = (type: GraphQLNamedType) =>
  isObjectType(type) && type.getFields().nodes && type.getFields().pageInfo
    ? (getNamedType(type.getFields().nodes.type) as GraphQLNamedType)
    : undefined;

const scalarsOf = (type: GraphQLNamedType): string =>
  isObjectType(type)
    ? Object.values(type.getFields())
        .filter((f) => isLeafType(getNamedType(f.type)) && !hasRequiredArgs(f))
        .map((f) => f.name)
        .join(" ")
    : "__typename";

/** Relation fields (objects, unions, connections; no required arguments) of a row type. */
export function relationFieldsOfType(type: GraphQLNamedType): string[] {
  if (!isObjectType(type)) return [];
  return Object.values(type.getFields())
    .filter((f) => isCompositeType(getNamedType(f.type)) && !hasRequiredArgs(f))
    .map((f) => f.name);
}

/** A selection of a row: its scalars and, `depth` levels deep, its relations (connections through `nodes`). */
export function selectionOf(type: GraphQLNamedType, depth: number, only?: readonly string[]): string {
  const row = connectionRow(type);
  if (row) return `{ totalCount nodes ${selectionOf(row, depth, only)} }`;
  // Members of a union may type a same-named column differently (String / String!): ids only, which agree.
  if (isUnionType(type))
    return `{ __typename ${type
      .getTypes()
      .map((t) => `... on ${t.name} { id rowId }`)
      .join(" ")} }`;
  // Any node (a newsfeed item's subject): its ids.
  if (isInterfaceType(type)) return "{ __typename id }";
  if (!isObjectType(type)) return "";
  const relations = depth > 0 ? (only ?? relationFieldsOfType(type)) : [];
  const nested = relations.map(
    (name) => `${name} ${selectionOf(getNamedType(type.getFields()[name].type), depth - 1)}`,
  );
  return `{ ${scalarsOf(type)} ${nested.join(" ")} }`;
}

/** The row type a public request for `op` reads or writes. */
export function rowTypeOf(schema: GraphQLSchema, op: Operation): GraphQLObjectType {
  return schema.getType(pascal(op.def.name)) as GraphQLObjectType;
}

// ── Variables: a REST body read as REST reads it, written with the public inputs' names and enums ─────

/** A value for an input type: unknown keys (REST-only columns) dropped, enum wire values written as enum names. */
function toInput(type: GraphQLInputType, value: unknown): unknown {
  if (value === null || value === undefined || value instanceof File) return value;
  const named = getNamedType(type);
  if (Array.isArray(value)) return value.map((v) => toInput(type, v));
  if (isEnumType(named)) return named.getValues().find((v) => v.value === value || v.name === value)?.name ?? value;
  if (isInputObjectType(named) && typeof value === "object") {
    const fields = named.getFields();
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([k]) => fields[k])
        .map(([k, v]) => [k, toInput(fields[k].type, v)]),
    );
  }
  return value;
}

const argType = (schema: GraphQLSchema, root: "query" | "mutation", field: string, arg: string) =>
  (root === "query" ? schema.getQueryType()! : schema.getMutationType()!)
    .getFields()
    [field].args.find((a) => a.name === arg)!.type;

/** The public mutation's arguments for a REST write: `input`, `inputs`, `rowId`, `items`/`rowIds` and flags. */
function mutationVariables(
  schema: GraphQLSchema,
  op: Operation,
  field: string,
  params: Record<string, number>,
  body: unknown,
): Record<string, unknown> {
  const vars = variablesOf(op, params, new URLSearchParams(), (body ?? {}) as Record<string, unknown>) as Record<
    string,
    unknown
  >;
  const arg = (name: string, value: unknown) => toInput(argType(schema, "mutation", field, name), value);
  switch (op.kind) {
    case "create":
      return { input: arg("input", vars.input) };
    case "update":
      return { rowId: params[op.def.param], input: arg("input", vars.input) };
    case "delete":
      return { rowId: params[op.def.param] };
    case "batchCreate":
      return { inputs: arg("inputs", vars.resources) };
    case "batchUpdate":
      return {
        items: arg(
          "items",
          (vars.resources as Array<{ id: number; input: unknown }>).map(({ id, input }) => ({ rowId: id, input })),
        ),
      };
    case "batchDelete":
      return { rowIds: vars.resources };
    case "command":
      return {};
    case "action":
      return { rowId: params[op.subject!.param], ...(vars.input ? { input: arg("input", vars.input) } : {}) };
    case "pivot":
      return {
        rowId: params[op.parent!.def.param],
        item: arg("item", { rowId: params[op.parent!.route.param], ...(vars.pivot as object | undefined) }),
      };
    case "detach":
      return { rowId: params[op.parent!.def.param], rowIds: vars.resources };
    case "attach":
    case "sync":
    case "toggle": {
      const items = (vars.resources as Array<{ id: number; pivot?: Record<string, unknown> }>).map(({ id, pivot }) => ({
        rowId: id,
        ...pivot,
      }));
      return {
        rowId: params[op.parent!.def.param],
        items: arg("items", items),
        ...(op.kind === "sync" && vars.detaching !== undefined ? { detaching: vars.detaching } : {}),
        ...(op.kind === "attach" && vars.duplicates !== undefined ? { duplicates: vars.duplicates } : {}),
      };
    }
  }
  throw new Error(`${op.field}: no public mutation`);
}

export interface RequestOptions {
  /** The row selection (default: `id rowId`); `selectionOf` builds deeper ones. */
  select?: string;
  /** A `where` for connections (lists, searches, nested lists). */
  where?: unknown;
  /** Uploads left out of the variables (multipart uploads are tested on their own). */
  files?: boolean;
}

/**
 * The public GraphQL request that does what `op` does with a REST request's path parameters and body, or undefined
 * when `op` has no public field. The reply's `data.result` holds the root field; `resultRows` reads its rows.
 */
export function publicRequest(
  schema: GraphQLSchema,
  op: Operation,
  params: Record<string, number>,
  body: unknown,
  options: RequestOptions = {},
): PublicRequest | undefined {
  const field = publicFieldOf(schema, op);
  if (!field) return undefined;
  const rowSelection = options.select ?? "{ id rowId }";
  const Type = pascal(op.def.name);
  const make = (
    root: PublicRequest["root"],
    declared: string,
    call: string,
    selection: string,
    variables: Record<string, unknown>,
  ): PublicRequest => ({
    field,
    root,
    operationName: "Client",
    query: `${root} Client${declared ? `(${declared})` : ""} { result: ${call} ${selection} }`,
    variables: options.files === false ? (withoutFiles(variables) as Record<string, unknown>) : variables,
  });
  const whereType = (f: string, root = schema.getQueryType()!) =>
    String(root.getFields()[f].args.find((a) => a.name === "where")!.type);

  if (op.root === "mutation") {
    const vars = mutationVariables(schema, op, field, params, body);
    const mutation = schema.getMutationType()!.getFields()[field];
    const declared = Object.keys(vars)
      .map((name) => `$${name}: ${String(mutation.args.find((a) => a.name === name)!.type)}`)
      .join(", ");
    const passed = Object.keys(vars)
      .map((name) => `${name}: $${name}`)
      .join(", ");
    // The payload's row: the resource written, its rows (batch) or the link's parent.
    const payload = getNamedType(mutation.type) as GraphQLObjectType;
    const key = Object.keys(payload.getFields()).find((k) => k !== "query" && !k.endsWith("RowIds"))!;
    const ids = Object.keys(payload.getFields())
      .filter((k) => k.endsWith("RowIds"))
      .join(" ");
    const leaf = isLeafType(getNamedType(payload.getFields()[key].type));
    const selection = `{ ${key} ${leaf ? "" : op.parent ? "{ id rowId }" : rowSelection} ${ids} }`;
    return make("mutation", declared, `${field}${passed ? `(${passed})` : ""}`, selection, vars);
  }

  if (op.parent) {
    const parent = op.parent.def;
    const rel = relationFieldOf(schema, parent, op.parent.relation)!;
    const relField = (schema.getType(pascal(parent.name)) as GraphQLObjectType).getFields()[rel];
    const parentId = params[parent.param];
    const childParam = op.path.includes(`{${parentParamOfChild(op)}}`) ? params[parentParamOfChild(op)] : undefined;
    let inner: string;
    const vars: Record<string, unknown> = {};
    const toMany = !!connectionRow(getNamedType(relField.type));
    // A to-one relation takes no `where`.
    if (!toMany && options.where !== undefined) return undefined;
    if (toMany) {
      const where = options.where ?? (childParam !== undefined ? { rowId: { equals: childParam } } : undefined);
      if (where !== undefined) vars.where = where;
      inner = `related: ${rel}(first: 100${where !== undefined ? ", where: $where" : ""}) { totalCount nodes ${rowSelection} }`;
    } else inner = `related: ${rel} ${rowSelection}`;
    const whereDecl =
      vars.where !== undefined ? `, $where: ${String(relField.args.find((a) => a.name === "where")!.type)}` : "";
    if (field === "node") {
      return make("query", `$id: ID!${whereDecl}`, "node(id: $id)", `{ ... on ${pascal(parent.name)} { ${inner} } }`, {
        id: globalId(parent, parentId),
        ...vars,
      });
    }
    return make("query", `$rowId: Int!${whereDecl}`, `${field}(rowId: $rowId)`, `{ ${inner} }`, {
      rowId: parentId,
      ...vars,
    });
  }
  if (op.kind === "show") {
    const rowId = params[op.def.param];
    if (field === "node")
      return make("query", "$id: ID!", "node(id: $id)", `{ ... on ${Type} ${rowSelection} }`, {
        id: globalId(op.def, rowId),
      });
    return make("query", "$rowId: Int!", `${field}(rowId: $rowId)`, rowSelection, { rowId });
  }
  // A view that is a row, not a connection (`me`).
  if (!connectionRow(getNamedType(schema.getQueryType()!.getFields()[field].type))) {
    return options.where !== undefined ? undefined : make("query", "", field, rowSelection, {});
  }
  const vars: Record<string, unknown> = { first: 100 };
  if (options.where !== undefined) vars.where = options.where;
  return make(
    "query",
    `$first: Int${options.where !== undefined ? `, $where: ${whereType(field)}` : ""}`,
    `${field}(first: $first${options.where !== undefined ? ", where: $where" : ""})`,
    `{ totalCount nodes ${rowSelection} }`,
    vars,
  );
}

/** The path parameter naming the related row of a nested route (`rank_record` in `/users/{user}/rank-records/{rank_record}`). */
function parentParamOfChild(op: Operation): string {
  return op.parent!.route.param;
}

/**
 * The rows a reply to `publicRequest` holds: a connection's nodes, a to-one relation or row as a list of zero or one,
 * or null when the root (a lookup, a parent) is null.
 */
export function resultRows(r: Reply): unknown[] | null {
  let at = r.body?.data?.result;
  if (at == null) return null;
  // A nested read: the parent, and its relation under `related`.
  if ("related" in at) at = at.related;
  if (at == null) return [];
  return Array.isArray(at.nodes) ? at.nodes : [at];
}

/** The variables with every upload left out (GraphQL multipart uploads are tested on their own). */
function withoutFiles(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutFiles);
  if (value && typeof value === "object" && !(value instanceof File)) {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => !(v instanceof File))
        .map(([k, v]) => [k, withoutFiles(v)]),
    );
  }
  return value;
}

/** Replaces every File in `value` by null, recording its path (`variables.input.image`) for the multipart map. */
function extractFiles(value: unknown, path: string, files: Array<[string, File]>): unknown {
  if (value instanceof File) {
    files.push([path, value]);
    return null;
  }
  if (Array.isArray(value)) return value.map((v, i) => extractFiles(v, `${path}.${i}`, files));
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, extractFiles(v, `${path}.${k}`, files)]));
  return value;
}

/** Sends a request to `/graphql`, files as a multipart request. */
export async function sendGraphql(
  api: Client,
  request: { query: string; operationName?: string; variables?: unknown },
): Promise<Reply> {
  const files: Array<[string, File]> = [];
  const variables = extractFiles(request.variables ?? {}, "variables", files);
  const body = { query: request.query, operationName: request.operationName, variables };
  if (!files.length) return api.post("/graphql", body);
  const form = new FormData();
  form.set("operations", JSON.stringify(body));
  form.set("map", JSON.stringify(Object.fromEntries(files.map(([path], i) => [String(i), [path]]))));
  files.forEach(([, file], i) => form.set(String(i), file, file.name));
  return api.send("POST", "/graphql", form);
}

/** The error code of a GraphQL reply (`extensions.code` of its first error), or null. */
export const gqlCode = (r: Reply): string | null => r.body?.errors?.[0]?.extensions?.code ?? null;

// ── Filters through relations ─────────────────────────────────────────────────────────────────────

/** One relation a connection's `where` can filter through: its where key, the quantifiers it takes, and the related type. */
export interface RelationFilter {
  key: string;
  /** `some`/`every`/`none` on to-many relations, `is`/`isNot` on to-one ones. */
  quantifiers: string[];
  toMany: boolean;
  /** The related row type's name (`Rank`), and its where type's string columns. */
  target: string;
  stringColumns: string[];
}

/** The relation filters of a root connection field's `where` (`users(where: { rankRecords: ... })`), read from the schema. */
export function relationFiltersOf(schema: GraphQLSchema, field: string): RelationFilter[] {
  const arg = schema
    .getQueryType()!
    .getFields()
    [field]?.args.find((a) => a.name === "where");
  if (!arg) return [];
  const where = getNamedType(arg.type);
  if (!isInputObjectType(where)) return [];
  return Object.values(where.getFields()).flatMap((f) => {
    const filter = getNamedType(f.type);
    if (!isInputObjectType(filter) || ["AND", "OR", "NOT"].includes(f.name)) return [];
    const quantifiers = Object.keys(filter.getFields()).filter((q) =>
      ["some", "every", "none", "is", "isNot"].includes(q),
    );
    if (!quantifiers.length) return [];
    const targetWhere = getNamedType(filter.getFields()[quantifiers[0]].type);
    if (!isInputObjectType(targetWhere)) return [];
    const stringColumns = Object.values(targetWhere.getFields())
      .filter((c) => getNamedType(c.type).name === "StringFilter")
      .map((c) => c.name);
    return [
      {
        key: f.name,
        quantifiers,
        toMany: quantifiers.includes("some"),
        target: targetWhere.name.replace(/Where$/, ""),
        stringColumns,
      },
    ];
  });
}

/** The string columns of a resource's `where` type (`UserWhere`). */
export function stringColumnsOf(schema: GraphQLSchema, def: ResourceDef): string[] {
  const where = schema.getType(`${pascal(def.name)}Where`);
  if (!where || !isInputObjectType(where)) return [];
  return Object.values(where.getFields())
    .filter((c) => getNamedType(c.type).name === "StringFilter")
    .map((c) => c.name);
}
