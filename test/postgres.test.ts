import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { describe, expect, test } from "vitest";
import { listMigrations, migrate, pgMigrationsDir } from "../src/db/migrate.ts";
import { openDatabase } from "../src/db/prisma.ts";
// @ts-expect-error plain ESM script without types
import { pgSchema } from "../scripts/gen-pg-schema.mjs";
import { createTestDatabase, testPostgresUrl, testProvider } from "./harness.ts";

const root = path.resolve(import.meta.dirname, "..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");

describe("one set of models for both databases", () => {
  test("prisma-pg/schema.prisma is generated from prisma/schema.prisma and up to date", () => {
    expect(read("prisma-pg/schema.prisma"), "stale: run `npm run generate` (or node scripts/gen-pg-schema.mjs)").toBe(
      pgSchema(read("prisma/schema.prisma")),
    );
  });

  test("both dialects have the same migrations, the last of each taken from the current models", () => {
    const sqlite = listMigrations(path.join(root, "prisma/migrations")).map((m) => m.name);
    const postgres = listMigrations(pgMigrationsDir).map((m) => m.name);
    expect(postgres).toEqual(sqlite);
    const last = sqlite.at(-1)!;
    expect(
      read(`prisma/migrations/${last}/schema.snapshot.prisma`),
      "model change without a migration: npm run db:migration -- <name>",
    ).toBe(read("prisma/schema.prisma"));
    expect(read(`prisma-pg/migrations/${last}/schema.snapshot.prisma`)).toBe(read("prisma-pg/schema.prisma"));
  });
});

/** Tables, columns, indexes and constraints of the public schema, as comparable text. */
async function catalog(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const columns =
      await client.query(`SELECT table_name, column_name, data_type, is_nullable, column_default, datetime_precision
      FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '_prisma_migrations' ORDER BY table_name, column_name`);
    const indexes = await client.query(
      `SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename <> '_prisma_migrations' ORDER BY indexname`,
    );
    const constraints =
      await client.query(`SELECT conrelid::regclass::text AS t, conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
      WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text NOT IN ('_prisma_migrations', '"_prisma_migrations"') ORDER BY 1, 2`);
    return [
      ...columns.rows.map(
        (r) =>
          `column ${r.table_name}.${r.column_name} ${r.data_type}(${r.datetime_precision ?? ""}) ${r.is_nullable} ${r.column_default ?? ""}`,
      ),
      ...indexes.rows.map((r) => `index ${r.indexdef}`),
      ...constraints.rows.map((r) => `constraint ${r.t} ${r.conname} ${r.def}`),
    ];
  } finally {
    await client.end();
  }
}

// These need the PostgreSQL server, which the PG pass of `npm test` has checked (and requires in CI).
describe.skipIf(testProvider !== "postgresql")("PostgreSQL migrations", () => {
  test("applying prisma-pg/migrations yields exactly the schema of prisma-pg/schema.prisma", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "muster-pg-"));
    const migrated = await createTestDatabase(dir);
    const direct = await createTestDatabase(dir);
    try {
      expect(await migrate(migrated.url)).toEqual(listMigrations(pgMigrationsDir).map((m) => m.name));
      const diff = spawnSync(
        "npx",
        [
          "prisma",
          "migrate",
          "diff",
          "--config",
          "prisma.pg.config.ts",
          "--from-empty",
          "--to-schema-datamodel",
          "prisma-pg/schema.prisma",
          "--script",
        ],
        {
          cwd: root,
          encoding: "utf8",
          env: { ...process.env, CHECKPOINT_DISABLE: "1", DATABASE_URL: testPostgresUrl },
        },
      );
      expect(diff.status, diff.stderr).toBe(0);
      const client = new pg.Client({ connectionString: direct.url });
      await client.connect();
      await client.query(diff.stdout).finally(() => client.end());
      expect(await catalog(migrated.url)).toEqual(await catalog(direct.url));
    } finally {
      await migrated.drop();
      await direct.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  test("migrating is idempotent, safe for instances starting at once, and recorded in _prisma_migrations", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "muster-pg-"));
    const database = await createTestDatabase(dir);
    try {
      const runs = await Promise.all([migrate(database.url), migrate(database.url), migrate(database.url)]);
      const names = listMigrations(pgMigrationsDir).map((m) => m.name);
      expect(runs.flat().sort()).toEqual(names);
      expect(await migrate(database.url)).toEqual([]);
      const db = await openDatabase(database.url);
      try {
        const rows = await db.prisma.$queryRawUnsafe<
          Array<{ migration_name: string; checksum: string; finished_at: Date | null }>
        >(`SELECT "migration_name", "checksum", "finished_at" FROM "_prisma_migrations" ORDER BY "migration_name"`);
        expect(rows.map((r) => r.migration_name)).toEqual(names);
        expect(rows.map((r) => r.checksum)).toEqual(listMigrations(pgMigrationsDir).map((m) => m.checksum));
        expect(rows.every((r) => r.finished_at !== null)).toBe(true);
        expect(db.provider).toBe("postgresql");
      } finally {
        await db.close();
      }
    } finally {
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
