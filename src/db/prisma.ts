import { PrismaClient } from "../generated/prisma/client.ts";
import { SqliteAdapterFactory } from "./sqlite.ts";

export type Prisma = PrismaClient;

export interface Database {
  prisma: PrismaClient;
  provider: "sqlite" | "postgresql";
  /** Counts SQL statements; tests and benchmarks read it to pin query counts. */
  statements: { count: number };
  close(): Promise<void>;
}

export function sqliteFileOf(url: string): string | null {
  if (url.startsWith("file:")) return url.slice("file:".length).split("?")[0]!;
  return null;
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
  const pg = new PgPrismaClient({
    adapter: new PrismaPg({ connectionString: url }),
    log: [{ emit: "event", level: "query" }],
  });
  pg.$on("query", () => {
    statements.count++;
  });
  await pg.$connect();
  const prisma = pg as unknown as PrismaClient;
  return { prisma, provider: "postgresql", statements, close: () => prisma.$disconnect() };
}

export async function openDatabase(url: string): Promise<Database> {
  if (isPostgresUrl(url)) return openPostgres(url);
  if (!url.startsWith("file:")) {
    throw new Error(`Unsupported DATABASE_URL "${url.replace(/\/\/[^@]*@/, "//***@")}": use a file: URL for SQLite or postgresql:// for PostgreSQL`);
  }
  const statements = { count: 0 };
  const prisma = new PrismaClient({
    adapter: new SqliteAdapterFactory({ url }),
    log: [{ emit: "event", level: "query" }],
  });
  prisma.$on("query", () => {
    statements.count++;
  });
  await prisma.$executeRawUnsafe("PRAGMA journal_mode = WAL");
  return { prisma, provider: "sqlite", statements, close: () => prisma.$disconnect() };
}
