import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The PERSCOM reference material, kept as test data in `test/fixtures/perscom/` (copied unchanged from
 * the project's shared reference folder): the OpenAPI document and the per-operation notes read from
 * the application that serves it.
 */
export const referenceDir =
  process.env.PERSCOM_REFERENCE_DIR ?? path.resolve(fileURLToPath(new URL("../fixtures/perscom/", import.meta.url)));

/** A schema of the reference document (OpenAPI 3.0), or the JSON Schema made from one: the keywords read here. */
export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  title?: string;
  format?: string;
  nullable?: boolean;
  readOnly?: boolean;
  writeOnly?: boolean;
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  required?: string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  [keyword: string]: unknown;
}

/** A request or response body of the reference document. */
interface RefBody {
  content?: Record<string, { schema?: JsonSchema }>;
}

/** The parts of the reference OpenAPI document read here (a path item's other members are skipped by name). */
export interface RefDocument {
  paths: Record<string, Record<string, { responses: Record<string, RefBody>; requestBody?: RefBody }>>;
  components: { schemas: Record<string, JsonSchema> };
}
export type Method = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";

/** One row of `perscom-ops.json`. */
export interface OpNotes {
  method: string;
  path: string;
  tag: string;
  includes: string[];
  queryParams: string[];
  request: {
    contentTypes: string[];
    ref?: string;
    fields?: Record<string, { type: string; required: boolean; nullable?: boolean; readOnly?: boolean }>;
    inline?: unknown;
  } | null;
  success: { status: string; shape: string; ref?: string; fields?: string[] };
  app: {
    controller: string;
    registrar: string;
    orionAction: string;
    scopesChecked: string[];
    allowedIncludes: string[];
    pivotFillable: string[] | null;
  };
}

/** One operation of the reference OpenAPI document. */
export interface RefOp {
  /** `GET /{version}/ranks/{rank}` */
  key: string;
  method: Method;
  path: string;
  notes: OpNotes;
  /** The documented 2xx status. */
  documentedStatus: number;
  /** The documented success body schema, as written (OpenAPI 3.0, `$ref`s unresolved). */
  successSchema: JsonSchema;
  /** The documented JSON request body schema, as written; undefined when the operation documents none. */
  requestSchema?: JsonSchema;
  /** Path parameters after `{version}`, in order. */
  params: string[];
}

export interface Reference {
  doc: RefDocument;
  ops: RefOp[];
  components: Record<string, JsonSchema>;
}

export function loadReference(): Reference {
  const openapiFile = path.join(referenceDir, "perscom-openapi.json");
  const notesFile = path.join(referenceDir, "perscom-ops.json");
  if (!existsSync(openapiFile) || !existsSync(notesFile)) {
    throw new Error(`PERSCOM reference not found in ${referenceDir} (set PERSCOM_REFERENCE_DIR)`);
  }
  const doc: RefDocument = JSON.parse(readFileSync(openapiFile, "utf8"));
  const notes: OpNotes[] = JSON.parse(readFileSync(notesFile, "utf8"));
  const notesByKey = new Map(notes.map((n) => [`${n.method} ${n.path}`, n]));
  const ops: RefOp[] = [];
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const [m, op] of Object.entries(item)) {
      if (!["get", "post", "patch", "put", "delete"].includes(m)) continue;
      const method = m.toUpperCase() as Method;
      const key = `${method} ${p}`;
      const n = notesByKey.get(key);
      if (!n) throw new Error(`perscom-ops.json has no row for ${key}`);
      const success = Object.entries(op.responses).filter(([status]) => /^2\d\d$/.test(status));
      if (success.length !== 1)
        throw new Error(`${key}: expected one documented 2xx response, found ${success.length}`);
      const [status, response] = success[0];
      ops.push({
        key,
        method,
        path: p,
        notes: n,
        documentedStatus: Number(status),
        successSchema: response.content?.["application/json"]?.schema ?? {},
        requestSchema: op.requestBody?.content?.["application/json"]?.schema,
        params: [...p.matchAll(/\{(\w+)\}/g)].map((x) => x[1]).filter((x) => x !== "version"),
      });
    }
  }
  return { doc, ops, components: doc.components.schemas };
}

export const clone = <T>(value: T): T => structuredClone(value);

/**
 * OpenAPI 3.0 schema → JSON Schema (draft-07, as Ajv reads it), fully dereferenced (the document has no
 * cycles): `nullable` becomes a `null` type, siblings of `$ref` are ignored (OpenAPI 3.0 §4.7.26),
 * `readOnly` properties are not required in requests and `writeOnly` ones not in responses,
 * annotation-only keywords are dropped. A map keyed by id, which the document writes as a single
 * property literally named `{key}` (batch update bodies), becomes `additionalProperties`.
 */
export function toJsonSchema(
  node: JsonSchema,
  components: Record<string, JsonSchema>,
  mode: "request" | "response",
  seen: string[] = [],
): JsonSchema {
  if (typeof node !== "object" || node === null) return node;
  if (typeof node.$ref === "string") {
    const name = /^#\/components\/schemas\/(.+)$/.exec(node.$ref)?.[1];
    if (!name || !components[name]) throw new Error(`unresolvable $ref ${node.$ref}`);
    if (seen.includes(name)) throw new Error(`cyclic $ref ${[...seen, name].join(" → ")}`);
    return toJsonSchema(components[name], components, mode, [...seen, name]);
  }
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(node)) {
    switch (k) {
      case "properties": {
        const entries = Object.entries(v as Record<string, JsonSchema>);
        if (entries.length === 1 && entries[0][0] === "{key}") {
          out.additionalProperties = toJsonSchema(entries[0][1], components, mode, seen);
        } else {
          out.properties = Object.fromEntries(
            entries.map(([name, s]) => [name, toJsonSchema(s, components, mode, seen)]),
          );
        }
        break;
      }
      case "items":
      case "not":
        out[k] = toJsonSchema(v as JsonSchema, components, mode, seen);
        break;
      case "additionalProperties":
        out[k] = typeof v === "object" ? toJsonSchema(v as JsonSchema, components, mode, seen) : (v as boolean);
        break;
      case "allOf":
      case "anyOf":
      case "oneOf":
        out[k] = (v as JsonSchema[]).map((s) => toJsonSchema(s, components, mode, seen));
        break;
      case "example":
      case "examples":
      case "xml":
      case "externalDocs":
      case "deprecated":
      case "discriminator":
      case "default":
      case "nullable":
        break;
      default:
        out[k] = clone(v);
    }
  }
  if (Array.isArray(out.required) && out.properties) {
    const skip = mode === "response" ? "writeOnly" : "readOnly";
    out.required = out.required.filter((name) => !out.properties![name]?.[skip]);
    if (out.required.length === 0) delete out.required;
  }
  if (node.nullable === true) return nullable(out);
  return out;
}

/** `schema` or null. */
export function nullable(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === "string" && !schema.allOf && !schema.anyOf && !schema.oneOf) {
    const out: JsonSchema = { ...schema, type: [schema.type, "null"] };
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    return out;
  }
  if (Array.isArray(schema.type))
    return schema.type.includes("null") ? schema : { ...schema, type: [...schema.type, "null"] };
  return { anyOf: [schema, { type: "null" }] };
}

/**
 * Every subschema of `schema` (through properties, items, allOf/anyOf/oneOf, additionalProperties) with
 * the title of the nearest titled schema enclosing it (itself included): the component it belongs to.
 */
export function* subschemas(schema: JsonSchema, owner?: string): Generator<[JsonSchema, string | undefined]> {
  if (typeof schema !== "object" || schema === null) return;
  const here = typeof schema.title === "string" ? schema.title : owner;
  yield [schema, here];
  for (const s of Object.values(schema.properties ?? {})) yield* subschemas(s, here);
  if (schema.items) yield* subschemas(schema.items, here);
  if (typeof schema.additionalProperties === "object") yield* subschemas(schema.additionalProperties, here);
  for (const k of ["allOf", "anyOf", "oneOf"] as const) for (const s of schema[k] ?? []) yield* subschemas(s, here);
}

/**
 * Replaces property `name` wherever a subschema declares it (only in component `owner` when given),
 * and returns how many places changed. Exceptions use it to edit a copy of a schema.
 */
export function editProperty(
  schema: JsonSchema,
  name: string,
  edit: (property: JsonSchema) => JsonSchema,
  owner?: string,
): number {
  const hits = [...subschemas(schema)].filter(
    ([s, o]) => (owner === undefined || o === owner) && s.properties && name in s.properties,
  );
  for (const [s] of hits) s.properties![name] = edit(s.properties![name]);
  return hits.length;
}

/** Drops `name` from the `required` lists (only in component `owner` when given). */
export function unrequire(schema: JsonSchema, name: string, owner?: string): number {
  const hits = [...subschemas(schema)].filter(
    ([s, o]) => (owner === undefined || o === owner) && Array.isArray(s.required) && s.required.includes(name),
  );
  for (const [s] of hits) s.required = s.required!.filter((r) => r !== name);
  return hits.length;
}

/** Adds `names` to the `required` list of component `owner` (its own schema, the one carrying the title). */
export function requireIn(schema: JsonSchema, owner: string, names: string[]): number {
  const hits = [...subschemas(schema)].filter(([s]) => s.title === owner);
  for (const [s] of hits) s.required = [...new Set([...(s.required ?? []), ...names])];
  return hits.length;
}

/** The properties and required names of an object schema, merged through allOf. */
export function flatten(schema: JsonSchema): {
  properties: Record<string, JsonSchema>;
  required: string[];
  title?: string;
} {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  let title: string | undefined;
  const visit = (s: JsonSchema) => {
    title ??= s.title;
    Object.assign(properties, s.properties ?? {});
    required.push(...(s.required ?? []));
    for (const part of s.allOf ?? []) visit(part);
  };
  visit(schema);
  return { properties, required: [...new Set(required)], title };
}
