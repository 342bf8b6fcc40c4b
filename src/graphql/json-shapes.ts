import type { ComputedField, FieldDef } from "../resources/define.ts";
import { isClosed, type JsonShape, type ObjectShape } from "../resources/json-shapes.ts";
import type { Builder } from "./builder.ts";
import { enumRef } from "./enums.ts";
import { dynamic, type Row } from "./pothos-dynamic.ts";

/**
 * GraphQL types of the registry's JSON columns (src/resources/json-shapes.ts): a closed shape is typed (a list of
 * enum values, `[FieldOption!]`), any other stays `JSON`.
 */
const made = new WeakMap<Builder, Map<string, unknown>>();

function once(builder: Builder, name: string, make: () => unknown): unknown {
  let refs = made.get(builder);
  if (!refs) made.set(builder, (refs = new Map()));
  if (!refs.has(name)) refs.set(name, make());
  return refs.get(name);
}

function typeOf(builder: Builder, shape: JsonShape, input: boolean): unknown {
  switch (shape.kind) {
    case "string":
      return shape.enum ? enumRef(builder, shape.enum) : "String";
    case "integer":
      return "Int";
    case "number":
      return "Float";
    case "boolean":
      return "Boolean";
    case "list":
      return [typeOf(builder, shape.items, input)];
    case "object":
      return input ? inputObject(builder, shape) : outputObject(builder, shape);
    default:
      return "JSON";
  }
}

function outputObject(builder: Builder, shape: ObjectShape): unknown {
  return once(builder, shape.name, () =>
    dynamic(builder)
      .objectRef(shape.name)
      .implement({
        description: shape.description,
        fields: (t) =>
          Object.fromEntries(
            Object.entries(shape.properties).map(([key, p]) => [
              key,
              t.field({
                type: typeOf(builder, p.shape, false),
                nullable: !!p.nullable || !!p.optional,
                description: p.shape.description,
                resolve: (o: Row) => o[key],
              }),
            ]),
          ),
      }),
  );
}

function inputObject(builder: Builder, shape: ObjectShape): unknown {
  const name = `${shape.name}Input`;
  return once(builder, name, () =>
    dynamic(builder).inputType(name, {
      description: shape.description,
      fields: (t) =>
        Object.fromEntries(
          Object.entries(shape.properties).map(([key, p]) => [
            key,
            t.field({
              type: typeOf(builder, p.shape, true),
              required: !p.optional && !p.nullable,
              description: p.shape.description,
            }),
          ]),
        ),
    }),
  );
}

/** The GraphQL type a JSON column is shown as: its shape's where closed, else `JSON`. */
export const jsonOutputType = (builder: Builder, f: Pick<FieldDef | ComputedField, "shape">): unknown =>
  f.shape && isClosed(f.shape) ? typeOf(builder, f.shape, false) : "JSON";

/** The GraphQL input type of a JSON column: its shape's where closed (what REST takes beside it is REST's), else `JSON`. */
export const jsonInputType = (builder: Builder, f: Pick<FieldDef, "shape">): unknown =>
  f.shape && isClosed(f.shape) ? typeOf(builder, f.shape, true) : "JSON";

/** Whether GraphQL shows the column typed (nullable only where the column is), or as `JSON` (always nullable). */
export const typedJson = (f: Pick<FieldDef | ComputedField, "shape">): boolean => !!f.shape && isClosed(f.shape);
