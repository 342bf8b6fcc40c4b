import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { NativeConnection } from "../src/db/libsql-native.ts";

/**
 * Values as the SQLite connection (src/db/libsql-native.ts) answers them, as @libsql/client does with `intMode: "number"`:
 * integers as numbers, blobs as ArrayBuffers, and an integer past 2^53 in a BIGINT column refused rather than rounded.
 */
describe("SQLite values", () => {
  let dir: string;
  let connection: NativeConnection;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "muster-values-"));
    connection = new NativeConnection(path.join(dir, "values.db"));
    await connection.execute(
      `CREATE TABLE "T" ("id" INTEGER PRIMARY KEY, "n" INTEGER, "big" BIGINT, "bytes" BLOB, "text" TEXT, "real" REAL)`,
    );
    await connection.execute({
      sql: `INSERT INTO "T" VALUES (1, ?, ?, ?, ?, ?)`,
      args: [42, 7, new Uint8Array([1, 2, 3]).buffer, "a", 1.5],
    });
    await connection.execute(`INSERT INTO "T" ("id", "big") VALUES (2, 9007199254740993)`);
  });
  afterAll(() => {
    connection.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("integers are numbers, blobs ArrayBuffers, text and reals as stored; the rows are arrays in column order", async () => {
    const { rows, columns } = await connection.execute(
      `SELECT "id", "n", "big", "bytes", "text", "real", "n" * 2 AS "twice" FROM "T" WHERE "id" = 1`,
    );
    expect(columns).toEqual(["id", "n", "big", "bytes", "text", "real", "twice"]);
    const [row] = rows as unknown as unknown[][];
    expect(row.slice(0, 3)).toEqual([1, 42, 7]);
    expect(row[3]).toBeInstanceOf(ArrayBuffer);
    expect([...new Uint8Array(row[3] as ArrayBuffer)]).toEqual([1, 2, 3]);
    expect(row.slice(4)).toEqual(["a", 1.5, 84]);
    expect(row.every((value) => typeof value !== "bigint")).toBe(true);
  });

  test("an integer past 2^53 in a BIGINT column is refused, not rounded; the same row without it reads", async () => {
    await expect(connection.execute(`SELECT "id", "big" FROM "T" WHERE "id" = 2`)).rejects.toThrow(RangeError);
    expect((await connection.execute(`SELECT "id", "n" FROM "T" WHERE "id" = 2`)).rows).toEqual([[2, null]]);
    expect((await connection.execute(`SELECT "big" FROM "T" WHERE "id" = 1`)).rows).toEqual([[7]]);
  });

  test("a write answers its row count and the new row's id", async () => {
    const result = await connection.execute({ sql: `INSERT INTO "T" ("id", "n") VALUES (?, ?)`, args: [3, 1] });
    expect(result.rowsAffected).toBe(1);
    expect(result.lastInsertRowid).toBe(3n);
  });
});
