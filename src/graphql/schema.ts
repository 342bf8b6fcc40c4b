import { lexicographicSortSchema, printSchema, type GraphQLSchema } from "graphql";
import { createBuilder } from "./builder.ts";
import { addScalars } from "./scalars.ts";
import { addObjectTypes } from "./objects.ts";
import { addOperations } from "./operations.ts";
import { addAttributesFields } from "./attributes.ts";

export interface Schemas {
  /** What `/graphql` serves, introspects and `schema:print` prints. */
  public: GraphQLSchema;
  /** The public schema plus the fields only the REST facade's prepared documents select; never served to a client. */
  internal: GraphQLSchema;
}

/** Both GraphQL schemas, generated from the resource registry by one builder (same types, resolvers and plugins). */
export function buildSchemas(): Schemas {
  const builder = createBuilder();
  addScalars(builder);
  const refs = addObjectTypes(builder);
  addAttributesFields(builder, refs);
  addOperations(builder, refs);
  return { public: builder.toSchema({ subGraph: "public" }), internal: builder.toSchema({ subGraph: "internal" }) };
}

export const printedSchema = (schema: GraphQLSchema) => printSchema(lexicographicSortSchema(schema));
