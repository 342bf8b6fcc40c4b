import { PrismaLibSQL } from "@prisma/adapter-libsql";
import type { Client, Config as LibsqlConfig } from "@libsql/client";

/*
 * Library: @prisma/adapter-libsql, with the @libsql/client it would create.
 * Checked against: @prisma/adapter-libsql 6.19.3, @libsql/client 0.8.1
 *
 * The one module that overrides how Prisma's libsql adapter gets its client; test/library-contracts.test.ts checks
 * each point:
 * - the factory's `connect()` (and `connectToShadowDb()`, with `url: ":memory:"`) calls `this.createClient(config)`
 *   with the config it was constructed with, so a subclass's `createClient` decides the client;
 * - the adapter calls only `execute`, `executeMultiple`, `transaction("deferred")` and `close` of that client, and
 *   `execute`, `commit` and `rollback` of the transaction (`AdapterClient`), so a client of our own with just those
 *   will do;
 * - it reads a result's `columns`, `columnTypes`, `rowsAffected` and each row by index, so rows may be plain arrays
 *   (src/db/libsql-native.ts hands it the native driver's rows as they come).
 *
 * Why no public API did: the adapter's public constructor takes a config, and the client it then makes is
 * @libsql/client's, which hands its connection to each transaction and opens a new one, never closing the old (a
 * leaked connection per write); the adapter's transactions are `deferred`, so a check-then-write could interleave
 * with another connection's (src/db/sqlite.ts, `SqliteClient`, has them IMMEDIATE); and @libsql/client re-prepares
 * every statement, asks for its columns twice and builds each row from non-enumerable properties, where the native
 * driver underneath `SqliteClient` keeps statements prepared and rows raw: W4 4.2 → 3.2 ms (bench/FINDINGS.md, "What
 * changed"). `createClient` is declared in the adapter's types but not documented as a hook: nothing promises that
 * `connect` calls it, with which config, or what it then calls on the client.
 */

/** What Prisma's libsql adapter calls on its client: a client of our own needs no more. */
export type AdapterClient = Pick<Client, "execute" | "executeMultiple" | "transaction" | "close">;

/**
 * Prisma's libsql adapter factory over a client of our own: `openClient` is given the adapter's config (a file URL,
 * or ":memory:" for a shadow database) and `standard`, which makes @libsql/client's own client for it.
 */
export abstract class LibsqlAdapterFactory extends PrismaLibSQL {
  protected abstract openClient(config: LibsqlConfig, standard: () => Client): AdapterClient;

  createClient(config: LibsqlConfig): Client {
    return this.openClient(config, () => PrismaLibSQL.prototype.createClient.call(this, config)) as Client;
  }
}
