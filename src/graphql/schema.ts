import { lexicographicSortSchema, printSchema, type GraphQLSchema } from "graphql";
import { createBuilder } from "./builder.ts";
import { addScalars } from "./scalars.ts";
import { addObjectTypes } from "./objects.ts";
import { addOperations } from "./operations.ts";

/** The whole GraphQL schema, generated from the resource registry. */
export function buildSchema(): GraphQLSchema {
  const builder = createBuilder();
  addScalars(builder);
  const refs = addObjectTypes(builder);
  addOperations(builder, refs);
  return builder.toSchema();
}

export const printedSchema = (schema: GraphQLSchema) => printSchema(lexicographicSortSchema(schema));
