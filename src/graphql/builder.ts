import SchemaBuilder from "@pothos/core";
import ComplexityPlugin from "@pothos/plugin-complexity";
import PrismaPlugin from "@pothos/plugin-prisma";
import PrismaUtilsPlugin from "@pothos/plugin-prisma-utils";
import RelayPlugin from "@pothos/plugin-relay";
import SubGraphPlugin from "@pothos/plugin-sub-graph";
import type PrismaTypes from "../generated/pothos-types.ts";
import { getDatamodel } from "../generated/pothos-types.ts";
import type { Context } from "../request/context.ts";
import { fieldCost } from "./cost.ts";

export type Scalars = {
  DateTime: { Input: Date; Output: Date | string };
  JSON: { Input: unknown; Output: unknown };
  File: { Input: File; Output: never };
};

/**
 * `public`: what `/graphql` serves and prints. `internal`: the public graph plus what only the REST facade's prepared
 * documents select (`attributes`); no GraphQL client can reach it.
 */
export type SubGraph = "public" | "internal";

type SchemaTypes = {
  PrismaTypes: PrismaTypes;
  Context: Context;
  Scalars: Scalars;
  DefaultFieldNullability: false;
  SubGraphs: SubGraph;
};

export type Builder = PothosSchemaTypes.SchemaBuilder<PothosSchemaTypes.ExtendDefaultTypes<SchemaTypes>>;

/** A fresh builder; defines no types itself. The client comes from each request's context. */
export function createBuilder(): Builder {
  return new SchemaBuilder<SchemaTypes>({
    plugins: [ComplexityPlugin, RelayPlugin, PrismaPlugin, PrismaUtilsPlugin, SubGraphPlugin],
    defaultFieldNullability: false,
    // Estimates only: the budget is checked once per operation by src/http/limits.ts, before anything runs.
    complexity: { fieldComplexity: fieldCost as never, disabled: true },
    // Everything is in both graphs unless it says otherwise (a field inherits its type's).
    subGraphs: { defaultForTypes: ["public", "internal"], fieldsInheritFromTypes: true },
    relay: {
      clientMutationId: "omit",
      cursorType: "String",
      // node and nodes are ours (src/graphql/nodes.ts): they check the account and the type's view scope.
      nodeQueryOptions: false,
      nodesQueryOptions: false,
      nodeTypeOptions: {
        description: "A row of any resource, found by its global id (Relay Global Object Identification).",
      },
      idFieldOptions: {
        description: "The row's global id: opaque, unique across every type; `node(id:)` finds it again.",
      },
      pageInfoTypeOptions: {
        description:
          "Where a page sits in its list: whether rows come before or after it, and the cursors of its ends.",
      },
      hasNextPageFieldOptions: { description: "Whether rows follow this page (ask again with `after: endCursor`)." },
      hasPreviousPageFieldOptions: {
        description: "Whether rows precede this page (ask again with `before: startCursor`).",
      },
      startCursorFieldOptions: { description: "The cursor of the page's first row; null when the page is empty." },
      endCursorFieldOptions: { description: "The cursor of the page's last row; null when the page is empty." },
    },
    prisma: {
      // Pothos's own queries (a relation not preloaded, a connection's totalCount) are the store's reads.
      client: (ctx) => ctx.store.readDelegates as never,
      dmmf: getDatamodel(),
      exposeDescriptions: true,
      filterConnectionTotalCount: true,
      onUnusedQuery: process.env.NODE_ENV === "production" ? null : "warn",
    },
  }) as unknown as Builder;
}
