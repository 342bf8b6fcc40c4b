import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHarness, testProvider, type Harness } from "./harness.ts";
import { mayRunTwice, type StoreTransaction } from "../src/db/transaction.ts";
import { openDatabase } from "../src/db/prisma.ts";
import { countingProxy } from "./support/counting-proxy.ts";

/**
 * A transaction's last statement (`StoreTransaction.atCommit`, src/db/store.ts): in the same write and round trip as
 * the COMMIT on PostgreSQL's direct transactions, run at once elsewhere, with the COMMIT waiting for it. The outbox
 * writes every request's events this way (src/data/outbox.ts). Each case runs in a direct transaction and in
 * Prisma's.
 */
describe("a transaction's last statement, with its COMMIT", () => {
  let h: Harness;
  const pg = testProvider === "postgresql";
  const run = 1 + Math.floor(Math.random() * 1e9);
  let n = 0;
  const fresh = (what: string) => `last-${run}-${what}-${++n}`;
  const insert = `INSERT INTO "SystemFlag" ("name", "value", "updatedAt") VALUES (${pg ? "$1, $2, $3" : "?, ?, ?"}) RETURNING "name", "value"`;
  const values = (name: string, value = "x") => [
    name,
    value,
    pg ? new Date().toISOString().slice(0, 23) : new Date().toISOString(),
  ];
  const flagged = async (...names: string[]) => {
    const rows = await h.db.read(
      `SELECT "name" FROM "SystemFlag" WHERE "name" IN (${names.map((_, i) => (pg ? `$${i + 1}` : "?")).join(", ")})`,
      names,
    );
    return rows.map((r) => r[0]).sort();
  };
  const unique = /unique/i;

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h?.close());

  for (const direct of [true, false]) {
    const transaction = <T>(work: (tx: StoreTransaction) => Promise<T>) =>
      h.db.store.transaction(mayRunTwice(work), { direct });

    describe(direct ? "direct transaction" : "Prisma's transaction", () => {
      it("answers the last statement's rows once the transaction has committed, with the writes before it", async () => {
        const [first, last] = [fresh("first"), fresh("last")];
        let answered: Promise<unknown[][]> | undefined;
        await transaction(async (tx) => {
          await tx.sql.all(insert, values(first));
          answered = tx.atCommit(insert, values(last, "y"));
        });
        expect(await answered).toEqual([[last, "y"]]);
        expect(await flagged(first, last)).toEqual([first, last].sort());
      });

      it("runs a transaction whose only statement is the last", async () => {
        const only = fresh("only");
        let answered: Promise<unknown[][]> | undefined;
        await transaction(async (tx) => {
          answered = tx.atCommit(insert, values(only));
        });
        expect(await answered).toEqual([[only, "x"]]);
        expect(await flagged(only)).toEqual([only]);
      });

      it("rolls the whole transaction back when the last statement fails, with its error; the connections serve the next ones", async () => {
        const taken = fresh("taken");
        await transaction(async (tx) => void (await tx.sql.all(insert, values(taken))));
        // More failures than the pool has connections: one left in an aborted transaction would fail a later write.
        for (let i = 0; i < 12; i++) {
          const before = fresh("before");
          let answered: Promise<unknown[][]> | undefined;
          await expect(
            transaction(async (tx) => {
              await tx.sql.all(insert, values(before));
              answered = tx.atCommit(insert, values(taken));
            }),
          ).rejects.toThrow(unique);
          await expect(answered).rejects.toThrow(unique);
          expect(await flagged(before)).toEqual([]);
        }
        const [after, afterLast] = [fresh("after"), fresh("after-last")];
        await transaction(async (tx) => {
          await tx.sql.all(insert, values(after));
          void tx.atCommit(insert, values(afterLast));
        });
        expect(await flagged(after, afterLast)).toEqual([after, afterLast].sort());
      }, 30_000);

      it("fails alone when it is the only statement, leaving the connections sound", async () => {
        const taken = fresh("taken-alone");
        await transaction(async (tx) => void (await tx.sql.all(insert, values(taken))));
        for (let i = 0; i < 12; i++)
          await expect(transaction(async (tx) => void tx.atCommit(insert, values(taken)))).rejects.toThrow(unique);
        const after = fresh("after-alone");
        await transaction(async (tx) => void (await tx.sql.all(insert, values(after))));
        expect(await flagged(after)).toEqual([after]);
      }, 30_000);

      it("leaves nothing when the work fails after asking for it: the transaction rolls back and the statement's answer is that failure", async () => {
        const [written, last] = [fresh("written"), fresh("never")];
        let answered: Promise<unknown[][]> | undefined;
        await expect(
          transaction(async (tx) => {
            await tx.sql.all(insert, values(written));
            answered = tx.atCommit(insert, values(last));
            throw new Error("the work failed");
          }),
        ).rejects.toThrow("the work failed");
        await expect(answered).rejects.toThrow("the work failed");
        expect(await flagged(written, last)).toEqual([]);
      });

      it("is one per transaction", async () => {
        const [first, second] = [fresh("one"), fresh("two")];
        await expect(
          transaction(async (tx) => {
            void tx.atCommit(insert, values(first));
            void tx.atCommit(insert, values(second));
          }),
        ).rejects.toThrow("one last statement");
        expect(await flagged(first, second)).toEqual([]);
      });
    });
  }

  it.runIf(pg)(
    "sends the last statement and COMMIT in one write, with BEGIN too when it is the only statement",
    async () => {
      const proxy = await countingProxy(h.config.databaseUrl);
      const db = await openDatabase(proxy.url);
      try {
        const sent = async (work: (tx: StoreTransaction) => Promise<void>) => {
          await db.store.transaction(mayRunTwice(work), { direct: true });
          const before = proxy.chunks();
          await db.store.transaction(mayRunTwice(work), { direct: true });
          return proxy.chunks() - before;
        };
        // BEGIN with the first statement, then the second; then the last with COMMIT, or the last and COMMIT apart.
        expect(
          await sent(async (tx) => {
            await tx.sql.all(insert, values(fresh("trip")));
            void tx.atCommit(insert, values(fresh("trip")));
          }),
        ).toBe(2);
        expect(
          await sent(async (tx) => {
            await tx.sql.all(insert, values(fresh("trip")));
            await tx.sql.all(insert, values(fresh("trip")));
          }),
        ).toBe(3);
        expect(await sent(async (tx) => void tx.atCommit(insert, values(fresh("trip"))))).toBe(1);
      } finally {
        await db.close();
        proxy.close();
      }
    },
  );
});
