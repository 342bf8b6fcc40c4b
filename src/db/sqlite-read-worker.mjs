// @ts-check
/*
 * The read thread's body (see sqlite-read-thread.ts): one SQLite connection that only reads, its statements kept
 * prepared. Each message is a list of statements `[id, number, args, sql?]`, answered by one message with a list of
 * their answers, in order. A statement's SQL text comes with the first statement that uses its number; later ones
 * send the number alone. Plain JavaScript: a worker
 * thread loads its file with plain Node, without our TypeScript loader or the bundle.
 */
import { parentPort, workerData } from "node:worker_threads";
import Database from "libsql";
import { converted, isBusyError, readOnlyPragmas, StatementCache, toSql } from "./sqlite-rows.mjs";

/** @type {{ db: import("libsql").Database, statements: StatementCache } | null} */
let connection = null;

function open() {
  const db = new Database(workerData.file);
  const statements = new StatementCache(db);
  for (const pragma of readOnlyPragmas) {
    const { statement, columns } = statements.get(pragma);
    if (columns) statement.all([]);
    else statement.run([]);
  }
  return { db, statements };
}

/** A statement that failed busy is never reset by the driver (tursodatabase/libsql-js#237): the connection goes. */
function drop() {
  const dropped = connection;
  connection = null;
  try {
    dropped?.db.close();
  } catch {
    // Unusable already: replaced either way.
  }
}

/**
 * Whether `rows` hold only strings, nulls and finite numbers other than -0: JSON carries them exactly, and the main
 * thread parses a JSON text several times faster than it deserialises the same rows cloned (bench/FINDINGS.md).
 */
function plain(/** @type {unknown[][]} */ rows) {
  for (const row of rows) {
    for (const value of row) {
      if (value === null || typeof value === "string") continue;
      if (typeof value !== "number" || !Number.isFinite(value) || Object.is(value, -0)) return false;
    }
  }
  return true;
}

/** SQL texts by the number the main thread gives them. */
const texts = /** @type {string[]} */ ([]);

/** One statement's answer: its rows as JSON text, or cloned, or its error. */
function answer(/** @type {[number, number, unknown[], string?]} */ [id, number, args, text]) {
  if (text !== undefined) texts[number] = text;
  const sql = texts[number];
  try {
    if (sql === undefined) throw new Error(`No statement ${number} on the read thread`);
    connection ??= open();
    const { statement, columns } = connection.statements.get(sql);
    const values = args.map(toSql);
    if (!columns) {
      statement.run(values);
      return { id, rows: [] };
    }
    const rows = converted(/** @type {unknown[][]} */ (/** @type {unknown} */ (statement.all(values))));
    return plain(rows) ? { id, json: JSON.stringify(rows) } : { id, rows };
  } catch (error) {
    if (isBusyError(error)) drop();
    const e = /** @type {any} */ (error);
    return { id, error: { name: e?.name, message: e?.message ?? String(error), code: e?.code, rawCode: e?.rawCode } };
  }
}

parentPort?.on("message", (/** @type {Array<[number, number, unknown[], string?]>} */ statements) => {
  parentPort?.postMessage(statements.map(answer));
});
