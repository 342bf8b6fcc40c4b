import { lexicographicSortSchema, printSchema, type GraphQLSchema } from "graphql";
import { createBuilder } from "./builder.ts";
import { addScalars } from "./scalars.ts";
import { addObjectTypes } from "./objects.ts";
import { addOperations } from "./operations.ts";
import { addRootFields } from "./roots.ts";
import { pruneSchema } from "@graphql-tools/utils";
import { PothosSubGraphPlugin } from "@pothos/plugin-sub-graph";
import { addAttributesFields } from "./attributes.ts";
import { addChangeFeed } from "./changes.ts";
import { addSubscriptionFields } from "./subscriptions.ts";

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
  addRootFields(builder, refs);
  addChangeFeed(builder);
  addSubscriptionFields(builder, refs);
  addOperations(builder, refs);
  // One full build, then both sub-graphs cut from it (what `toSchema({ subGraph })` does after a full build of its own):
  // they share every field's resolver and argument mappers, 10 MB less than two builds.
  const full = builder.toSchema();
  // Types only the internal graph's fields use (REST's inputs and pages) are left out of the public one.
  return {
    public: pruneSchema(PothosSubGraphPlugin.createSubGraph(full, "public", builder)),
    internal: PothosSubGraphPlugin.createSubGraph(full, "internal", builder),
  };
}

export const printedSchema = (schema: GraphQLSchema) => printSchema(lexicographicSortSchema(schema));
