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
const parseTimestamp = (value: string) => new Date(`${value.replace(" ", "T")}Z`);
const types = {
  getTypeParser: (oid: number, format?: "text" | "binary") => (oid === TIMESTAMP ? parseTimestamp : pg.types.getTypeParser(oid, format as "text")),
};

/** Named statements, one name per SQL text across every connection (PostgreSQL prepares them per connection). */
function statementNames() {
  const names = new Map<string, string>();
  return (sql: string) => {
    let name = names.get(sql);
    if (!name && names.size < STATEMENT_CACHE) names.set(sql, (name = `muster_read_${names.size}`));
    return name;
  };
}

type Queryable = Pick<pg.Pool, "query"> | Pick<pg.PoolClient, "query">;

const query = async (on: Queryable, nameOf: (sql: string) => string | undefined, sql: string, params: unknown[]) => {
  const name = nameOf(sql);
  const result = await on.query({ text: sql, values: params, rowMode: "array", types, ...(name ? { name } : {}) });
  return result.rows as unknown[][];
};

const nameOf = statementNames();

/** PostgreSQL reads on the pool Prisma's adapter uses, as named (server-side prepared) statements. */
export function postgresReadDriver(pool: pg.Pool): ReadDriver {
  return { dialect: "postgresql", all: (sql, params) => query(pool, nameOf, sql, params), close: async () => {} };
}

/**
 * Statements on the connection of a transaction in progress. A failed statement aborts a PostgreSQL transaction,
 * so one that may fail (a write Prisma then answers) runs under a savepoint and leaves the transaction usable.
 */
export function postgresTransactionDriver(client: pg.PoolClient): ReadDriver {
  return {
    dialect: "postgresql",
    all: (sql, params) => query(client, nameOf, sql, params),
    attempt: async (sql, params) => {
      await client.query("SAVEPOINT muster_attempt");
      try {
        const rows = await query(client, nameOf, sql, params);
        await client.query("RELEASE SAVEPOINT muster_attempt");
        return rows;
      } catch (error) {
        await client.query("ROLLBACK TO SAVEPOINT muster_attempt");
        throw error;
      }
    },
    close: async () => {},
  };
}

/**
 * The pool handed to Prisma's adapter, which checks a client out with `connect()` for each transaction (its plain
 * queries go through `query`, whose own checkout passes a callback): the clients now in a transaction are known.
 */
export class TransactionTrackingPool extends pg.Pool {
  readonly transactionClients = new Set<pg.PoolClient>();

  connect(): Promise<pg.PoolClient>;
  connect(callback: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: any) => void) => void): void;
  connect(callback?: any): any {
    if (callback) return super.connect(callback);
    return super.connect().then((client) => {
      this.transactionClients.add(client);
      const release = client.release;
      client.release = (error?: Error | boolean) => {
        this.transactionClients.delete(client);
        client.release = release;
        return release.call(client, error);
      };
      return client;
    });
  }

  /** The only client in a transaction, or null when there are none or several (which one is whose is unknown). */
  soleTransactionClient(): pg.PoolClient | null {
    return this.transactionClients.size === 1 ? this.transactionClients.values().next().value! : null;
  }
}
