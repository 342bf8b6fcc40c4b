import { GraphQLError, Kind, type ValueNode } from "graphql";
import type { Builder } from "./builder.ts";
import { isFile } from "../files/storage.ts";
import { isoMicroseconds } from "../db/timestamps.ts";

/** PERSCOM's date format: ISO-8601 UTC with microseconds, `2024-05-01T13:45:12.000000Z`. */
export function formatDate(value: Date | string): string {
  return isoMicroseconds(value instanceof Date ? value : new Date(value));
}

/** Accepts ISO-8601 (any fraction digits), `YYYY-MM-DD` and `YYYY-MM-DD HH:MM:SS`; UTC unless an offset is given. */
export function parseDate(value: unknown): Date {
  if (typeof value !== "string" || value.trim() === "") throw new GraphQLError("must be a valid date");
  const m = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2})?)(?:\.(\d+))?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i.exec(value.trim());
  if (!m) throw new GraphQLError("must be a valid date");
  const [, day, time = "00:00:00", fraction = "0", zone = "Z"] = m;
  const millis = fraction.padEnd(3, "0").slice(0, 3);
  const date = new Date(`${day}T${time.length === 5 ? `${time}:00` : time}.${millis}${zone.toUpperCase()}`);
  const rolledOver = zone.toUpperCase() === "Z" && !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) !== day;
  if (Number.isNaN(date.getTime()) || rolledOver) {
    throw new GraphQLError("must be a valid date");
  }
  return date;
}

function literalToJson(ast: ValueNode): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.ENUM:
      return ast.value;
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.NULL:
      return null;
    case Kind.LIST:
      return ast.values.map(literalToJson);
    case Kind.OBJECT:
      return Object.fromEntries(ast.fields.map((f) => [f.name.value, literalToJson(f.value)]));
    default:
      throw new GraphQLError("Variables are not allowed inside JSON literals");
  }
}

export function addScalars(builder: Builder): void {
  builder.scalarType("DateTime", {
    description: "UTC date-time, ISO-8601 with microseconds on output; ISO-8601 or `YYYY-MM-DD HH:MM:SS` on input.",
    serialize: (value) => formatDate(value as Date | string),
    parseValue: parseDate,
    parseLiteral: (ast) => parseDate(ast.kind === Kind.STRING ? ast.value : undefined),
  });
  builder.scalarType("JSON", {
    description: "Any JSON value.",
    serialize: (value) => value,
    parseValue: (value) => value,
    parseLiteral: literalToJson,
  });
  builder.scalarType("File", {
    description: "An uploaded file (GraphQL multipart request).",
    serialize: () => {
      throw new GraphQLError("File is an input-only scalar");
    },
    parseValue: (value) => {
      if (!isFile(value)) throw new GraphQLError("must be a file");
      return value;
    },
  });
}
