import type { Plugin } from "graphql-yoga";
import type { DocumentNode, GraphQLError, ValidationContext, ValidationRule } from "graphql";
import { maxDepthPlugin, maxDepthRule } from "@escape.tech/graphql-armor-max-depth";
import { costLimitPlugin, costLimitRule } from "@escape.tech/graphql-armor-cost-limit";
import { maxAliasesPlugin } from "@escape.tech/graphql-armor-max-aliases";
import { maxTokensPlugin } from "@escape.tech/graphql-armor-max-tokens";
import type { Config } from "../config.ts";
import { ApiError } from "../errors.ts";

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
    maxTokensPlugin(o.tokens), maxDepthPlugin(o.depth), costLimitPlugin(o.cost), maxAliasesPlugin(o.aliases),
  ] as Plugin[];
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
      const operation = (args.document as DocumentNode).definitions.find((d) => d.kind === "OperationDefinition");
      if (operation?.kind !== "OperationDefinition" || operation.operation !== "query") return;
      setExecuteFn((executeArgs) => {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new ApiError("TIMEOUT")), config.executionTimeoutMs);
        });
        return Promise.race([Promise.resolve(executeFn(executeArgs)), timeout]).finally(() => clearTimeout(timer)) as ReturnType<typeof executeFn>;
      });
    },
  };
}
