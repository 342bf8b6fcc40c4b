import type { PrismaClient } from "../generated/prisma/client.ts";
import { decode, models, quote, type Dialect } from "./reader.ts";
import { routesOf } from "./routing.ts";

/**
 * Statements of our own inside a write transaction, written out rather than expressed as Prisma calls: on the
 * transaction's own connection when it has one (src/db/routing.ts: the direct transactions on PostgreSQL, and the
 * routed ones), through Prisma's raw queries otherwise. Placeholders are `?` on SQLite and `$n` on PostgreSQL.
 */
export interface TransactionSql {
  dialect: Dialect;
  /** The rows of one statement, each as an array of its columns. */
  all(sql: string, params: unknown[]): Promise<unknown[][]>;
}

export function transactionSql(tx: object, provider: Dialect): TransactionSql {
  const writer = routesOf(tx)?.writer;
  if (writer) {
    return {
      dialect: writer.driver.dialect,
      all: (sql, params) => (writer.options.onStatement?.(sql), writer.driver.all(sql, params)),
    };
  }
  return {
    dialect: provider,
    all: async (sql, params) => ((await (tx as PrismaClient).$queryRawUnsafe(sql, ...params)) as Record<string, unknown>[]).map((row) => Object.values(row)),
  };
}

/**
 * The row `id` of `model` with every column, locked until the transaction ends on PostgreSQL (`FOR UPDATE`), so what
 * the caller changes next starts from the value no other transaction can change meanwhile; SQLite runs one write
 * transaction at a time. Null when there is no such row.
 */
export async function rowForUpdate(sql: TransactionSql, model: string, id: number): Promise<Record<string, unknown> | null> {
  const scalars = models.get(model)!.scalars;
  const pg = sql.dialect === "postgresql";
  const rows = await sql.all(`SELECT ${scalars.map((s) => quote(s.name)).join(", ")} FROM ${quote(model)} WHERE "id" = ${pg ? "$1" : "?"}${pg ? " FOR UPDATE" : ""}`, [id]);
  const row = rows[0];
  return row ? Object.fromEntries(scalars.map((s, i) => [s.name, decode(sql.dialect, s, row[i])])) : null;
}
