import pg from "pg";
import pgUtils from "pg/lib/utils.js";

/*
 * Library: pg (node-postgres).
 * Checked against: pg 8.23.1
 *
 * The one module that knows pg's private protocol shapes; src/db/pg-pipeline.ts drives statements through the typed
 * functions here and reads nothing of pg's own. What it relies on (test/library-contracts.test.ts checks each):
 * - A client's `connection` (pg/lib/connection.js) and its message writers `parse`, `bind`, `describe`, `execute`,
 *   `sync`, `sendCopyFail`, its `stream` (`cork`/`uncork`), and its per-connection bookkeeping of named statements:
 *   `parsedStatements` (pg records a name there on ParseComplete, from the active query's `name` and `text`) and
 *   `submittedNamedStatements` (sent, not yet answered; pg deletes the name on an error).
 * - A submittable (an object with `submit(connection)`, which `client.query` and `pool.query` accept): pg calls
 *   `submit` when it is the client's turn, then the handlers below for each backend message, and answers through
 *   the `callback` it sets on the submittable (from the callback `pool.query` passes). On an ErrorResponse pg calls
 *   `handleError` and lets the submittable go: it gets no `handleReadyForQuery`, so it answers on the error.
 * - `prepareValue` of pg/lib/utils.js, pg's own conversion of a JavaScript value into a parameter (not exported by
 *   the package's index; typed in pg-protocol-modules.d.ts).
 *
 * Why pg's public API did not do: `client.query({ name, text, values, rowMode: "array", types })` was tried (issue
 * 17) and measured with `NODE_ENV=production npx tsx bench/cpu.ts --pg --n 600 --rounds 5 W1 W4`, four runs each way
 * alternated, CPU ms per request (medians of the runs):
 *   our submittable  W1 3.69 3.23 4.27 3.97  W4 2.50 2.54 2.35 3.06
 *   pg's public API  W1 4.56 3.95 4.71 4.31  W4 3.09 2.82 3.25 3.48   (about +15 % W1, +25 % W4)
 * pg's Query always sends Describe and rebuilds the result's fields and parsers from the RowDescription for every
 * statement (`addFields`, 4-6 % of W1 and W4: bench/FINDINGS.md, "What changed"); ours asks for the description only
 * until a named statement's column types are known, and sends several statements of one transaction (or reads of
 * one turn of the event loop) in one write with one Sync (bench/FINDINGS.md, "Reads in one write"), which pg's
 * public API cannot. BEGIN in the same write as a direct transaction's first statement the public API can do with a
 * pipelining pool (`new pg.Pool({ pipeline: true })`, pg 8.23): measured in isolation it cost about 60 µs more CPU per
 * transaction. Revisit when pg's Query can skip Describe.
 *
 * Each function is one property access or call: the JIT inlines them into pg-pipeline's submit methods.
 */

/** pg's Connection of a client, as far as we drive it. */
export interface PgConnection {
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

/** The RowDescription message pg hands a submittable. */
export interface RowDescriptionMessage {
  fields: Array<{ dataTypeID: number }>;
}

/** The DataRow message pg hands a submittable: each field as text, or null. */
export interface DataRowMessage {
  fields: Array<string | null>;
}

/** pg's conversion of a JavaScript value into a statement parameter (what its own Query applies to each value). */
export const prepareValue: (value: unknown) => unknown = pgUtils.prepareValue;

/** The protocol connection of a client checked out of a pool. */
export const connectionOf = (client: pg.PoolClient): PgConnection =>
  (client as unknown as { connection: PgConnection }).connection;

/** Whether the named statement `name` is prepared on `connection` (PostgreSQL has answered its Parse). */
export const isPrepared = (connection: PgConnection, name: string): boolean =>
  connection.parsedStatements[name] !== undefined;

/** Whether the named statement `name` is prepared on `connection` or its Parse already sent. */
export const isPreparedOrSent = (connection: PgConnection, name: string): boolean =>
  connection.parsedStatements[name] !== undefined || connection.submittedNamedStatements[name] !== undefined;

/** Parse of `text` as `name` ("" for the unnamed statement); a named one is recorded as sent, as pg's Query does. */
export function sendParse(connection: PgConnection, text: string, name: string): void {
  connection.parse({ text, name });
  if (name) connection.submittedNamedStatements[name] = text;
}

/** Bind of the statement `name` to the unnamed portal. */
export const sendBind = (connection: PgConnection, name: string, values: unknown[]): void =>
  connection.bind({ statement: name, values });

/** Describe of the unnamed portal: PostgreSQL answers with a RowDescription (or NoData). */
export const sendDescribePortal = (connection: PgConnection): void => connection.describe({ type: "P", name: "" });

/** Execute of the unnamed portal, every row. */
export const sendExecute = (connection: PgConnection): void => connection.execute({ portal: "" });

/** Sync: PostgreSQL answers everything sent before it, then ReadyForQuery. */
export const sendSync = (connection: PgConnection): void => connection.sync();

/** A statement without parameters or rows (BEGIN, COMMIT), parsed, bound and executed unnamed. */
export function sendUnnamed(connection: PgConnection, text: string): void {
  connection.parse({ text, name: "" });
  connection.bind({ statement: "", values: [] });
  connection.execute({ portal: "" });
}

/** Holds the messages written to `connection` until `uncork`: one write for all of them. */
export const cork = (connection: PgConnection): void => connection.stream.cork?.();
export const uncork = (connection: PgConnection): void => connection.stream.uncork?.();

/**
 * A pg submittable: `submit` writes its messages when the client's turn comes (an Error returned is handed to
 * `handleError`), then pg calls the handlers for what PostgreSQL answers. Those our statements never cause (an
 * empty query, a suspended portal, COPY) are answered here. A subclass with a `name` and `text` has pg record the
 * statement as prepared on ParseComplete (`isPrepared`).
 */
export abstract class PgSubmittable {
  abstract submit(connection: PgConnection): Error | null;
  abstract handleRowDescription(message: RowDescriptionMessage): void;
  abstract handleDataRow(message: DataRowMessage): void;
  abstract handleCommandComplete(): void;
  abstract handleError(error: Error): void;
  abstract handleReadyForQuery(): void;
  handleEmptyQuery() {}
  handlePortalSuspended() {}
  handleCopyData() {}
  handleCopyInResponse(connection: PgConnection) {
    connection.sendCopyFail("No source stream defined");
  }
}

/**
 * `submittable` on a pool, which checks a client out, sets the submittable's `callback` and releases the client when
 * it is called; the promise settles with what the callback is given.
 */
export const submitToPool = (pool: pg.Pool, submittable: PgSubmittable): Promise<unknown> =>
  pool.query(submittable as never) as unknown as Promise<unknown>;

/** `submittable` on a client: its own `callback`, if any, is what answers. */
export const submitToClient = (client: pg.PoolClient, submittable: PgSubmittable): void =>
  void client.query(submittable as never);
