import { PrismaLibSQL } from "@prisma/adapter-libsql";
import type { Client, Config as LibsqlConfig } from "@libsql/client";

const connectionPragmas = ["PRAGMA foreign_keys = ON", "PRAGMA busy_timeout = 5000"];

/**
 * The libsql adapter, with per-connection pragmas applied. libsql hands its connection to each
 * transaction and opens a fresh one afterwards, and SQLite leaves foreign keys off on every new
 * connection, so cascades would silently stop working after the first transaction.
 */
export class SqliteAdapterFactory extends PrismaLibSQL {
  createClient(config: LibsqlConfig): Client {
    const client: Client = (PrismaLibSQL.prototype as unknown as { createClient(c: LibsqlConfig): Client }).createClient.call(this, config);
    let fresh = true;
    const prepare = async () => {
      if (!fresh) return;
      fresh = false;
      for (const pragma of connectionPragmas) await client.execute(pragma);
    };
    const execute = client.execute.bind(client);
    const batch = client.batch.bind(client);
    const executeMultiple = client.executeMultiple.bind(client);
    const transaction = client.transaction.bind(client);
    return Object.assign(client, {
      execute: (async (...args: Parameters<Client["execute"]>) => (await prepare(), execute(...args))) as Client["execute"],
      batch: (async (...args: Parameters<Client["batch"]>) => (await prepare(), batch(...args))) as Client["batch"],
      executeMultiple: async (sql: string) => (await prepare(), executeMultiple(sql)),
      transaction: (async (...args: Parameters<Client["transaction"]>) => {
        await prepare();
        const tx = await transaction(...args);
        fresh = true;
        return tx;
      }) as Client["transaction"],
    });
  }
}
