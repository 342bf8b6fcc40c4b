import type Database from "libsql";

export interface Prepared {
  statement: Database.Statement;
  /** Null for a statement that returns no rows. */
  columns: string[] | null;
  columnTypes: string[];
}

export function toSql(value: unknown): unknown;
export function isBusyError(error: unknown): boolean;
export const readOnlyPragmas: readonly string[];
export function converted(rows: unknown[][]): unknown[][];
export function prepare(db: Database.Database, sql: string): Prepared;
export class StatementCache {
  constructor(db: Database.Database, limit?: number);
  get(sql: string): Prepared;
  clear(): void;
}
