import { describe, expect, it } from "vitest";
import { mayRunTwice, type Store, type StoreTransaction } from "../src/db/store.ts";

/*
 * Contracts the compiler keeps: `npm test` type-checks this file (`tsc -p .` in pretest), so each line marked
 * `@ts-expect-error` must stay an error, and each unmarked line must compile. The functions are never called.
 */

export function directTransactions(store: Store, work: (tx: StoreTransaction) => Promise<void>) {
  // A direct transaction may run its work twice (src/db/store.ts): the work must say it may.
  // @ts-expect-error plain work for a direct transaction
  void store.transaction(work, { direct: true });
  void store.transaction(mayRunTwice(work), { direct: true });
  // Prisma's transaction runs it once: plain work will do.
  void store.transaction(work);
  void store.transaction(work, { direct: false, timeout: 1000 });
}

export function transactionCarry(tx: StoreTransaction) {
  // What a transaction carries is typed by the module that owns it (src/data/outbox.ts, src/data/write.ts).
  void tx.carry.events?.length;
  void tx.carry.files?.delete([]);
  // @ts-expect-error nothing declared it
  void tx.carry.somethingElse;
}

describe("type contracts", () => {
  it("are checked by tsc; this file only has to load", () => {
    expect(typeof directTransactions).toBe("function");
  });
});
