import { createHash, randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createClient } from "@libsql/client";
import { sqliteFileOf } from "./prisma.ts";

const migrationsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../prisma/migrations");

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
    const done = await client.execute(`SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`);
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
