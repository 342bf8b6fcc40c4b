import type { Plugin } from "graphql-yoga";
import {
  GraphQLError,
  Kind,
  OperationTypeNode,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type ValidationContext,
  type ValidationRule,
} from "graphql";
import { maxDepthPlugin, maxDepthRule } from "@escape.tech/graphql-armor-max-depth";
import { costLimitRule } from "@escape.tech/graphql-armor-cost-limit";
import { maxAliasesPlugin } from "@escape.tech/graphql-armor-max-aliases";
import { maxTokensPlugin } from "@escape.tech/graphql-armor-max-tokens";
import type { Config } from "../core/config.ts";
import { ApiError } from "../core/errors.ts";
import { documentNestedDeeperThan, nestedDeeperThan } from "../core/nesting.ts";
import { estimateRows } from "../graphql/cost.ts";
import { RowCapExceeded } from "../db/row-budget.ts";

/**
 * A rejected document is the client's error: a 422 naming the limit, reported as a validation error
 * (or thrown, from the parser) instead of graphql-armor's default exception, which would read as a 500.
 */
const rejectAs422 = {
  propagateOnRejection: false,
  exposeLimits: true,
  onReject: [
    (context: ValidationContext | null, error: GraphQLError) => {
      const message = error.message.replace(/^Syntax Error: /, "");
      const limit = new ApiError("VALIDATION", message, { query: [message] });
      if (!context) throw limit;
      context.reportError(limit);
    },
  ],
};

/** Query-shape limits, shared by `/graphql` and the prepared REST documents so neither can exceed them. */
const shapeOptions = (config: Config) => ({
  depth: { n: config.graphqlMaxDepth, ignoreIntrospection: true, flattenFragments: true, ...rejectAs422 },
  cost: { maxCost: config.graphqlMaxCost, ignoreIntrospection: true, flattenFragments: true, ...rejectAs422 },
  aliases: { n: config.graphqlMaxAliases, ...rejectAs422 },
  tokens: { n: config.graphqlMaxTokens, ...rejectAs422 },
});

/**
 * Depth and cost as validation rules, for the documents REST routes run. Aliases are not limited
 * there: REST documents alias every column to its snake_case name, and their size is already
 * bounded by the include caps and by cost.
 */
export function queryLimitRules(config: Config): ValidationRule[] {
  const o = shapeOptions(config);
  return [maxDepthRule(o.depth), costLimitRule(o.cost)] as unknown as ValidationRule[];
}

export function queryLimitPlugins(config: Config): Plugin[] {
  const o = shapeOptions(config);
  return [
    // graphql-armor's cost does not know a connection's `first`: on /graphql the size-aware budget below replaces it.
    maxTokensPlugin(o.tokens),
    maxDepthPlugin(o.depth),
    maxAliasesPlugin(o.aliases),
    complexityBudgetPlugin(config),
    rowBudgetPlugin(),
  ] as Plugin[];
}

/**
 * `BODY_MAX_DEPTH` on `/graphql` (POST bodies and GET query strings alike): a document or variables nested deeper
 * are a 422 before anything parses or walks them.
 */
export function nestingLimitPlugin(config: Pick<Config, "bodyMaxDepth" | "graphqlMaxTokens">): Plugin {
  const tooDeep = (what: string, verb: string) => {
    const message = `The ${what} ${verb} nested deeper than ${config.bodyMaxDepth} levels.`;
    return new ApiError("VALIDATION", message, { [what]: [message] });
  };
  return {
    onParams({ params }) {
      if (
        typeof params.query === "string" &&
        documentNestedDeeperThan(params.query, config.bodyMaxDepth, config.graphqlMaxTokens)
      ) {
        throw tooDeep("query", "is");
      }
      if (nestedDeeperThan(params.variables, config.bodyMaxDepth)) throw tooDeep("variables", "are");
      if (nestedDeeperThan(params.extensions, config.bodyMaxDepth)) throw tooDeep("extensions", "are");
    },
  };
}

/**
 * Answers a read that runs past `executionTimeoutMs` with a 503 (SQLite cannot cancel a running
 * statement, but the client is not kept waiting). Writes are not raced: their transaction has the
 * same timeout and is rolled back when it passes, so a client is never told "failed" about a write
 * that then commits.
 */
export function executionTimeoutPlugin(config: Config): Plugin {
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const operation = (args.document as DocumentNode).definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION);
      if (operation?.kind !== Kind.OPERATION_DEFINITION || operation.operation !== OperationTypeNode.QUERY) return;
      setExecuteFn((executeArgs) => {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new ApiError("TIMEOUT")), config.executionTimeoutMs);
        });
        return Promise.race([Promise.resolve(executeFn(executeArgs)), timeout]).finally(() =>
          clearTimeout(timer),
        ) as ReturnType<typeof executeFn>;
      });
    },
  };
}

/**
 * `GRAPHQL_MAX_COMPLEXITY` on `/graphql`: an operation whose worst case (src/graphql/cost.ts: list sizes multiplied
 * through every level) is over the budget is a 422 naming both numbers, before anything runs. Checked at execution,
 * where the variables (a `$limit`) are known; validation results are cached by document alone. REST's prepared
 * documents carry no GraphQL params and are not costed: their include caps and the row cap bound them.
 */
export function complexityBudgetPlugin(config: Pick<Config, "graphqlMaxComplexity">): Plugin {
  const check = ({
    args,
    setResultAndStopExecution,
  }: {
    args: ExecutionArgs;
    setResultAndStopExecution(result: ExecutionResult): void;
  }) => {
    const ctx = args.contextValue as { params?: unknown; config: Config };
    if (!ctx.params) return;
    let estimate: number;
    try {
      estimate = estimateRows(
        args.schema,
        args.document,
        args.operationName,
        args.variableValues as Record<string, unknown>,
        ctx,
      );
    } catch (error) {
      // Variables that do not coerce, a fragment cycle: execution reports them in its own words.
      if (error instanceof GraphQLError) return;
      throw error;
    }
    if (estimate <= config.graphqlMaxComplexity) return;
    const message =
      `The query could load about ${estimate} rows, over the budget of ${config.graphqlMaxComplexity} (GRAPHQL_MAX_COMPLEXITY): ` +
      "each list counts as its first/limit, or as the list estimate when it takes none, multiplied through every nesting level.";
    setResultAndStopExecution({ errors: [new ApiError("VALIDATION", message, { query: [message] })] });
  };
  // A subscription's selection runs once per event: it is held to the same budget when it starts.
  return { onExecute: check as never, onSubscribe: check as never };
}

/**
 * `MAX_ROWS_PER_REQUEST`: every operation (a `/graphql` request or a REST route's) reads under a fresh row budget,
 * its context's store's (`requestStore`, src/request/context.ts). An operation that passed it is refused as a whole, one
 * error and no data: what the other root fields did load would be a truncated answer.
 */
export function rowBudgetPlugin(): Plugin {
  return {
    onExecute() {
      return {
        onExecuteDone({ result, setResult }) {
          if (!("errors" in result) || !result.errors) return;
          const capped = result.errors.find((e) => (e.originalError ?? e) instanceof RowCapExceeded);
          // The whole request is refused (no data): the error belongs to no one field.
          if (capped)
            setResult({
              errors: [
                new GraphQLError(capped.message, {
                  originalError: capped.originalError,
                  extensions: capped.extensions,
                }),
              ],
            });
        },
      };
    },
  };
}
