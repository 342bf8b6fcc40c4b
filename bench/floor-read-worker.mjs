/**
 * A read thread of the floor on SQLite (bench/floor.ts, `betterSqlite`): its own read-only better-sqlite3 connection
 * (WAL: it reads committed data while the main thread writes), each statement prepared once. It answers each
 * `{ id, sql, args }` with `{ id, rows }` (rows as objects keyed by column name) or `{ id, error }`.
 */
import { createRequire } from "node:module";
import { parentPort, workerData } from "node:worker_threads";

const Database = createRequire(import.meta.url)("better-sqlite3");
const db = new Database(workerData.file, { readonly: true });
db.pragma("busy_timeout = 10000");
const statements = new Map();

parentPort.on("message", ({ id, sql, args }) => {
  try {
    let statement = statements.get(sql);
    if (!statement) statements.set(sql, (statement = db.prepare(sql)));
    parentPort.postMessage({ id, rows: statement.all(args) });
  } catch (error) {
    parentPort.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
