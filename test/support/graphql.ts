import {
  getNamedType, isCompositeType, isLeafType, isNonNullType, isObjectType, isUnionType, type GraphQLNamedType, type GraphQLObjectType, type GraphQLSchema,
} from "graphql";
import type { Operation } from "../../src/resources/operations.ts";
import { buildDocument } from "../../src/rest/documents.ts";
import { variablesOf } from "../../src/rest/body.ts";
import type { Client, Reply } from "../harness.ts";

/**
 * The GraphQL request that runs `op`'s root field with the arguments a REST request carries: the
 * document the generator builds for the operation (with `includes` selected) or, given `relations`, a
 * client's document selecting those relation fields (see `relationDocument`), and the REST body read
 * into variables. Sent to `/graphql` itself, as any GraphQL client would, files as a multipart request.
 */
export function graphqlRequest(
  schema: GraphQLSchema, op: Operation, params: Record<string, number>, body: unknown,
  options: { includes?: readonly string[]; files?: boolean; relations?: readonly string[] } = {},
) {
  // A view's always-embedded relations (the roster's) are REST's affair: a GraphQL client selects what it wants.
  const document = op.view?.alwaysIncludes ? { ...op, view: { ...op.view, alwaysIncludes: undefined } } : op;
  const { text, operationName } = options.relations
    ? { text: relationDocument(schema, op, options.relations), operationName: "Client" }
    : clientDocument(buildDocument(schema, document, options.includes ?? []));
  const variables = variablesOf(op, params, new URLSearchParams(), (body ?? {}) as Record<string, unknown>);
  return { query: text, operationName, variables: options.files === false ? withoutFiles(variables) : variables };
}

/**
 * A REST document as a client can send it: each row's `attributes` (a field of the internal schema REST runs on, not
 * of the public one) becomes `id`, which every row type has.
 */
const clientDocument = (built: { text: string; operationName: string }) => ({ ...built, text: built.text.replace(/\battributes\b/g, "id") });

/** The variables with every upload left out (GraphQL multipart uploads are tested on their own). */
function withoutFiles(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutFiles);
  if (value && typeof value === "object" && !(value instanceof File)) {
    return Object.fromEntries(Object.entries(value).filter(([, v]) => !(v instanceof File)).map(([k, v]) => [k, withoutFiles(v)]));
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
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, extractFiles(v, `${path}.${k}`, files)]));
  return value;
}

export async function sendGraphql(api: Client, request: { query: string; operationName: string; variables: unknown }): Promise<Reply> {
  const files: Array<[string, File]> = [];
  const variables = extractFiles(request.variables, "variables", files);
  if (!files.length) return api.post("/graphql", { ...request, variables });
  const form = new FormData();
  form.set("operations", JSON.stringify({ ...request, variables }));
  form.set("map", JSON.stringify(Object.fromEntries(files.map(([path], i) => [String(i), [path]]))));
  files.forEach(([, file], i) => form.set(String(i), file, file.name));
  return api.send("POST", "/graphql", form);
}

/** The error code of a GraphQL reply (`extensions.code` of its first error), or null. */
export const gqlCode = (r: Reply): string | null => r.body?.errors?.[0]?.extensions?.code ?? null;

/**
 * GraphQL documents written the way a client would: the root field of `op` with every argument passed
 * as a variable, and a selection of scalars plus the given relation fields (each with its own scalars
 * and the scalars of its relations), without aliases.
 */
export function relationDocument(schema: GraphQLSchema, op: Operation, relations: readonly string[]): string {
  const root = op.root === "query" ? schema.getQueryType()! : schema.getMutationType()!;
  const field = root.getFields()[op.field]!;
  const declared = field.args.map((a) => `$${a.name}: ${String(a.type)}`).join(", ");
  const passed = field.args.map((a) => `${a.name}: $${a.name}`).join(", ");
  const type = getNamedType(field.type);
  const row = isObjectType(type) && type.getFields().nodes ? (getNamedType(type.getFields().nodes!.type) as GraphQLObjectType) : type;
  const body = `${scalarsOf(row)} ${relations.map((name) => `${name} ${selectionOf(getNamedType((row as GraphQLObjectType).getFields()[name]!.type), 1)}`).join(" ")}`;
  const selection = row === type ? body : `totalCount nodes { ${body} }`;
  return `${op.root} Client${declared ? `(${declared})` : ""} { result: ${op.field}${passed ? `(${passed})` : ""} { ${selection} } }`;
}

/** The relation fields (object or union typed, no required arguments) of the rows `op` returns. */
export function relationFieldsOf(schema: GraphQLSchema, op: Operation): string[] {
  const root = op.root === "query" ? schema.getQueryType()! : schema.getMutationType()!;
  const type = getNamedType(root.getFields()[op.field]!.type);
  const row = isObjectType(type) && type.getFields().nodes ? getNamedType(type.getFields().nodes!.type) : type;
  if (!isObjectType(row)) return [];
  return Object.values(row.getFields()).filter((f) => isCompositeType(getNamedType(f.type)) && !f.args.some((a) => isNonNullType(a.type))).map((f) => f.name);
}

const scalarsOf = (type: GraphQLNamedType): string =>
  isObjectType(type)
    ? Object.values(type.getFields()).filter((f) => isLeafType(getNamedType(f.type)) && !f.args.some((a) => isNonNullType(a.type))).map((f) => f.name).join(" ")
    : "__typename";

function selectionOf(type: GraphQLNamedType, depth: number): string {
  // Members of a union may type a same-named column differently (String / String!): ids only, which agree.
  if (isUnionType(type)) return `{ __typename ${type.getTypes().map((t) => `... on ${t.name} { id }`).join(" ")} }`;
  if (!isObjectType(type)) return "";
  const nested = depth > 0
    ? Object.values(type.getFields())
      .filter((f) => isCompositeType(getNamedType(f.type)) && !f.args.some((a) => isNonNullType(a.type)))
      .map((f) => `${f.name} ${selectionOf(getNamedType(f.type), depth - 1)}`)
    : [];
  return `{ ${scalarsOf(type)} ${nested.join(" ")} }`;
}
