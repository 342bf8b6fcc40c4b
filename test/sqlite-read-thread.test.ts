import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { NativeConnection } from "../src/db/libsql-native.ts";
import { SqliteReadThread } from "../src/db/sqlite-read-thread.ts";

/**
 * SQLite reads on their own thread (src/db/sqlite-read-thread.ts): the values the main thread's connection answers
 * (test/sqlite-values.test.ts), by either of the two ways rows come back (JSON text, or cloned when a value JSON cannot
 * carry exactly), the driver's errors, and a thread that is started again after it was closed.
 */
describe("SQLite read thread", () => {
  let dir: string;
  let file: string;
  let writer: NativeConnection;
  let thread: SqliteReadThread;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "muster-read-thread-"));
    file = path.join(dir, "values.db");
    writer = new NativeConnection(file);
    await writer.execute("PRAGMA journal_mode = WAL");
    await writer.execute(
      `CREATE TABLE "T" ("id" INTEGER PRIMARY KEY, "n" INTEGER, "big" BIGINT, "bytes" BLOB, "text" TEXT, "real" REAL)`,
    );
    await writer.execute({
      sql: `INSERT INTO "T" VALUES (1, ?, ?, ?, ?, ?)`,
      args: [42, 7, new Uint8Array([1, 2, 3]).buffer, 'a \u00e9 \u{1F600} "q"\n', 1.5],
    });
    await writer.execute(`INSERT INTO "T" ("id", "big") VALUES (2, 9007199254740993)`);
    await writer.execute(`INSERT INTO "T" ("id", "real") VALUES (4, 9e999)`);
    thread = new SqliteReadThread(file);
  });
  afterAll(async () => {
    await thread.close();
    writer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("rows of strings, numbers and nulls come back as the main thread's connection answers them", async () => {
    const sql = `SELECT "id", "n", "big", "text", "real", "n" * 2, NULL FROM "T" WHERE "id" = ?`;
    const rows = await thread.all(sql, [1]);
    expect(rows).toEqual([[1, 42, 7, 'a \u00e9 \u{1F600} "q"\n', 1.5, 84, null]]);
    expect(rows).toEqual((await writer.execute({ sql, args: [1] })).rows);
  });

  test("a blob, an infinite real and -0 (which JSON cannot carry) come back exactly", async () => {
    const [[bytes]] = (await thread.all(`SELECT "bytes" FROM "T" WHERE "id" = 1`, [])) as [[ArrayBuffer]];
    expect(bytes).toBeInstanceOf(ArrayBuffer);
    expect([...new Uint8Array(bytes)]).toEqual([1, 2, 3]);
    const [[infinite, negativeZero, rounded]] = await thread.all(
      `SELECT "real", -0.0, 0.1 + 0.2 FROM "T" WHERE "id" = 4`,
      [],
    );
    expect(infinite).toBe(Infinity);
    expect(Object.is(negativeZero, -0)).toBe(true);
    expect(rounded).toBe(0.1 + 0.2);
  });

  test("arguments as the driver binds them: booleans, dates, blobs", async () => {
    const [[flag, time, length]] = (await thread.all(`SELECT ?, ?, length(?)`, [
      true,
      new Date(86_400_000),
      new Uint8Array([9, 9]).buffer,
    ])) as [[number, number, number]];
    expect([flag, time, length]).toEqual([1, 86_400_000, 2]);
  });

  test("an argument that cannot be sent fails its statement alone; the statements sent with it, and its SQL later, are answered", async () => {
    const sql = `SELECT ? + 100`;
    const [bad, good] = await Promise.allSettled([thread.all(sql, [() => 1]), thread.all(`SELECT ? + 200`, [1])]);
    expect(bad).toMatchObject({ status: "rejected", reason: expect.any(TypeError) });
    expect(good).toEqual({ status: "fulfilled", value: [[201]] });
    expect(await thread.all(sql, [1])).toEqual([[101]]);
  });

  test("an integer past 2^53 in a BIGINT column is refused, not rounded", async () => {
    await expect(thread.all(`SELECT "big" FROM "T" WHERE "id" = 2`, [])).rejects.toThrow(RangeError);
    expect(await thread.all(`SELECT "big" FROM "T" WHERE "id" = 1`, [])).toEqual([[7]]);
  });

  test("the driver's errors keep SQLite's codes; the connection only reads", async () => {
    await expect(thread.all(`SELECT * FROM "Nope"`, [])).rejects.toMatchObject({
      code: "SQLITE_ERROR",
      message: expect.stringMatching(/no such table/),
    });
    await expect(thread.all(`INSERT INTO "T" ("id") VALUES (9)`, [])).rejects.toMatchObject({
      code: expect.stringMatching(/^SQLITE_READONLY/),
    });
    await expect(thread.all(`SELECT ?`, [undefined])).rejects.toThrow(TypeError);
    expect(await thread.all(`SELECT count(*) FROM "T" WHERE "id" = 9`, [])).toEqual([[0]]);
  });

  test("a write committed on another connection is seen by the next read", async () => {
    for (let i = 10; i < 15; i++) {
      await writer.execute({ sql: `INSERT INTO "T" ("id", "n") VALUES (?, ?)`, args: [i, i] });
      expect(await thread.all(`SELECT "n" FROM "T" WHERE "id" = ?`, [i])).toEqual([[i]]);
    }
  });

  test("statements sent together are answered each with its own rows", async () => {
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => thread.all(`SELECT ? + 1`, [i])));
    expect(answers).toEqual(Array.from({ length: 50 }, (_, i) => [[i + 1]]));
  });

  test("closing fails the statements still waiting; the next statement starts the thread again", async () => {
    const other = new SqliteReadThread(file);
    const waiting = expect(
      other.all(
        `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000) SELECT count(*) FROM c`,
        [],
      ),
    ).rejects.toMatchObject({ code: "SQLITE_MISUSE" });
    await other.close();
    await waiting;
    expect(await other.all(`SELECT count(*) FROM "T" WHERE "id" = 1`, [])).toEqual([[1]]);
    await other.close();
  });

  test("a process waiting on a read stays alive for the answer, and exits on its own without closing the thread", () => {
    const script = path.join(dir, "read-once.mts");
    writeFileSync(
      script,
      `import { SqliteReadThread } from ${JSON.stringify(path.resolve(import.meta.dirname, "../src/db/sqlite-read-thread.ts"))};
      const thread = new SqliteReadThread(${JSON.stringify(file)});
      console.log(JSON.stringify(await thread.all('SELECT "n" FROM "T" WHERE "id" = 1', [])));`,
    );
    const run = spawnSync(process.execPath, ["--import", "tsx", script], {
      cwd: path.resolve(import.meta.dirname, ".."),
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout.trim()).toBe("[[42]]");
  });
});
