import {
  getNamedType,
  isLeafType,
  isListType,
  isNonNullType,
  Kind,
  type DocumentNode,
  type GraphQLField,
  type GraphQLOutputType,
  type GraphQLSchema,
} from "graphql";
import { complexityFromQuery } from "@pothos/plugin-complexity";
import type { Config } from "../core/config.ts";

/**
 * The worst-case cost of an operation, in rows: every field that returns objects counts one row per object it can
 * return, scalars count nothing. A field that takes a size (`first`, `limit`) returns at most that many (or the
 * default page size; never more than the maximum); a list that takes none (a nested to-many relation) is assumed to
 * hold `GRAPHQL_LIST_ESTIMATE`. Sizes multiply through each nesting level, so `statuses { nodes { users { rankRecords
 * { id } } } }` costs 15 + 15 × (50 + 50 × 50) = 38,265.
 *
 * The numbers come from @pothos/plugin-complexity (each field's `extensions.complexity`, read by its
 * `complexityFromQuery`); its own limit is not used: it throws from inside the first root resolver (partial data,
 * HTTP 200) and would also cost the REST facade's prepared documents, which are bounded by their include caps and
 * the row cap instead.
 */
export type CostConfig = Pick<
  Config,
  "defaultPageSize" | "maxPageSize" | "graphqlListEstimate" | "graphqlDefaultFirst"
>;

/** Arguments that bound a list: a connection's `first`/`last` (default GRAPHQL_DEFAULT_FIRST), REST's `limit`. */
const SIZE_ARGUMENTS = ["first", "last", "limit"] as const;

const listed = (type: GraphQLOutputType): boolean => isListType(isNonNullType(type) ? type.ofType : type);

/**
 * A field's cost and multiplier, for any field without a `complexity` of its own (the builder's `fieldComplexity`).
 * The plugin adds a field's cost once and multiplies only what is selected below it, so a field of objects costs
 * its multiplier: the rows it returns.
 */
export function fieldCost(
  args: Record<string, unknown>,
  ctx: { config: CostConfig },
  field: GraphQLField<unknown, unknown>,
) {
  const rows = (multiplier: number) => ({ field: isLeafType(getNamedType(field.type)) ? 0 : multiplier, multiplier });
  const sizes = SIZE_ARGUMENTS.filter((name) => field.args.some((a) => a.name === name));
  if (sizes.length) {
    const asked = sizes.map((name) => args[name]).find((value) => typeof value === "number" && value >= 0) as
      | number
      | undefined;
    const size = asked ?? (sizes.includes("first") ? ctx.config.graphqlDefaultFirst : ctx.config.defaultPageSize);
    // The page is read with one row more, to tell whether another follows.
    return rows(Math.min(size, ctx.config.maxPageSize) + (sizes.includes("first") ? 1 : 0));
  }
  return rows(listed(field.type) ? ctx.config.graphqlListEstimate : 1);
}

/** The list inside a sized field (a page's `nodes`, a connection's `edges`): the size is already counted above it. */
export const sizedElsewhere = { field: 0, multiplier: 1 };

/** The estimated rows of the operation `operationName` names (or the only one) with these variables. */
export function estimateRows(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | undefined,
  ctx: { config: CostConfig },
): number {
  const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  const chosen = operationName ? operations.find((o) => o.name?.value === operationName) : operations[0];
  const definitions = document.definitions.filter((d) => d.kind !== Kind.OPERATION_DEFINITION || d === chosen);
  return complexityFromQuery({ ...document, definitions }, { schema, variables: variables ?? {}, ctx }).complexity;
}
