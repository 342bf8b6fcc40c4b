import { GraphQLError, Kind, type ValueNode } from "graphql";
import type { Builder } from "./builder.ts";
import { isFile } from "../files/storage.ts";
import { formatDate, parseDate } from "../core/dates.ts";

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
    serialize: (value) => formatDate(value),
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
