import { describe, expect, it } from "vitest";
import type { Store } from "../src/db/store.ts";
import { mayRunTwice, type StoreTransaction } from "../src/db/transaction.ts";
import {
  belongsTo,
  defineResource,
  hasMany,
  string,
  type ActionRun,
  type ColumnOf,
  type ModelRow,
} from "../src/resources/define.ts";
import type { InsertedId } from "../src/db/writer.ts";

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

export function registry() {
  // A resource's field keys are its model's columns.
  defineResource({ name: "rank", model: "Rank", fields: { name: string(), description: string() } });
  // @ts-expect-error a misspelt field key
  defineResource({ name: "rank", model: "Rank", fields: { naem: string() } });
  // @ts-expect-error a column of another model
  defineResource({ name: "rank", model: "Rank", fields: { rankId: string() } });
  // @ts-expect-error a model the schema does not have
  defineResource({ name: "rank", model: "Rnak", fields: {} });
  const column: ColumnOf<"RankRecord"> = "userId";
  // @ts-expect-error not a column of RankRecord
  const notColumn: ColumnOf<"RankRecord"> = "rank";
  void [column, notColumn];

  // Relation helpers take one object: every part is named.
  belongsTo({ target: "user", foreignKey: "authorId", field: "author" });
  hasMany({ target: "rankRecord", field: "rankRecords", foreignKey: "userId", orderBy: [{ id: "desc" }] });
  // @ts-expect-error positional arguments are gone
  belongsTo("user", "authorId", "author");
}

export function typedRows() {
  // A resource's hooks, computed fields and actions get rows of its model (`RowOf`): its columns, typed.
  defineResource({
    name: "user",
    model: "User",
    fields: { name: string() },
    computed: {
      initial: { type: "string", needs: ["name"], resolve: (row) => row.name.charAt(0) },
      // @ts-expect-error `needs` names the model's columns
      misspelt: { type: "string", needs: ["naem"], resolve: () => null },
      // @ts-expect-error a misspelt column of a computed field's row
      other: { type: "string", needs: ["name"], resolve: (row) => row.naem },
    },
    hooks: {
      beforeWrite({ existing }) {
        void (existing?.rankId satisfies number | null | undefined);
      },
      async beforeInsert({ row }) {
        // The values about to be inserted: the columns the write sets.
        void (row.rankId satisfies number | null | undefined);
        // @ts-expect-error a misspelt column of the values about to be inserted
        void row.rankid;
      },
      async afterInsert({ row }) {
        // Where statements pipeline, the id is an InsertedId.
        void (row.id satisfies number | InsertedId);
        // @ts-expect-error a misspelt column of the inserted row
        void row.rankid;
      },
      afterCreate({ row }) {
        void (row.rankId satisfies number | null);
        // @ts-expect-error a misspelt column of the created row
        void row.rankid;
        // @ts-expect-error a column of another model
        void row.awardId;
      },
    },
  });
  // An action's work gets a row of the resource's model; the runners' table keeps the erased form.
  const run = async ({ row }: Parameters<ActionRun<"Webhook">>[0]) => {
    void (row.secret satisfies string);
    // @ts-expect-error a misspelt column of the action's row
    void row.secert;
    return row.id;
  };
  const runners: Record<string, ActionRun> = { run };
  const row: ModelRow<"RankRecord"> | null = null;
  void [runners, row];
}

describe("type contracts", () => {
  it("are checked by tsc; this file only has to load", () => {
    expect([typeof directTransactions, typeof registry, typeof typedRows]).toEqual([
      "function",
      "function",
      "function",
    ]);
  });
});
