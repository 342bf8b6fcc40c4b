import { execute, type ExecutionArgs } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { Config } from "../core/config.ts";
import { plannedExecute } from "../graphql/planned-execution.ts";
import { subscribeWithContextPerEvent } from "./subscription-execution.ts";

/**
 * Operations run on graphql-js's own `execute` instead of Yoga's default, @graphql-tools/executor's
 * `normalizedExecutor`: that one adds incremental delivery (`@defer`/`@stream`) and signal handling this schema does not
 * use, and its promise helpers and argument handling cost about a fifth of a 20-row REST list's CPU on PostgreSQL
 * (bench/FINDINGS.md). Read operations whose fields allow it run on the planned executor instead (GRAPHQL_PLANNED_EXECUTION).
 * Registered before every plugin that wraps the execute function, so they wrap this one.
 */
export function graphqlJsExecutorPlugin(config: Pick<Config, "graphqlPlannedExecution">): Plugin {
  const run = config.graphqlPlannedExecution ? (args: ExecutionArgs) => plannedExecute(args, execute) : execute;
  return {
    onExecute: ({ setExecuteFn }) => setExecuteFn(run as Parameters<typeof setExecuteFn>[0]),
    // Subscriptions on graphql-js too, each event executed with a context of its own.
    onSubscribe: ({ setSubscribeFn }) =>
      setSubscribeFn(subscribeWithContextPerEvent as Parameters<typeof setSubscribeFn>[0]),
  };
}
