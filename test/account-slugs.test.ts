/**
 * The migration that gave accounts their slug fills it for the accounts already there, on the database the suite runs
 * on: the migrations before it are applied as written, accounts are added, then it runs.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { createClient } from "@libsql/client";
import pg from "pg";
import { listMigrations, pgMigrationsDir } from "../src/db/migrate.ts";
import { createTestDatabase, testProvider } from "./harness.ts";

const MIGRATION = "_public_access";
const names = ["Alpha", "alpha", "Bravo Unit", "charlie", "account-1", "-x", "Échelon"];

let dir: string;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "muster-slugs-"));
  database = await createTestDatabase(dir);
});
afterAll(async () => {
  await database.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs SQL scripts in order and returns what `query` answers afterwards. */
async function run(scripts: string[], query: string): Promise<Record<string, unknown>[]> {
  if (testProvider === "sqlite") {
    const client = createClient({ url: database.url });
    try {
      for (const sql of scripts) await client.executeMultiple(sql);
      return (await client.execute(query)).rows.map((r) => ({ ...r }));
    } finally {
      client.close();
    }
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    for (const sql of scripts) await client.query(sql);
    return (await client.query(query)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

test("existing accounts get a URL-safe, unique slug from their name, or account-<id>", async () => {
  const migrations = listMigrations(testProvider === "sqlite" ? undefined : pgMigrationsDir);
  const at = migrations.findIndex((m) => m.name.endsWith(MIGRATION));
  expect(at).toBeGreaterThan(0);
  const now = testProvider === "sqlite" ? "0" : "now()";
  const insert = `INSERT INTO "Account" ("name", "updatedAt") VALUES ${names.map((n) => `('${n}', ${now})`).join(", ")}`;
  const rows = await run(
    [...migrations.slice(0, at).map((m) => m.sql), insert, migrations[at].sql],
    `SELECT "id", "name", "slug" FROM "Account" ORDER BY "id"`,
  );
  const slugOf = Object.fromEntries(rows.map((r) => [r.name, r.slug]));
  const idOf = Object.fromEntries(rows.map((r) => [r.name, Number(r.id)]));
  expect(slugOf).toEqual({
    // Two names that fold to the same slug: neither takes it.
    Alpha: `account-${idOf.Alpha}`,
    alpha: `account-${idOf.alpha}`,
    "Bravo Unit": "bravo-unit",
    charlie: "charlie",
    // Could collide with another account's fallback.
    "account-1": `account-${idOf["account-1"]}`,
    "-x": `account-${idOf["-x"]}`,
    Échelon: `account-${idOf["Échelon"]}`,
  });
});
