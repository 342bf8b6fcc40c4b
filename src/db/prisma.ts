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

export async function openDatabase(url: string): Promise<Database> {
  if (!url.startsWith("file:")) {
    throw new Error(`Unsupported DATABASE_URL "${url.replace(/\/\/[^@]*@/, "//***@")}": use a file: URL for SQLite`);
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
