import { loadConfig } from "../src/core/config.ts";
import { openDatabase } from "../src/db/prisma.ts";
import { createApp } from "../src/server/app.ts";

/** Prisma's query events (the client is typed without its `log` option, so `$on` is not in its type). */
export interface QueryEvents {
  $on(event: "query", listener: (e: { query: string }) => void): void;
}

export interface Probe {
  method: "GET" | "POST";
  path: string;
  body?: string;
  /** Headers replacing the API key's (a publishable key and its Origin). */
  headers?: Record<string, string>;
}

export interface Counted {
  status: number;
  statements: number;
  /** The statements' SQL, in order. */
  sql: string[];
}

/**
 * SQL statements the service issues for one request of each probe: the app runs in this process on
 * the same database (`createApp`, as test/harness.ts does) and `db.statements.count` is read around
 * the request. Each probe is sent twice and the second is counted, so start-up work is not.
 */
export async function countStatements(
  databaseUrl: string,
  key: string,
  storageDir: string,
  probes: Probe[],
): Promise<Counted[]> {
  const db = await openDatabase(databaseUrl);
  const sql: string[] = [];
  const record = (query: string) => sql.push(query.replace(/[`"](main|public)[`"]\./g, "").replace(/\s+/g, " "));
  (db.prisma as unknown as QueryEvents).$on("query", (e) => record(e.query));
  db.onReaderStatement.add(record);
  try {
    const app = createApp({
      db,
      config: {
        ...loadConfig({ LOG_LEVEL: "silent" }),
        databaseUrl,
        storageDir,
        rateLimitPerMinute: 1_000_000_000,
        publicRateLimitPerMinute: 1_000_000_000,
        // Each probe is sent twice: the second of a public read would be answered from the cache, with no SQL.
        responseCache: false,
      },
    });
    const counted: Counted[] = [];
    for (const probe of probes) {
      let last: Counted | undefined;
      for (let i = 0; i < 2; i++) {
        sql.length = 0;
        const before = db.statements.count;
        const response = await app.yoga.fetch(`http://127.0.0.1${probe.path}`, {
          method: probe.method,
          body: probe.body,
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...probe.headers },
        });
        await response.text();
        last = { status: response.status, statements: db.statements.count - before, sql: [...sql] };
      }
      counted.push(last!);
    }
    return counted;
  } finally {
    await db.close();
  }
}

/** Tables read per statement, e.g. `ApiKey, Account, User, RankRecord, COUNT RankRecord, ...`. */
export function summariseSql(sql: string[]): string {
  const name = String.raw`[\x60"]?(\w+)[\x60"]?`;
  return sql
    .map((q) => {
      if (!q.trim()) return "(empty: transaction start)";
      const table = q.match(new RegExp(String.raw`(?:FROM|INTO|UPDATE)\s+` + name, "i"))?.[1] ?? "";
      if (/^SELECT COUNT/i.test(q))
        return `count ${q.match(new RegExp(String.raw`FROM \(SELECT\s+` + name + String.raw`\.`))?.[1] ?? table}`;
      if (/^SELECT MAX|^SELECT [^(]*\bMAX\(/i.test(q)) return `max ${table}`;
      // Correlated max() lookups per row of the outer table (a user's latest records): named by both.
      const maxima = [...q.matchAll(new RegExp(String.raw`\(SELECT max\([^)]*\) FROM\s+` + name, "gi"))].map(
        (m) => m[1],
      );
      if (maxima.length)
        return `max ${maxima.join("+")} per ${[...q.matchAll(new RegExp(String.raw`\) FROM\s+` + name, "gi"))].at(-1)?.[1] ?? "row"}`;
      // A SELECT from no table of its own (the maintenance flag with the key) is named by the tables it joins.
      const joined = () => [...q.matchAll(new RegExp(String.raw`JOIN\s+` + name, "gi"))].map((m) => m[1]).join("+");
      if (/^SELECT/i.test(q)) return table || joined() || q.replace(/\$\d+|\?/g, "…").slice(0, 48);
      if (/^(BEGIN|COMMIT|ROLLBACK)|Implicit "COMMIT"/i.test(q))
        return q.includes("COMMIT") ? "commit" : q.split(" ")[0].toLowerCase();
      return `${q.match(/^\s*(\w+)/)?.[1]?.toLowerCase() ?? "?"} ${table}`.trim();
    })
    .join(", ");
}
