import { mayRunTwice } from "../src/db/transaction.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, seed, startHarness, testProvider, type Client, type Harness } from "./harness.ts";
import { isBusyError } from "../src/db/sqlite.ts";

/**
 * SQLite's group commit (src/db/sqlite-group-commit.ts, `GroupCommit.directTransaction`): write transactions that queue behind
 * one another share one COMMIT, each but the first in a savepoint of its own.
 */
describe.runIf(testProvider === "sqlite")("SQLite: concurrent writes commit together", () => {
  let h: Harness;
  let api: Client;
  let ids: Awaited<ReturnType<typeof seed>>;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const flags = async (prefix: string) =>
    (
      (await h.db.read(`SELECT "name" FROM "SystemFlag" WHERE "name" LIKE ? ORDER BY "name"`, [
        `${prefix}%`,
      ])) as string[][]
    ).map((r) => r[0]);
  /** A direct transaction of the store that writes flag `name`, waiting `before` ms before the insert and `after` ms after it. */
  const writeFlag = (
    name: string,
    { before = 0, after = 0, timeout }: { before?: number; after?: number; timeout?: number } = {},
  ) =>
    h.db.store.transaction(
      mayRunTwice(async (tx) => {
        await sleep(before);
        await tx.sql.all(`INSERT INTO "SystemFlag" ("name", "value", "updatedAt") VALUES (?, 'x', ?)`, [
          name,
          new Date().toISOString(),
        ]);
        await sleep(after);
      }),
      { direct: true, timeout },
    );

  beforeAll(async () => {
    h = await startHarness();
    api = client(h, await h.key());
    ids = await seed(api);
  });
  afterAll(() => h?.close());

  it("thirty writes at once all land, in fewer COMMITs than writes, and /metrics counts both", async () => {
    const before = { ...h.db.commits! };
    const replies = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        api.post(`/v2/users/${ids.user.id}/rank-records`, { rank_id: ids.corporal.id, type: 0, text: `grouped ${i}` }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(30).fill(200));
    const listed = await api.get(`/v2/users/${ids.user.id}/rank-records?limit=100`);
    const texts = new Set(listed.body.data.map((r: { text: string }) => r.text));
    for (let i = 0; i < 30; i++) expect(texts.has(`grouped ${i}`)).toBe(true);

    const transactions = h.db.commits!.transactions - before.transactions;
    const commits = h.db.commits!.commits - before.commits;
    expect(transactions).toBeGreaterThanOrEqual(30);
    expect(commits).toBeGreaterThan(0);
    expect(commits).toBeLessThan(transactions);

    const metrics = await (await h.app.yoga.fetch("http://muster.test/metrics")).text();
    const counter = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, "m").exec(metrics)?.[1]);
    expect(counter("db_write_transactions_total")).toBe(h.db.commits!.transactions);
    expect(counter("db_write_commits_total")).toBe(h.db.commits!.commits);
  });

  it("a write that fails among them is rolled back alone: the others land, it leaves nothing", async () => {
    const before = h.db.commits!.commits;
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api.post(`/v2/users/${ids.user.id}/rank-records`, {
          rank_id: i % 2 ? 999_999 : ids.corporal.id,
          type: 0,
          text: `mixed ${i}`,
        }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(Array.from({ length: 20 }, (_, i) => (i % 2 ? 422 : 200)));
    const listed = await api.get(`/v2/users/${ids.user.id}/rank-records?limit=100`);
    const texts = listed.body.data.map((r: { text: string }) => r.text).filter((t: string) => t.startsWith("mixed "));
    expect(texts.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `mixed ${2 * i}`).sort());
    expect(h.db.commits!.commits - before).toBeLessThan(10);
  });

  it("the first transaction of a group (which has no savepoint) rolls back alone, with others waiting behind it and with none", async () => {
    const failing = (name: string, after: number) =>
      h.db.store.transaction(
        mayRunTwice(async (tx) => {
          await tx.sql.all(`INSERT INTO "SystemFlag" ("name", "value", "updatedAt") VALUES (?, 'x', ?)`, [
            name,
            new Date().toISOString(),
          ]);
          await sleep(after);
          throw new Error(`undo ${name}`);
        }),
        { direct: true },
      );
    await expect(failing("first-alone", 0)).rejects.toThrow("undo first-alone");
    const first = failing("first-0", 50);
    await sleep(10);
    const behind = [1, 2, 3].map((i) => writeFlag(`first-${i}`));
    await expect(first).rejects.toThrow("undo first-0");
    await Promise.all(behind);
    expect(await flags("first-")).toEqual(["first-1", "first-2", "first-3"]);
    await writeFlag("first-4");
    expect(await flags("first-4")).toEqual(["first-4"]);
  });

  it("a transaction that ends while another waits is answered with that one's COMMIT: both are committed when it is", async () => {
    const first = writeFlag("wait-a", { after: 20 });
    const second = writeFlag("wait-b");
    await first;
    // The first ended with the second waiting: the second joined its group, and the first's answer came with their COMMIT.
    expect(await flags("wait-")).toEqual(["wait-a", "wait-b"]);
    await second;
  });

  it("a request's write that ends with none waiting lets the loop turn once first: a write begun in that turn shares its COMMIT; other writes commit at once", async () => {
    /** COMMITs taken by a write and by another one begun in the next turn of the event loop, as the first ends. */
    const commitsOf = async (prefix: string, awaitCompany: boolean) => {
      const before = h.db.commits!.commits;
      let second: Promise<void> | undefined;
      await h.db.store.transaction(
        mayRunTwice(async (tx) => {
          await tx.sql.all(`INSERT INTO "SystemFlag" ("name", "value", "updatedAt") VALUES (?, 'x', ?)`, [
            `${prefix}-a`,
            new Date().toISOString(),
          ]);
          setImmediate(() => {
            second = writeFlag(`${prefix}-b`);
          });
        }),
        { direct: true, awaitCompany },
      );
      await new Promise((resolve) => setImmediate(resolve));
      await second;
      return h.db.commits!.commits - before;
    };
    expect(await commitsOf("company", true)).toBe(1);
    expect(await commitsOf("alone", false)).toBe(2);
    expect(await flags("company-")).toEqual(["company-a", "company-b"]);
    expect(await flags("alone-")).toEqual(["alone-a", "alone-b"]);
  });

  it("a group is rolled back, not committed, once one of its transactions is past its time; its transactions fail busy, so their writes are run again", async () => {
    // The first ends (after 20 ms, with the second waiting) within its 100 ms; the second keeps the group open past them.
    const first = writeFlag("late-a", { after: 20, timeout: 100 });
    const second = writeFlag("late-b", { before: 200 });
    const outcomes = await Promise.allSettled([first, second]);
    for (const outcome of outcomes) {
      expect(outcome.status).toBe("rejected");
      expect(isBusyError((outcome as PromiseRejectedResult).reason)).toBe(true);
    }
    expect(await flags("late-")).toEqual([]);
    // The connection is sound afterwards.
    await writeFlag("late-c");
    expect(await flags("late-")).toEqual(["late-c"]);
  });

  it("a group whose COMMIT fails fails every transaction in it, and leaves none of their rows", async () => {
    const first = writeFlag("broken-a", { after: 20 });
    // Checked at COMMIT only (SQLite resets the pragma when the transaction ends): the group's COMMIT refuses the row.
    const second = h.db.store.transaction(
      mayRunTwice(async (tx) => {
        await tx.sql.all(`PRAGMA defer_foreign_keys = ON`, []);
        await tx.sql.all(`INSERT INTO "SystemFlag" ("name", "value", "updatedAt") VALUES ('broken-b', 'x', ?)`, [
          new Date().toISOString(),
        ]);
        await tx.sql.all(`UPDATE "User" SET "rankId" = 999999 WHERE "id" = ?`, [ids.other.id]);
      }),
      { direct: true },
    );
    const outcomes = await Promise.allSettled([first, second]);
    for (const outcome of outcomes) {
      expect(outcome.status).toBe("rejected");
      expect(String((outcome as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/);
    }
    expect(await flags("broken-")).toEqual([]);
    expect((await api.get(`/v2/users/${ids.other.id}`)).body.data.rank_id).toBeNull();
    await writeFlag("broken-c");
    expect(await flags("broken-")).toEqual(["broken-c"]);
  });

  it("a Prisma transaction waiting behind a group commits it first, and runs after it", async () => {
    const direct = writeFlag("prisma-a", { after: 20 });
    const viaPrisma = h.db.store.transaction(async (tx) => {
      const seen = await tx.prisma.systemFlag.findMany({ where: { name: { startsWith: "prisma-" } } });
      await tx.prisma.systemFlag.create({ data: { name: "prisma-b", value: String(seen.length) } });
    });
    await Promise.all([direct, viaPrisma]);
    expect(await flags("prisma-")).toEqual(["prisma-a", "prisma-b"]);
    const [[value]] = (await h.db.read(`SELECT "value" FROM "SystemFlag" WHERE "name" = 'prisma-b'`, [])) as string[][];
    expect(value).toBe("1");
  });
});
