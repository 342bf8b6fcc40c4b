import { execute } from "graphql";
import type { Plugin } from "graphql-yoga";

/**
 * Operations run on graphql-js's own `execute` instead of Yoga's default, @graphql-tools/executor's
 * `normalizedExecutor`: that one adds incremental delivery (`@defer`/`@stream`) and signal handling this schema does not
 * use, and its promise helpers and argument handling cost about a fifth of a 20-row REST list's CPU on PostgreSQL
 * (bench/FINDINGS.md). Registered before every plugin that wraps the execute function, so they wrap this one.
 */
export function graphqlJsExecutorPlugin(): Plugin {
  return { onExecute: ({ setExecuteFn }) => setExecuteFn(execute as Parameters<typeof setExecuteFn>[0]) };
}
