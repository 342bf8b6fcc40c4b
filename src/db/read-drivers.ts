/// <reference path="./pg-internals.d.ts" />
import type { InArgs } from "@libsql/client";
import pg from "pg";
import pgUtils from "pg/lib/utils.js";
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
const digits = (text: string, from: number, to: number) => {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return NaN;
    n = n * 10 + d;
  }
  return n;
};
/**
 * Prisma stores DateTime as `timestamp(3)` in UTC; pg would read it as local time. PostgreSQL's text form of a
 * four-digit year (`2025-02-04 17:19:00`, `.5` or `.123` after it) is read field by field, several times faster than
 * parsing a date string; any other form (more digits, BC) goes through Date's parser.
 */
export function parseTimestamp(value: string): Date {
  const fraction = value.length - 20;
  if (value.length >= 19 && value.length <= 23 && value.charCodeAt(10) === 32 && (fraction < 0 || value.charCodeAt(19) === 46)) {
    const millis = fraction > 0 ? digits(value, 20, value.length) * (fraction === 1 ? 100 : fraction === 2 ? 10 : 1) : 0;
    const time = Date.UTC(digits(value, 0, 4), digits(value, 5, 7) - 1, digits(value, 8, 10), digits(value, 11, 13), digits(value, 14, 16), digits(value, 17, 19), millis);
    // Date.UTC maps years 0-99 to 1900-1999; those (and anything malformed) take the general path.
    if (!Number.isNaN(time) && value.charCodeAt(0) !== 48) return new Date(time);
  }
  return new Date(`${value.replace(" ", "T")}Z`);
}
const types = {
  getTypeParser: (oid: number, format?: "text" | "binary") => (oid === TIMESTAMP ? parseTimestamp : pg.types.getTypeParser(oid, format as "text")),
};

/** One statement name per SQL text across every connection (PostgreSQL prepares a named statement per connection). */
const statementNames = new Map<string, string>();
type Parser = (value: string) => unknown;
/** The column parsers of each named statement, from the first time any connection described its result. */
const parsersOf = new Map<string, Parser[]>();

interface Connection {
  stream: { cork?(): void; uncork?(): void };
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
  parse(message: { text: string; name: string }): void;
  bind(message: { statement: string; values: unknown[] }): void;
  describe(message: { type: "P"; name: string }): void;
  execute(message: { portal: string }): void;
  sync(): void;
  sendCopyFail(message: string): void;
}

/**
 * One statement as a pg submittable, with rows as arrays. Unlike pg's own Query, it asks for the result's description
 * only until the statement's column types are known: PostgreSQL sends no RowDescription without a Describe, so
 * neither side spends time on it (pg rebuilt its column names and parsers from it for every statement).
 */
class ArrayQuery {
  callback?: (error: Error | null, rows?: unknown[][]) => void;
  readonly rows: unknown[][] = [];
  #parsers: Parser[] | undefined;
  #failure: Error | null = null;
  #answered = false;

  /** `begin`: BEGIN goes out ahead of the statement, in the same write, answered by the same round trip. */
  constructor(readonly text: string, readonly values: unknown[], readonly name: string | undefined, readonly begin = false) {
    this.#parsers = name ? parsersOf.get(name) : undefined;
  }

  submit(connection: Connection): Error | null {
    let values: unknown[];
    try {
      values = this.values.map(pgUtils.prepareValue);
    } catch (error) {
      return error as Error;
    }
    const name = this.name ?? "";
    connection.stream.cork?.();
    try {
      if (this.begin) {
        connection.parse({ text: "BEGIN", name: "" });
        connection.bind({ statement: "", values: [] });
        connection.execute({ portal: "" });
      }
      if (!this.name || (connection.parsedStatements[name] === undefined && connection.submittedNamedStatements[name] === undefined)) {
        connection.parse({ text: this.text, name });
        if (this.name) connection.submittedNamedStatements[name] = this.text;
      }
      connection.bind({ statement: name, values });
      if (!this.#parsers) connection.describe({ type: "P", name: "" });
      connection.execute({ portal: "" });
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  handleRowDescription(message: { fields: Array<{ dataTypeID: number }> }) {
    this.#parsers = message.fields.map((f) => types.getTypeParser(f.dataTypeID, "text") as Parser);
    if (this.name) parsersOf.set(this.name, this.#parsers);
  }

  handleDataRow(message: { fields: Array<string | null> }) {
    if (this.#failure) return;
    const parsers = this.#parsers!;
    const { fields } = message;
    const row = new Array<unknown>(fields.length);
    try {
      for (let i = 0; i < fields.length; i++) row[i] = fields[i] === null ? null : parsers[i]!(fields[i]!);
    } catch (error) {
      this.#failure = error as Error;
      return;
    }
    this.rows.push(row);
  }

  handleError(error: Error) {
    this.#answer(error);
  }

  handleReadyForQuery() {
    this.#answer(this.#failure, this.rows);
  }

  handleCommandComplete() {}
  handleEmptyQuery() {}
  handlePortalSuspended() {}
  handleCopyData() {}
  handleCopyInResponse(connection: Connection) {
    connection.sendCopyFail("No source stream defined");
  }

  #answer(error: Error | null, rows?: unknown[][]) {
    if (this.#answered) return;
    this.#answered = true;
    this.callback?.(error, rows);
  }
}

type Queryable = pg.Pool | pg.PoolClient;

const query = (on: Queryable, sql: string, params: unknown[], begin = false): Promise<unknown[][]> => {
  let name = statementNames.get(sql);
  if (!name && statementNames.size < NAMED_STATEMENTS) statementNames.set(sql, (name = `muster_read_${statementNames.size}`));
  const statement = new ArrayQuery(sql, params, name, begin);
  // A pool checks a client out, answers through the callback it sets, and releases the client; a client is given one.
  if (on instanceof pg.Pool) return on.query(statement as never) as unknown as Promise<unknown[][]>;
  return new Promise((resolve, reject) => {
    statement.callback = (error, rows) => (error ? reject(error) : resolve(rows!));
    on.query(statement as never);
  });
};

/** PostgreSQL reads on the pool Prisma's adapter uses, as named (server-side prepared) statements. */
export function postgresReadDriver(pool: pg.Pool): ReadDriver {
  return { dialect: "postgresql", all: (sql, params) => query(pool, sql, params), close: async () => {} };
}

/** Statements on the connection of a transaction in progress; a refused write aborts it (see `ReadDriver.refused`). */
export function postgresTransactionDriver(client: pg.PoolClient): ReadDriver {
  return postgresDirectTransaction(client).driver;
}

export interface DirectTransactionDriver {
  driver: ReadDriver;
  /** Starts the transaction: BEGIN goes out with its first statement, in the same write and round trip. */
  begin(): void;
  /** COMMIT or ROLLBACK; nothing when no statement ever started the transaction. */
  end(sql: "COMMIT" | "ROLLBACK"): Promise<void>;
}

/** Statements of a transaction on `client`, one at a time, for a transaction Prisma started or one of our own. */
export function postgresDirectTransaction(client: pg.PoolClient): DirectTransactionDriver {
  // One statement at a time on the client (the checks of a write run side by side): pg 8 queues a second one with a
  // deprecation warning, and pg 9 refuses it.
  let last: Promise<unknown> = Promise.resolve();
  let beginPending = false;
  const next = (sql: string, params: unknown[]) => {
    const rows = last.then(() => {
      const begin = beginPending;
      beginPending = false;
      return query(client, sql, params, begin);
    });
    last = rows.catch(() => undefined);
    return rows;
  };
  return {
    driver: { dialect: "postgresql", all: next, refused: refusedWriteError, close: async () => {} },
    begin: () => {
      beginPending = true;
    },
    end: async (sql) => {
      await last;
      if (beginPending) {
        beginPending = false;
        return;
      }
      await next(sql, []);
    },
  };
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

  /**
   * A client for a transaction of our own. Checked out with a callback, as the pool's own queries are, so that it is never
   * taken for the client of a Prisma transaction starting meanwhile.
   */
  checkout(): Promise<pg.PoolClient> {
    return new Promise((resolve, reject) => super.connect((error, client) => (error ? reject(error) : resolve(client!))));
  }

  /** Waits until no other transaction is starting; `client()` is then the client the starting one checked out. */
  async startTransaction(): Promise<{ client(): pg.PoolClient | null; started(): void }> {
    const started = await this.#starts.acquire();
    this.#connected = null;
    return { client: () => this.#connected, started };
  }
}
