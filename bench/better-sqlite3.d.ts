/** The part of better-sqlite3 the floor uses (the package ships no types; @types/better-sqlite3 is not installed). */
declare module "better-sqlite3" {
  namespace Database {
    interface Statement {
      /** Whether the statement returns rows (then `all`/`get`, else `run`). */
      readonly reader: boolean;
      all(params: unknown[]): unknown[];
      get(params: unknown[]): unknown;
      run(params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
    }
    interface Transaction<F extends (...args: never[]) => unknown> {
      (...args: Parameters<F>): ReturnType<F>;
      /** The same in BEGIN IMMEDIATE: the write lock is taken up front. */
      immediate(...args: Parameters<F>): ReturnType<F>;
    }
    interface Database {
      prepare(sql: string): Statement;
      pragma(sql: string): unknown;
      transaction<F extends (...args: never[]) => unknown>(fn: F): Transaction<F>;
      close(): void;
    }
  }
  const Database: new (filename: string, options?: { readonly?: boolean; timeout?: number }) => Database.Database;
  export = Database;
}
