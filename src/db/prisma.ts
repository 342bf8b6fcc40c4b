import { PrismaClient } from "../generated/prisma/client.ts";
import { SqliteAdapterFactory, sqliteFileOf } from "./sqlite.ts";
import type { CommitCounts } from "./sqlite-group-commit.ts";

export { sqliteFileOf };
import type { ReadDriver } from "./driver.ts";
import { SqlReader } from "./reader.ts";
import {
  postgresDirectTransaction,
  postgresReadDriver,
  postgresTransactionDriver,
  sqliteReadDriver,
  type DirectTransactionDriver,
} from "./read-drivers.ts";
import { TransactionTrackingPool } from "./adapter-pg-checkout.ts";
import { Store } from "./store.ts";
import type { DirectConnection, TransactionStart } from "./connections.ts";
import { SqlWriter } from "./writer.ts";
import { takeRows, type RowBudget } from "./row-budget.ts";

export type Prisma = PrismaClient;

export interface Database {
  /**
   * The data store (src/db/store.ts): reads through `SqlReader` where it translates them, transactions with their
   * single-row writes through `SqlWriter`, Prisma for the rest. Every transaction starts here.
   */
  store: Store;
  /** The plain Prisma client: for what only Prisma answers, and Pothos. Never start a transaction on it (see `Store`). */
  prisma: PrismaClient;
  provider: "sqlite" | "postgresql";
  /** Counts SQL statements, Prisma's and the reader's; tests and benchmarks read it to pin query counts. */
  statements: { count: number };
  /**
   * SQLite: the app's own write transactions committed, and the COMMITs they took (fewer under concurrent writes,
   * which commit together: `GroupCommit.directTransaction`, src/db/sqlite-group-commit.ts). Undefined on PostgreSQL.
   */
  commits?: Readonly<CommitCounts>;
  /** Called with the SQL of each statement the reader runs (Prisma's are on `$on("query")`). */
  onReaderStatement: Set<(sql: string) => void>;
  /** The rows of one read statement of our own (`?` placeholders on SQLite, `$n` on PostgreSQL), on committed data. */
  read(sql: string, params: unknown[]): Promise<unknown[][]>;
  /** `read` for a statement that looks up a row or two by key (on SQLite on the main thread: `ReadDriver.lookup`). */
  lookup(sql: string, params: unknown[]): Promise<unknown[][]>;
  close(): Promise<void>;
}

function assemble(
  client: PrismaClient,
  provider: Database["provider"],
  driver: ReadDriver,
  statements: { count: number },
  close: () => Promise<void>,
  transactionDriver: () => Promise<{ driver(): ReadDriver | null; started(): void }>,
  directDriver?: (
    timeoutMs?: number,
    awaitCompany?: boolean,
  ) => Promise<DirectTransactionDriver & { release(broken?: Error): void }>,
): Database {
  const onReaderStatement = new Set<(sql: string) => void>();
  const options = {
    onStatement: (sql: string) => {
      statements.count++;
      for (const listener of onReaderStatement) listener(sql);
    },
  };
  const transaction = async (): Promise<TransactionStart> => {
    const start = await transactionDriver();
    return {
      routes: () => {
        const tx = start.driver();
        return tx && { reader: new SqlReader(tx, options), writer: new SqlWriter(tx, options) };
      },
      started: start.started,
    };
  };
  const direct =
    directDriver &&
    (async (timeoutMs?: number, awaitCompany?: boolean): Promise<DirectConnection> => {
      const { driver: tx, begin, end, release, sendsLastWithCommit } = await directDriver(timeoutMs, awaitCompany);
      return {
        reader: new SqlReader(tx, options),
        writer: new SqlWriter(tx, options),
        begin: () => (options.onStatement("BEGIN"), begin()),
        end: (sql, last) => {
          if (last) options.onStatement(last.sql);
          options.onStatement(sql);
          return end(sql, last);
        },
        sendsLastWithCommit,
        release,
      };
    });
  const read = async (sql: string, params: unknown[], budget: RowBudget | null = null) => {
    options.onStatement(sql);
    const rows = await driver.all(sql, params);
    takeRows(budget, rows.length);
    return rows;
  };
  const lookup = async (sql: string, params: unknown[]) => {
    options.onStatement(sql);
    return (driver.lookup ?? driver.all).call(driver, sql, params);
  };
  const store = new Store(client, { provider, reader: new SqlReader(driver, options), transaction, direct, read });
  return {
    store,
    prisma: client,
    provider,
    statements,
    onReaderStatement,
    read,
    lookup,
    close: async () => (await driver.close(), await close()),
  };
}

/** True for a `postgresql://` (or `postgres://`) URL: the service then runs on PostgreSQL. */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

/**
 * PostgreSQL: the client generated from prisma-pg/schema.prisma (the same models), over `@prisma/adapter-pg`. It is
 * typed as the SQLite client, whose types the Pothos schema is built from; the two differ only in provider-specific
 * options (`mode: "insensitive"`), which callers pass on PostgreSQL alone.
 */
async function openPostgres(url: string): Promise<Database> {
  const [{ PrismaClient: PgPrismaClient }, { PrismaPg }] = await Promise.all([
    import("../generated/prisma-pg/client.ts"),
    import("@prisma/adapter-pg"),
  ]);
  const statements = { count: 0 };
  const pool = new TransactionTrackingPool({ connectionString: url });
  // An idle connection the server closed (a restart, an administrator): the pool drops it and opens another when
  // needed. Without a listener the event would end the process.
  pool.on("error", () => {});
  const client = new PgPrismaClient({
    adapter: new PrismaPg(pool),
    log: [{ emit: "event", level: "query" }],
  });
  client.$on("query", () => {
    statements.count++;
  });
  await client.$connect();
  const prisma = client as unknown as PrismaClient;
  const transactionDriver = async () => {
    const start = await pool.startTransaction();
    return {
      driver: () => {
        const client = start.client();
        return client && postgresTransactionDriver(client);
      },
      started: start.started,
    };
  };
  const directDriver = async () => {
    const client = await pool.checkout();
    return { ...postgresDirectTransaction(client), release: (broken?: Error) => client.release(broken) };
  };
  return assemble(
    prisma,
    "postgresql",
    postgresReadDriver(pool),
    statements,
    async () => (await prisma.$disconnect(), await pool.end()),
    transactionDriver,
    directDriver,
  );
}

export async function openDatabase(url: string): Promise<Database> {
  if (isPostgresUrl(url)) return openPostgres(url);
  if (!url.startsWith("file:")) {
    throw new Error(
      `Unsupported DATABASE_URL "${url.replace(/\/\/[^@]*@/, "//***@")}": use a file: URL for SQLite or postgresql:// for PostgreSQL`,
    );
  }
  const statements = { count: 0 };
  const adapter = new SqliteAdapterFactory({ url });
  const prisma = new PrismaClient({
    adapter,
    log: [{ emit: "event", level: "query" }],
  });
  prisma.$on("query", () => {
    statements.count++;
  });
  await prisma.$executeRawUnsafe("PRAGMA journal_mode = WAL");
  // Direct transactions on the adapter's own connection (`GroupCommit.directTransaction`, src/db/sqlite-group-commit.ts): BEGIN IMMEDIATE has gone out
  // once it answers, so there is nothing left for `begin` to send.
  const directDriver = async (timeoutMs?: number, awaitCompany?: boolean) => {
    const tx = await adapter.client!.groupCommit.directTransaction(timeoutMs, awaitCompany);
    return {
      driver: tx.driver,
      begin: () => {},
      end: async (sql: "COMMIT" | "ROLLBACK") => (await tx.end(sql), []),
      sendsLastWithCommit: false,
      release: () => tx.release(),
    };
  };
  const database = assemble(
    prisma,
    "sqlite",
    sqliteReadDriver(sqliteFileOf(url)!),
    statements,
    () => prisma.$disconnect(),
    async () => ({ driver: () => adapter.transactionDriver(), started: () => {} }),
    directDriver,
  );
  return { ...database, commits: adapter.client!.groupCommit.commits };
}
