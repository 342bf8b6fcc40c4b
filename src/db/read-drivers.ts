import Database from "libsql";
import pg from "pg";
import type { ReadDriver } from "./reader.ts";
import { isBusyError, whileBusy } from "./sqlite.ts";

/** Prepared statements kept per connection; the reader's SQL text depends on a query's shape, not its values. */
const STATEMENT_CACHE = 500;

/**
 * SQLite reads on a connection of their own, beside the one Prisma writes through: in WAL mode it sees committed
 * data only, never the open transaction of a concurrent write. Statements stay prepared and return raw rows.
 */
export function sqliteReadDriver(file: string): ReadDriver {
  let connection: Database.Database | null = null;
  const statements = new Map<string, Database.Statement>();
  const open = () => {
    const db = new Database(file);
    db.pragma("busy_timeout = 0");
    db.pragma("query_only = 1");
    return db;
  };
  const drop = () => {
    statements.clear();
    try {
      connection?.close();
    } catch {
      // Unusable already: replaced either way.
    }
    connection = null;
  };
  const prepared = (sql: string) => {
    connection ??= open();
    let statement = statements.get(sql);
    if (!statement) {
      statement = connection.prepare(sql).raw(true);
      if (statements.size >= STATEMENT_CACHE) statements.delete(statements.keys().next().value!);
      statements.set(sql, statement);
    }
    return statement;
  };
  return {
    dialect: "sqlite",
    all: (sql, params) =>
      whileBusy(async () => {
        try {
          return prepared(sql).all(params) as unknown[][];
        } catch (error) {
          // A statement that failed busy is never reset by the driver (tursodatabase/libsql-js#237).
          if (isBusyError(error)) drop();
          throw error;
        }
      }),
    close: async () => drop(),
  };
}

const TIMESTAMP = 1114;
/** Prisma stores DateTime as `timestamp(3)` in UTC; pg would read it as local time. */
const types = {
  getTypeParser: (oid: number, format?: "text" | "binary") =>
    oid === TIMESTAMP ? (value: string) => new Date(`${value.replace(" ", "T")}Z`) : pg.types.getTypeParser(oid, format as "text"),
};

/** PostgreSQL reads on the pool Prisma's adapter uses, as named (server-side prepared) statements. */
export function postgresReadDriver(pool: pg.Pool): ReadDriver {
  const names = new Map<string, string>();
  let next = 0;
  return {
    dialect: "postgresql",
    all: async (sql, params) => {
      let name = names.get(sql);
      if (!name && names.size < STATEMENT_CACHE) names.set(sql, (name = `muster_read_${next++}`));
      const result = await pool.query({ text: sql, values: params, rowMode: "array", types, ...(name ? { name } : {}) });
      return result.rows as unknown[][];
    },
    close: async () => {},
  };
}
