/**
 * The shapes of the registry's JSON columns: one description per column (`FieldDef.shape`) that the OpenAPI document
 * prints as the property's schema (`jsonSchemaOf`), that checks a write (`shapeProblem`), and that GraphQL turns into
 * a type where it is closed (src/graphql/json-shapes.ts). Plain data: nothing here knows GraphQL, HTTP or the database.
 */
import type { EnumDef } from "./enums.ts";

interface Described {
  /** What the value is, in words (printed in the OpenAPI document). */
  description?: string;
}

export interface StringShape extends Described {
  kind: "string";
  /** A closed set of values: a GraphQL enum, an OpenAPI `enum`. */
  enum?: EnumDef;
}

export interface IntegerShape extends Described {
  kind: "integer";
}

export interface ScalarShape extends Described {
  kind: "number" | "boolean";
}

export interface ListShape extends Described {
  kind: "list";
  items: JsonShape;
  /** Fewest items a write may send. */
  minItems?: number;
  /** A write may send one item alone for a list of one (PERSCOM's enum collections); it is stored as a list. */
  single?: boolean;
}

export interface PropertyShape {
  shape: JsonShape;
  /** May be left out. */
  optional?: boolean;
  /** May be null. */
  nullable?: boolean;
}

/** An object with a fixed set of keys: a GraphQL object type `name` (and input `<name>Input`). */
export interface ObjectShape extends Described {
  kind: "object";
  name: string;
  properties: Record<string, PropertyShape>;
}

/** An object whose keys are not fixed (values of custom fields keyed by the field's key): `JSON` in GraphQL. */
export interface MapShape extends Described {
  kind: "map";
  /** The keys it has when present, beside the others. */
  properties?: Record<string, PropertyShape>;
  /** The shape of every other key's value. */
  values: JsonShape;
}

/** One of several shapes (a setting's payload): `JSON` in GraphQL. */
export interface AnyOfShape extends Described {
  kind: "anyOf";
  of: JsonShape[];
}

/** Any JSON value at all, inside a shape that says more around it (the items of a setting's list payload). */
export interface AnyValueShape extends Described {
  kind: "any";
}

export type JsonShape =
  | StringShape
  | IntegerShape
  | ScalarShape
  | ListShape
  | ObjectShape
  | MapShape
  | AnyOfShape
  | AnyValueShape;

export const jsonString = (o: Omit<StringShape, "kind"> = {}): StringShape => ({ kind: "string", ...o });
export const jsonInteger = (o: Omit<IntegerShape, "kind"> = {}): IntegerShape => ({ kind: "integer", ...o });
export const jsonNumber = (o: Described = {}): ScalarShape => ({ kind: "number", ...o });
export const jsonBoolean = (o: Described = {}): ScalarShape => ({ kind: "boolean", ...o });
export const listOf = (items: JsonShape, o: Omit<ListShape, "kind" | "items"> = {}): ListShape => ({
  kind: "list",
  items,
  ...o,
});
export const objectOf = (
  name: string,
  properties: Record<string, JsonShape | PropertyShape>,
  o: Described = {},
): ObjectShape => ({
  kind: "object",
  name,
  properties: Object.fromEntries(Object.entries(properties).map(([k, p]) => [k, "shape" in p ? p : { shape: p }])),
  ...o,
});
export const mapOf = (values: JsonShape, o: Omit<MapShape, "kind" | "values"> = {}): MapShape => ({
  kind: "map",
  values,
  ...o,
});
export const anyOf = (of: JsonShape[], o: Described = {}): AnyOfShape => ({ kind: "anyOf", of, ...o });
export const anyValue = (o: Described = {}): AnyValueShape => ({ kind: "any", ...o });

/** Whether GraphQL can type the shape (no free-form keys, no alternatives); otherwise it is `JSON` there. */
export function isClosed(shape: JsonShape): boolean {
  switch (shape.kind) {
    case "list":
      return isClosed(shape.items);
    case "object":
      return Object.values(shape.properties).every((p) => isClosed(p.shape));
    case "map":
    case "anyOf":
    case "any":
      return false;
    default:
      return true;
  }
}

const enumValues = (set: EnumDef) => Object.values(set.values).map((v) => v.value);

type Schema = Record<string, unknown>;
const orNull = (schema: Schema): Schema =>
  typeof schema.type === "string" ? { ...schema, type: [schema.type, "null"] } : { anyOf: [schema, { type: "null" }] };
const described = (schema: Schema, shape: Described): Schema =>
  shape.description ? { ...schema, description: shape.description } : schema;

/**
 * The shape as a JSON Schema (2020-12, as OpenAPI 3.1 uses it): as a write may send it (`input`: one item alone for a
 * `single` list, the fewest items) or as the API returns it.
 */
export function jsonSchemaOf(shape: JsonShape, input = false): Schema {
  const properties = (props: Record<string, PropertyShape>) =>
    Object.fromEntries(
      Object.entries(props).map(([k, p]) => {
        const schema = jsonSchemaOf(p.shape, input);
        return [k, p.nullable ? orNull(schema) : schema];
      }),
    );
  const required = (props: Record<string, PropertyShape>) =>
    Object.entries(props)
      .filter(([, p]) => !p.optional || !input)
      .map(([k]) => k);
  switch (shape.kind) {
    case "string": {
      const values = shape.enum ? enumValues(shape.enum) : null;
      return described({ type: "string", ...(values ? { enum: values } : {}) }, shape);
    }
    case "integer":
      return described({ type: "integer" }, shape);
    case "number":
      return described({ type: "number" }, shape);
    case "boolean":
      return described({ type: "boolean" }, shape);
    case "list": {
      const list: Schema = {
        type: "array",
        items: jsonSchemaOf(shape.items, input),
        ...(input && shape.minItems ? { minItems: shape.minItems } : {}),
      };
      return described(input && shape.single ? { anyOf: [jsonSchemaOf(shape.items, input), list] } : list, shape);
    }
    case "object": {
      const req = required(shape.properties);
      return described(
        {
          type: "object",
          properties: properties(shape.properties),
          ...(req.length ? { required: req } : {}),
          additionalProperties: false,
        },
        shape,
      );
    }
    case "map": {
      // Keys of an open object are there when written by this service; another's rows (an import) may lack them.
      const req = Object.entries(shape.properties ?? {})
        .filter(([, p]) => !p.optional)
        .map(([k]) => k);
      return described(
        {
          type: "object",
          ...(shape.properties ? { properties: properties(shape.properties) } : {}),
          ...(req.length ? { required: req } : {}),
          additionalProperties: jsonSchemaOf(shape.values, input),
        },
        shape,
      );
    }
    case "anyOf":
      return described({ anyOf: shape.of.map((s) => jsonSchemaOf(s, input)) }, shape);
    case "any":
      return described({}, shape);
  }
}

/** What is wrong with a value: where (keys below the column, `0.label`) and what it should be, for a field error. */
export interface ShapeProblem {
  path: string[];
  /** Ends the sentence "The <field> field ...": "must be a string", "is required". */
  problem: string;
  /** The part that does not fit (undefined for a missing key). */
  value: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const kindWords: Record<JsonShape["kind"], string> = {
  string: "must be a string",
  integer: "must be an integer",
  number: "must be a number",
  boolean: "must be true or false",
  list: "must be a list",
  object: "must be an object",
  map: "must be an object",
  anyOf: "is invalid",
  any: "is invalid",
};

/** The first way `value` (a write's, so `single` lists may be one item) does not fit `shape`, or null when it fits. */
export function shapeProblem(shape: JsonShape, value: unknown, path: string[] = []): ShapeProblem | null {
  const wrong = (problem = kindWords[shape.kind]): ShapeProblem => ({ path, problem, value });
  switch (shape.kind) {
    case "string":
      if (typeof value !== "string") return wrong();
      return shape.enum && !enumValues(shape.enum).includes(value) ? wrong("is invalid") : null;
    case "integer":
      return Number.isInteger(value) ? null : wrong();
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? null : wrong();
    case "boolean":
      return typeof value === "boolean" ? null : wrong();
    case "list": {
      if (!Array.isArray(value)) return shape.single ? shapeProblem(shape.items, value, path) : wrong();
      if (shape.minItems && value.length < shape.minItems)
        return wrong(`must have at least ${shape.minItems} item${shape.minItems === 1 ? "" : "s"}`);
      for (const [i, item] of value.entries()) {
        const found = shapeProblem(shape.items, item, [...path, String(i)]);
        if (found) return found;
      }
      return null;
    }
    case "object":
    case "map": {
      if (!isObject(value)) return wrong();
      for (const [key, p] of Object.entries(shape.properties ?? {})) {
        const v = Object.hasOwn(value, key) ? value[key] : undefined;
        if (v === undefined) {
          if (!p.optional && shape.kind === "object")
            return { path: [...path, key], problem: "is required", value: undefined };
          continue;
        }
        if (v === null && p.nullable) continue;
        const found = shapeProblem(p.shape, v, [...path, key]);
        if (found) return found;
      }
      for (const [key, v] of Object.entries(value)) {
        if (shape.properties && Object.hasOwn(shape.properties, key)) continue;
        if (shape.kind === "object") return { path: [...path, key], problem: "is not allowed", value: v };
        const found = shapeProblem(shape.values, v, [...path, key]);
        if (found) return found;
      }
      return null;
    }
    case "any":
      return null;
    case "anyOf":
      return shape.of.some((s) => shapeProblem(s, value, path) === null) ? null : wrong();
  }
}
