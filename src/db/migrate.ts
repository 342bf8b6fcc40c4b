import { createHash, randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createClient } from "@libsql/client";
import pg from "pg";
import { isPostgresUrl, sqliteFileOf } from "./prisma.ts";

const migrationsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../prisma/migrations");
/** PostgreSQL's migrations: the same history, written by `prisma migrate diff` from prisma-pg/schema.prisma. */
export const pgMigrationsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../prisma-pg/migrations");

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export function listMigrations(dir = migrationsDir): Migration[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

/**
 * Applies pending migrations, recording them in Prisma's own `_prisma_migrations` table so that
 * `prisma migrate status` agrees. Runs at start-up; needs no Prisma CLI and no schema engine.
 */
export async function migrate(url: string): Promise<string[]> {
  if (isPostgresUrl(url)) return migratePostgres(url);
  const file = sqliteFileOf(url);
  if (file && file !== ":memory:") mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const client = createClient({ url });
  try {
    await client.execute("PRAGMA journal_mode = WAL");
    await client.execute("PRAGMA busy_timeout = 5000");
    await client.execute(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" TEXT PRIMARY KEY NOT NULL, "checksum" TEXT NOT NULL, "finished_at" DATETIME,
      "migration_name" TEXT NOT NULL, "logs" TEXT, "rolled_back_at" DATETIME,
      "started_at" DATETIME NOT NULL DEFAULT current_timestamp, "applied_steps_count" INTEGER UNSIGNED NOT NULL DEFAULT 0)`);
    const done = await client.execute(
      `SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
    const applied = new Set(done.rows.map((r) => String(r.migration_name)));
    const ran: string[] = [];
    for (const migration of listMigrations()) {
      if (applied.has(migration.name)) continue;
      const started = new Date().toISOString();
      await client.executeMultiple(`BEGIN;\n${migration.sql}\nCOMMIT;`);
      await client.execute({
        sql: `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES (?, ?, ?, ?, ?, 1)`,
        args: [randomUUID(), migration.checksum, new Date().toISOString(), migration.name, started],
      });
      ran.push(migration.name);
    }
    return ran;
  } finally {
    client.close();
  }
}

/** Key of the advisory lock that lets one instance at a time migrate a PostgreSQL database (any int8; "muster" in hex). */
const migrationLockKey = 0x6d7573746572;

/**
 * PostgreSQL: each pending migration runs in its own transaction together with its `_prisma_migrations` row (the
 * table as Prisma Migrate creates it), so a failed migration leaves nothing behind. Instances starting at once take
 * turns on a session advisory lock; the later one finds the migrations recorded and runs none.
 */
async function migratePostgres(url: string, dir = pgMigrationsDir): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [migrationLockKey]);
    await client.query(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" VARCHAR(36) PRIMARY KEY NOT NULL, "checksum" VARCHAR(64) NOT NULL, "finished_at" TIMESTAMPTZ,
      "migration_name" VARCHAR(255) NOT NULL, "logs" TEXT, "rolled_back_at" TIMESTAMPTZ,
      "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(), "applied_steps_count" INTEGER NOT NULL DEFAULT 0)`);
    const done = await client.query<{ migration_name: string }>(
      `SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
    const applied = new Set(done.rows.map((r) => r.migration_name));
    const ran: string[] = [];
    for (const migration of listMigrations(dir)) {
      if (applied.has(migration.name)) continue;
      const started = new Date();
      await client.query("BEGIN");
      try {
        await client.query(migration.sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES ($1, $2, now(), $3, $4, 1)`,
          [randomUUID(), migration.checksum, migration.name, started],
        );
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw new Error(
          `Migration ${migration.name} failed: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      }
      ran.push(migration.name);
    }
    return ran;
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [migrationLockKey]).catch(() => {});
    await client.end();
  }
}
