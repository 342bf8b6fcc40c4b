import type { Plugin } from "graphql-yoga";

/** Requests that run an operation: GraphQL and the REST API. Health, metrics, docs and files pass freely. */
const runsOperation = (pathname: string) => pathname === "/graphql" || /^\/v[12]\//.test(pathname);

/**
 * At most `limit` operations run at once in this process; the others wait, first come first served. The process has
 * one thread, so more at once adds no throughput once the database's latency is covered: it only holds more rows and
 * results in memory together (on PostgreSQL, 32 concurrent 2,000-row GraphQL reads took the heap past 400 MB).
 */
export function concurrencyPlugin(limit: number): Plugin {
  let running = 0;
  const waiting: Array<() => void> = [];
  const holding = new WeakSet<Request>();
  return {
    onRequest({ request, url }) {
      if (!runsOperation(url.pathname)) return;
      holding.add(request);
      if (running < limit) {
        running++;
        return;
      }
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    onResponse({ request }) {
      if (!holding.delete(request)) return;
      const next = waiting.shift();
      if (next) next();
      else running--;
    },
  };
}
