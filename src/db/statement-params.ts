import type { Database } from "./prisma.ts";
import { storedDateTime } from "./dialect.ts";

/**
 * Placeholders and values for one hand-written statement, in either dialect (`$n` with casts on PostgreSQL, `?` on
 * SQLite): the webhook dispatcher's and the automations runner's statements on their tables.
 */
export function statement(db: Pick<Database, "provider">) {
  const pg = db.provider === "postgresql";
  const params: unknown[] = [];
  const add = (value: unknown, cast: string) => (params.push(value), pg ? `$${params.length}${cast}` : "?");
  return {
    pg,
    params,
    value: (value: unknown) => add(value, ""),
    time: (date: Date | null) => (date === null ? "NULL" : add(storedDateTime(db.provider, date), "::timestamp(3)")),
    txid: (txid: string) => add(pg ? txid : Number(txid), "::bigint"),
    bool: (value: boolean) => (pg ? add(value, "::boolean") : add(value ? 1 : 0, "")),
  };
}
