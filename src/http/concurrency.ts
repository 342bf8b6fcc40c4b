import { getOperationAST, OperationTypeNode } from "graphql";
import type { Plugin } from "graphql-yoga";

/** At most `limit` holders at once; the others wait, first come first served. */
function line(limit: number) {
  let running = 0;
  const waiting: Array<() => void> = [];
  return {
    acquire: () =>
      running < limit ? (running++, Promise.resolve()) : new Promise<void>((resolve) => waiting.push(resolve)),
    release: () => {
      const next = waiting.shift();
      if (next) next();
      else running--;
    },
  };
}

/**
 * At most `reads` queries and `writes` mutations execute at once in this process; the others wait, first come first
 * served, each kind in its own line. The process has one thread, so more reads at once add no throughput once the
 * database's latency is covered: they only hold more rows and results in memory together. On PostgreSQL, 96
 * connections of 2,000-row GraphQL reads ran a 512 MB heap out of memory without the limit; with 16 at a time the
 * process peaked at 378 MB. A write holds little (its input and one row or a batch's), and spends much of its time
 * waiting on the database: its turn at the write lock, and on SQLite the COMMIT it shares with the writes grouped with
 * it, which are as many as are executing. Writes in the readers' line held the groups to the readers' limit
 * (bench/FINDINGS.md).
 * The wait starts once the request is parsed, so a slow upload holds no place in the line. Registered after
 * executionTimeoutPlugin, it wraps that plugin's timer: the timeout measures the execution, not the wait.
 */
export function concurrencyPlugin(limits: { reads: number; writes: number }): Plugin {
  const reads = line(limits.reads);
  const writes = line(limits.writes);
  return {
    onExecute({ executeFn, setExecuteFn }) {
      setExecuteFn(async (args) => {
        const queue =
          getOperationAST(args.document, args.operationName)?.operation === OperationTypeNode.MUTATION ? writes : reads;
        await queue.acquire();
        try {
          return await executeFn(args);
        } finally {
          queue.release();
        }
      });
    },
  };
}
