import pg from "pg";
import { parseTimestamp } from "../core/timestamps.ts";
import {
  connectionOf,
  cork,
  isPrepared,
  isPreparedOrSent,
  PgSubmittable,
  prepareValue,
  sendBind,
  sendDescribePortal,
  sendExecute,
  sendParse,
  sendSync,
  sendUnnamed,
  submitToClient,
  submitToPool,
  uncork,
  type DataRowMessage,
  type PgConnection,
  type RowDescriptionMessage,
} from "./pg-protocol.ts";

/**
 * Every PostgreSQL statement of our own (the store's reads, its writes, the direct transactions) goes through `query`
 * or `queryBatch` here: `ArrayQuery` and `StatementBatch`, pg submittables that send their own protocol messages.
 * pg's private shapes they need (its connection's messages and bookkeeping, the submittable's handlers) are in
 * src/db/pg-protocol.ts, with why pg's public `client.query` did not do.
 */

/** Named statements at most; the reader's SQL text depends on a query's shape, not its values. */
const NAMED_STATEMENTS = 500;

const TIMESTAMP = 1114;
const types = {
  getTypeParser: (oid: number, format?: "text" | "binary") =>
    oid === TIMESTAMP ? parseTimestamp : pg.types.getTypeParser(oid, format as "text"),
};

/** One statement name per SQL text across every connection (PostgreSQL prepares a named statement per connection). */
const statementNames = new Map<string, string>();
type Parser = (value: string) => unknown;
/** The column parsers of each named statement, from the first time any connection described its result. */
const parsersOf = new Map<string, Parser[]>();

/** `fields` of a DataRow, each read by its column's parser (a parser may throw). */
function parseRow(fields: Array<string | null>, parsers: Parser[]): unknown[] {
  const row = new Array<unknown>(fields.length);
  for (let i = 0; i < fields.length; i++) row[i] = fields[i] === null ? null : parsers[i](fields[i]!);
  return row;
}

/**
 * One statement as a pg submittable, with rows as arrays. Unlike pg's own Query, it asks for the result's description
 * only until the statement's column types are known: PostgreSQL sends no RowDescription without a Describe, so
 * neither side spends time on it (pg rebuilt its column names and parsers from it for every statement).
 */
class ArrayQuery extends PgSubmittable {
  callback?: (error: Error | null, rows?: unknown[][]) => void;
  readonly rows: unknown[][] = [];
  #parsers: Parser[] | undefined;
  #failure: Error | null = null;
  #answered = false;

  /**
   * `begin`: BEGIN goes out ahead of the statement, `commit`: COMMIT after it, in the same write, answered by the same
   * round trip (one Sync: if the statement fails, PostgreSQL skips the COMMIT and the transaction stays open, aborted).
   */
  constructor(
    readonly text: string,
    readonly values: unknown[],
    readonly name: string | undefined,
    readonly begin = false,
    readonly commit = false,
  ) {
    super();
    this.#parsers = name ? parsersOf.get(name) : undefined;
  }

  submit(connection: PgConnection): Error | null {
    let values: unknown[];
    try {
      values = this.values.map(prepareValue);
    } catch (error) {
      return error as Error;
    }
    const name = this.name ?? "";
    cork(connection);
    try {
      if (this.begin) sendUnnamed(connection, "BEGIN");
      if (!this.name || !isPreparedOrSent(connection, name)) sendParse(connection, this.text, name);
      sendBind(connection, name, values);
      if (!this.#parsers) sendDescribePortal(connection);
      sendExecute(connection);
      if (this.commit) sendUnnamed(connection, "COMMIT");
      sendSync(connection);
    } finally {
      uncork(connection);
    }
    return null;
  }

  handleRowDescription(message: RowDescriptionMessage) {
    this.#parsers = message.fields.map((f) => types.getTypeParser(f.dataTypeID, "text") as Parser);
    if (this.name) parsersOf.set(this.name, this.#parsers);
  }

  handleDataRow(message: DataRowMessage) {
    if (this.#failure) return;
    try {
      this.rows.push(parseRow(message.fields, this.#parsers!));
    } catch (error) {
      this.#failure = error as Error;
    }
  }

  handleError(error: Error) {
    this.#answer(error);
  }

  handleReadyForQuery() {
    this.#answer(this.#failure, this.rows);
  }

  handleCommandComplete() {}

  #answer(error: Error | null, rows?: unknown[][]) {
    if (this.#answered) return;
    this.#answered = true;
    this.callback?.(error, rows);
  }
}

/** A statement for a `StatementBatch`, and how its caller learns its rows. */
export interface BatchStatement {
  sql: string;
  params: unknown[];
  resolve(rows: unknown[][]): void;
  reject(error: unknown): void;
}

interface Batched {
  statement: BatchStatement;
  name: string;
  parsers: Parser[];
  rows: unknown[][];
  failure: Error | null;
}

/**
 * Statements of one transaction in one write, answered by one round trip (one Sync). Each is already prepared on the
 * connection with its columns known (`batchable`), so only Bind and Execute go out for it, and its answer is its rows
 * up to its CommandComplete. If one fails, PostgreSQL skips the rest until the Sync: in a transaction (aborted anyway)
 * they fail with its error; with `skipped` (reads, which share nothing but the write) they are handed to it to be sent
 * again. `settled` is called once every statement is answered or handed over.
 */
class StatementBatch extends PgSubmittable {
  #next = 0;
  #beginAnswered: boolean;

  constructor(
    readonly statements: Batched[],
    readonly begin: boolean,
    readonly settled: () => void,
    readonly skipped?: (statements: BatchStatement[]) => void,
  ) {
    super();
    this.#beginAnswered = !begin;
  }

  submit(connection: PgConnection): Error | null {
    let values: unknown[][];
    try {
      values = this.statements.map((s) => s.statement.params.map(prepareValue));
    } catch (error) {
      return error as Error;
    }
    cork(connection);
    try {
      if (this.begin) sendUnnamed(connection, "BEGIN");
      this.statements.forEach((s, i) => {
        sendBind(connection, s.name, values[i]);
        sendExecute(connection);
      });
      sendSync(connection);
    } finally {
      uncork(connection);
    }
    return null;
  }

  handleRowDescription() {}

  handleDataRow(message: DataRowMessage) {
    const batched = this.statements[this.#next];
    if (batched.failure) return;
    try {
      batched.rows.push(parseRow(message.fields, batched.parsers));
    } catch (error) {
      batched.failure = error as Error;
    }
  }

  handleCommandComplete() {
    if (!this.#beginAnswered) {
      this.#beginAnswered = true;
      return;
    }
    const { statement, rows, failure } = this.statements[this.#next++];
    if (failure) statement.reject(failure);
    else statement.resolve(rows);
    if (this.#next === this.statements.length) this.settled();
  }

  handleError(error: Error) {
    // The statement it answers and every one after it, skipped.
    if (this.#next === this.statements.length) return;
    this.statements[this.#next++].statement.reject(error);
    const rest = this.statements.slice(this.#next).map((s) => s.statement);
    this.#next = this.statements.length;
    if (this.skipped) this.skipped(rest);
    else for (const s of rest) s.reject(error);
    this.settled();
  }

  handleReadyForQuery() {
    // Ordinarily every statement has completed by now; an Error (and its stack) only for one that has not.
    if (this.#next < this.statements.length)
      this.handleError(new Error("PostgreSQL answered a batch of statements without completing each"));
  }
}

type Queryable = pg.Pool | pg.PoolClient;

/**
 * Whether `sql` can go in a `StatementBatch` on `client`: named, prepared on the client's connection, and its columns
 * known.
 */
export function batchable(client: pg.PoolClient, sql: string): boolean {
  const name = statementNames.get(sql);
  return name !== undefined && parsersOf.has(name) && isPrepared(connectionOf(client), name);
}

/**
 * Statements that are all `batchable` on `client`, in one write and one round trip (BEGIN ahead of them with `begin`),
 * each answered through its own `resolve` or `reject` with its rows as arrays; settles once every one is. After a
 * failed statement, the ones PostgreSQL skipped go to `skipped` when given, else fail with its error.
 */
export function queryBatch(
  client: pg.PoolClient,
  statements: BatchStatement[],
  begin: boolean,
  skipped?: (statements: BatchStatement[]) => void,
): Promise<void> {
  const batched = statements.map((statement): Batched => {
    const name = statementNames.get(statement.sql)!;
    return { statement, name, parsers: parsersOf.get(name)!, rows: [], failure: null };
  });
  return new Promise((settled) => submitToClient(client, new StatementBatch(batched, begin, settled, skipped)));
}

/**
 * One statement on a pool or a client, rows as arrays. `begin`: BEGIN goes out ahead of it, `commit`: COMMIT after it,
 * in the same write, answered by the same round trip.
 */
export const query = (
  on: Queryable,
  sql: string,
  params: unknown[],
  begin = false,
  commit = false,
): Promise<unknown[][]> => {
  let name = statementNames.get(sql);
  if (!name && statementNames.size < NAMED_STATEMENTS)
    statementNames.set(sql, (name = `muster_read_${statementNames.size}`));
  const statement = new ArrayQuery(sql, params, name, begin, commit);
  // A pool checks a client out, answers through the callback it sets, and releases the client; a client is given one.
  if (on instanceof pg.Pool) return submitToPool(on, statement) as Promise<unknown[][]>;
  return new Promise((resolve, reject) => {
    statement.callback = (error, rows) => (error ? reject(error) : resolve(rows!));
    submitToClient(on, statement);
  });
};
