import type { InArgs } from "@libsql/client";
import pg from "pg";
import { NativeConnection } from "./libsql-native.ts";
import type { ReadDriver } from "./reader.ts";
import { refusedWriteError } from "./postgres-errors.ts";
import { WriteQueue } from "./locks.ts";
import { isBusyError, whileBusy } from "./sqlite.ts";

/** Named statements at most; the reader's SQL text depends on a query's shape, not its values. */
const NAMED_STATEMENTS = 500;

/**
 * SQLite reads on a connection of their own, beside the one Prisma writes through: in WAL mode it sees committed
 * data only, never the open transaction of a concurrent write. Statements stay prepared (NativeConnection).
 */
export function sqliteReadDriver(file: string): ReadDriver {
  let connection: Promise<NativeConnection> | null = null;
  const open = async () => {
    const opened = new NativeConnection(file);
    await opened.execute("PRAGMA busy_timeout = 0");
    await opened.execute("PRAGMA query_only = 1");
    return opened;
  };
  const drop = () => {
    const dropped = connection;
    connection = null;
    // Unusable already when it fails to close: replaced either way.
    void dropped?.then((c) => c.close()).catch(() => undefined);
  };
  return {
    dialect: "sqlite",
    all: (sql, params) =>
      whileBusy(async () => {
        try {
          const opened = await (connection ??= open());
          return (await opened.execute({ sql, args: params as InArgs })).rows as unknown as unknown[][];
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

/** One statement name per SQL text across every connection (PostgreSQL prepares a named statement per connection). */
const statementNames = new Map<string, string>();

type Queryable = Pick<pg.Pool, "query"> | Pick<pg.PoolClient, "query">;

const query = async (on: Queryable, sql: string, params: unknown[]) => {
  let name = statementNames.get(sql);
  if (!name && statementNames.size < NAMED_STATEMENTS) statementNames.set(sql, (name = `muster_read_${statementNames.size}`));
  const result = await on.query({ text: sql, values: params, rowMode: "array", types, ...(name ? { name } : {}) });
  return result.rows as unknown[][];
};

/** PostgreSQL reads on the pool Prisma's adapter uses, as named (server-side prepared) statements. */
export function postgresReadDriver(pool: pg.Pool): ReadDriver {
  return { dialect: "postgresql", all: (sql, params) => query(pool, sql, params), close: async () => {} };
}

/** Statements on the connection of a transaction in progress; a refused write aborts it (see `ReadDriver.refused`). */
export function postgresTransactionDriver(client: pg.PoolClient): ReadDriver {
  return { dialect: "postgresql", all: (sql, params) => query(client, sql, params), refused: refusedWriteError, close: async () => {} };
}

/**
 * The pool handed to Prisma's adapter, which checks a client out with `connect()` to start each transaction (its plain
 * queries go through `query`, whose own checkout passes a callback). Transactions start one at a time here
 * (`startTransaction`), so the client checked out while one starts is that transaction's; their bodies run side by side.
 */
export class TransactionTrackingPool extends pg.Pool {
  #starts = new WriteQueue();
  #connected: pg.PoolClient | null = null;

  connect(): Promise<pg.PoolClient>;
  connect(callback: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: any) => void) => void): void;
  connect(callback?: any): any {
    if (callback) return super.connect(callback);
    return super.connect().then((client) => (this.#connected = client));
  }

  /** Waits until no other transaction is starting; `client()` is then the client the starting one checked out. */
  async startTransaction(): Promise<{ client(): pg.PoolClient | null; started(): void }> {
    const started = await this.#starts.acquire();
    this.#connected = null;
    return { client: () => this.#connected, started };
  }
}
