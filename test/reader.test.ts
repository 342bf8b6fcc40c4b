import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { startHarness, testProvider, type Harness } from "./harness.ts";

/**
 * The SQL reader (src/db/reader.ts) answers reads outside transactions in Prisma's place. Each case runs the same
 * arguments through the routed client and through Prisma alone, on the same data, and requires equal answers, and
 * that the reader (not a fallback to Prisma) gave the routed one, or, for arguments it leaves to Prisma, that it did not.
 */
let h: Harness;
let accountId: number;
const ids: Record<string, number[]> = {};

beforeAll(async () => {
  h = await startHarness();
  const p = h.db.prismaOnly as any;
  accountId = (await p.account.create({ data: { name: "reader" } })).id;
  const other = (await p.account.create({ data: { name: "other" } })).id;
  const at = (day: number) => new Date(Date.UTC(2025, 0, day, 12, 30, 15, 250));
  ids.ranks = [];
  for (const [i, name] of ["Private", "Corporal", "sergeant", "Captain"].entries()) {
    ids.ranks.push((await p.rank.create({ data: { accountId, name, order: i % 3, abbreviation: i % 2 ? null : name.slice(0, 3), createdAt: at(i + 1) } })).id);
  }
  ids.users = [];
  const names = ["Alice Able", "bob baker", "Carol Cook", "Dave Dunn", "Eve Early", "alice Again"];
  for (const [i, name] of names.entries()) {
    ids.users.push((await p.user.create({
      data: {
        accountId, name, email: `u${i}@example.com`, rankId: i === 5 ? null : ids.ranks[i % 4], approved: i % 2 === 0,
        notes: i % 3 ? `note ${i}` : null, lastSeenAt: i % 2 ? at(10 + i) : null, createdAt: at(i + 1),
      },
    })).id);
  }
  await p.user.create({ data: { accountId: other, name: "Alice Other", email: "o@example.com" } });
  ids.documents = [];
  for (let i = 0; i < 3; i++) ids.documents.push((await p.document.create({ data: { accountId, name: `Doc ${i}`, content: "c", authorId: i === 2 ? null : ids.users[i] } })).id);
  for (let i = 0; i < 15; i++) {
    await p.rankRecord.create({
      data: {
        accountId, userId: ids.users[i % 5], rankId: i % 4 === 3 ? null : ids.ranks[i % 4], authorId: i % 3 === 0 ? null : ids.users[(i + 1) % 6],
        documentId: i % 2 ? ids.documents[i % 3] : null, type: i % 4, text: i % 5 ? `Record ${i}` : null, createdAt: at(20 - (i % 7)),
      },
    });
  }
  for (const [i, rankId] of ids.ranks.entries()) await p.image.create({ data: { accountId, name: `img ${i}`, path: `ranks/${i}.png`, modelType: "App\\Models\\Rank", modelId: rankId } });
  ids.tags = [];
  for (const name of ["red", "green", "blue"]) ids.tags.push((await p.tag.create({ data: { accountId, name } })).id);
  await p.documentTag.create({ data: { documentId: ids.documents[0], tagId: ids.tags[0] } });
  await p.documentTag.create({ data: { documentId: ids.documents[0], tagId: ids.tags[1] } });
  await p.documentTag.create({ data: { documentId: ids.documents[1], tagId: ids.tags[1] } });
  await p.message.create({ data: { accountId, message: "m1", channels: ["email", "discord"], recipients: { all: true }, repeats: true, sendAt: at(3) } });
  await p.message.create({ data: { accountId, message: "m2", channels: null } });
});

afterAll(async () => {
  await h?.close();
});

/** Runs `args` both ways; returns the two answers and whether the reader ran any SQL for the routed one. */
async function both(model: string, method: string, args: unknown) {
  let read = 0;
  const listener = () => void read++;
  h.db.onReaderStatement.add(listener);
  try {
    const routed = await (h.db.prisma as any)[model][method](args);
    const prisma = await (h.db.prismaOnly as any)[model][method](args);
    return { routed, prisma, translated: read > 0 };
  } finally {
    h.db.onReaderStatement.delete(listener);
  }
}

async function same(model: string, method: string, args: unknown) {
  const { routed, prisma, translated } = await both(model, method, args);
  expect(translated, "the reader answered").toBe(true);
  expect(routed).toEqual(prisma);
  return routed;
}

const insensitive = testProvider === "postgresql" ? { mode: "insensitive" } : {};

describe("the SQL reader answers as Prisma does", () => {
  it("scalar filters, combinators and orders", async () => {
    const userIds = ids.users!;
    const cases: unknown[] = [
      { where: { accountId }, orderBy: { id: "asc" } },
      { where: { accountId, name: { contains: "a", ...insensitive } }, orderBy: [{ name: "asc" }, { id: "desc" }] },
      { where: { accountId, name: { startsWith: "ali", ...insensitive } }, orderBy: { id: "asc" } },
      { where: { accountId, name: { endsWith: "n" } }, orderBy: { id: "asc" } },
      { where: { accountId, name: { equals: "ALICE ABLE", ...insensitive } }, orderBy: { id: "asc" } },
      { where: { accountId, notes: null }, orderBy: { id: "asc" } },
      { where: { accountId, notes: { not: null } }, orderBy: { id: "asc" } },
      { where: { accountId, notes: { not: "note 1" } }, orderBy: { id: "asc" } },
      { where: { accountId, rankId: { in: [ids.ranks![0], ids.ranks![2]] } }, orderBy: { id: "desc" } },
      { where: { accountId, rankId: { notIn: [ids.ranks![0]] } }, orderBy: { id: "asc" } },
      { where: { accountId, id: { in: [] } } },
      { where: { accountId, id: { notIn: [] } }, orderBy: { id: "asc" } },
      { where: { accountId, approved: true }, orderBy: { id: "asc" } },
      { where: { accountId, approved: { not: true } }, orderBy: { id: "asc" } },
      { where: { accountId, createdAt: { gte: new Date(Date.UTC(2025, 0, 3)), lt: new Date(Date.UTC(2025, 0, 6)) } }, orderBy: { createdAt: "desc" } },
      { where: { accountId, lastSeenAt: { gt: "2025-01-12T00:00:00.000Z" } }, orderBy: { id: "asc" } },
      { where: { accountId, OR: [{ id: userIds[0] }, { name: { contains: "Eve" } }] }, orderBy: { id: "asc" } },
      { where: { accountId, AND: [] }, orderBy: { id: "asc" }, take: 2, skip: 1 },
      { where: { accountId, NOT: [{ id: userIds[0] }, { approved: false }] }, orderBy: { id: "asc" } },
      { where: { accountId, NOT: { notes: null } }, orderBy: { id: "asc" } },
      { where: { accountId }, orderBy: [{ lastSeenAt: { sort: "asc", nulls: "last" } }, { id: "asc" }] },
      { where: { accountId }, orderBy: [{ notes: { sort: "desc", nulls: "first" } }, { id: "asc" }] },
      { where: { accountId }, orderBy: [{ rank: { name: "asc" } }, { id: "asc" }] },
      { where: { accountId }, orderBy: { id: "asc" }, skip: 4 },
      { where: { accountId }, select: { id: true, name: true }, orderBy: { id: "asc" }, take: 3 },
    ];
    for (const args of cases) await same("user", "findMany", args);
  });

  it("relation filters", async () => {
    const cases: Array<[string, unknown]> = [
      ["user", { where: { accountId, rank: { is: { name: { startsWith: "C" } } } }, orderBy: { id: "asc" } }],
      ["user", { where: { accountId, rank: { name: "Private" } }, orderBy: { id: "asc" } }],
      ["user", { where: { accountId, rank: null }, orderBy: { id: "asc" } }],
      ["user", { where: { accountId, rank: { is: null } }, orderBy: { id: "asc" } }],
      ["user", { where: { accountId, rankRecords: { some: { type: 2 } } }, orderBy: { id: "asc" } }],
      ["user", { where: { accountId, rankRecords: { none: { rankId: null } } }, orderBy: { id: "asc" } }],
      ["user", { where: { accountId, rankRecords: { every: { type: { lt: 3 } } } }, orderBy: { id: "asc" } }],
      ["document", { where: { accountId, tags: { some: { tag: { OR: [{ id: { in: [ids.tags![0]] } }, { name: { in: ["green"] } }] } } } }, orderBy: { id: "asc" } }],
      ["document", { where: { accountId, tags: { none: {} } }, orderBy: { id: "asc" } }],
    ];
    for (const [model, args] of cases) await same(model, "findMany", args);
  });

  it("nested to-one and to-many relations, with their own filters and orders", async () => {
    await same("rankRecord", "findMany", {
      where: { accountId }, orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      include: { author: true, rank: true, document: { include: { author: { include: { rank: true } } } }, user: { select: { id: true, name: true } } },
    });
    await same("user", "findMany", {
      where: { accountId }, orderBy: { id: "asc" },
      include: { rankRecords: { orderBy: [{ createdAt: "desc" }, { id: "desc" }], include: { rank: true } }, rank: { include: { users: { orderBy: { id: "asc" } } } } },
    });
    await same("user", "findMany", {
      where: { accountId }, orderBy: { id: "asc" },
      select: { id: true, rankRecords: { where: { type: { in: [0, 1] } }, orderBy: { id: "asc" }, select: { id: true, type: true, author: { select: { name: true } } } } },
    });
    await same("rank", "findMany", { where: { accountId }, orderBy: { order: "asc" }, include: { users: { orderBy: { id: "asc" }, include: { rankRecords: { orderBy: { id: "asc" } } } } } });
  });

  it("findFirst, findUnique, count, groupBy, and JSON and boolean columns", async () => {
    await same("user", "findFirst", { where: { accountId, name: { contains: "o" } }, orderBy: { id: "desc" } });
    await same("user", "findFirst", { where: { accountId, id: -1 } });
    await same("user", "findUnique", { where: { id: ids.users![1] }, include: { rank: true } });
    await same("account", "findUnique", { where: { name: "reader" } });
    await same("user", "count", { where: { accountId, approved: false } });
    await same("user", "count", {});
    await same("message", "findMany", { where: { accountId }, orderBy: { id: "asc" } });
    const grouped = await same("rankRecord", "groupBy", { by: ["userId"], where: { accountId, type: { in: [0, 2] } }, _max: { createdAt: true } });
    expect(grouped.length).toBeGreaterThan(0);
  });

  it("leaves what it does not translate to Prisma, with the same answer", async () => {
    const cases: Array<[string, string, unknown]> = [
      ["user", "findMany", { where: { accountId }, cursor: { id: ids.users![2] }, orderBy: { id: "asc" } }],
      ["user", "findMany", { where: { accountId, name: { contains: "a%" } } }],
      ["user", "findMany", { where: { accountId }, include: { rankRecords: { take: 1, orderBy: { id: "asc" } } }, orderBy: { id: "asc" } }],
      ["user", "findMany", { where: { accountId }, select: { id: true, _count: { select: { rankRecords: true } } }, orderBy: { id: "asc" } }],
      ["message", "findMany", { where: { accountId, channels: { equals: ["email", "discord"] } } }],
      ["user", "count", { where: { accountId }, take: 2 }],
      ["user", "findMany", { where: { accountId, OR: [] } }],
      ["user", "findMany", { where: { AND: [{ accountId }, { OR: [] }] } }],
      ["user", "findMany", { where: { accountId, NOT: { AND: [] } } }],
    ];
    for (const [model, method, args] of cases) {
      const { routed, prisma, translated } = await both(model, method, args);
      expect(translated).toBe(false);
      expect(routed).toEqual(prisma);
    }
  });

  it("refuses what Prisma refuses: a wrong value type is Prisma's validation error", async () => {
    const error = await (h.db.prisma as any).user.findMany({ where: { id: "1" } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(String(error)).toMatch(/Invalid|Argument/);
  });

  it("random filters and orders over users (property)", async () => {
    const userIds = ids.users!;
    const leaf = fc.oneof(
      fc.record({ id: fc.oneof(fc.constantFrom(...userIds), fc.record({ in: fc.subarray(userIds) }), fc.record({ gt: fc.constantFrom(...userIds) })) }),
      fc.record({ name: fc.oneof(fc.constantFrom("Alice Able", "bob baker"), fc.record({ contains: fc.constantFrom("a", "li", "B", "e ") }), fc.record({ startsWith: fc.constantFrom("a", "C", "b") })) }),
      fc.record({ notes: fc.oneof(fc.constant(null), fc.record({ not: fc.constant(null) }), fc.record({ not: fc.constantFrom("note 1", "note 2") })) }),
      fc.record({ rankId: fc.oneof(fc.constant(null), fc.constantFrom(...ids.ranks!), fc.record({ notIn: fc.subarray(ids.ranks!) })) }),
      fc.record({ approved: fc.boolean() }),
      fc.record({ lastSeenAt: fc.oneof(fc.constant(null), fc.record({ lte: fc.date({ min: new Date("2025-01-01"), max: new Date("2025-01-31"), noInvalidDate: true }) })) }),
      fc.record({ rank: fc.record({ is: fc.record({ order: fc.integer({ min: 0, max: 2 }) }) }) }),
      fc.record({ rankRecords: fc.record({ some: fc.record({ type: fc.integer({ min: 0, max: 3 }) }) }) }),
    );
    const where = fc.letrec<{ w: Record<string, unknown> }>((tie) => ({
      w: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        leaf,
        fc.record({ AND: fc.array(tie("w"), { maxLength: 3 }) }),
        fc.record({ OR: fc.array(tie("w"), { maxLength: 3 }) }),
        fc.record({ NOT: tie("w") }),
      ),
    })).w;
    // Degenerate combinations (an empty OR, NOT of nothing) go to Prisma; the rest must be the reader's.
    const runs = { all: 0, translated: 0 };
    const order = fc.constantFrom<unknown[]>([{ id: "asc" }], [{ name: "desc" }, { id: "asc" }], [{ lastSeenAt: { sort: "desc", nulls: "last" } }, { id: "desc" }], [{ rank: { order: "asc" } }, { id: "asc" }]);
    await fc.assert(
      fc.asyncProperty(where, order, fc.option(fc.integer({ min: 0, max: 7 })), fc.integer({ min: 0, max: 3 }), async (w, orderBy, take, skip) => {
        const args = { where: { AND: [{ accountId }, w] }, orderBy, take: take ?? undefined, skip, include: { rank: true } };
        const { routed, prisma, translated } = await both("user", "findMany", args);
        if (translated) runs.translated++;
        runs.all++;
        expect(routed).toEqual(prisma);
        const counted = await both("user", "count", { where: args.where });
        expect(counted.routed).toBe(counted.prisma);
      }),
      { numRuns: 150 },
    );
    expect(runs.translated / runs.all).toBeGreaterThan(0.6);
  });

  describe("writes inside a transaction", () => {
    /** Runs `work` in a transaction of the routed client; returns its value and how many statements the SQL path ran. */
    async function inTx(work: (tx: any) => Promise<any>): Promise<{ value: any; direct: number }> {
      let direct = 0;
      const listener = () => void direct++;
      h.db.onReaderStatement.add(listener);
      try {
        return { value: await (h.db.prisma as any).$transaction(work), direct };
      } finally {
        h.db.onReaderStatement.delete(listener);
      }
    }
    const withoutIdsAndTimes = (row: Record<string, unknown>) => {
      const { id: _id, createdAt: _c, updatedAt: _u, ...rest } = row;
      return rest;
    };

    it("create and update answer and store what Prisma's do, defaults and JSON included", async () => {
      const data = { accountId, description: "created", headline: "h", properties: { headline: "h", list: [1, "two", null], nested: { ok: true } } };
      const before = Date.now();
      const { value: created, direct } = await inTx((tx) => tx.newsfeedItem.create({ data }));
      expect(direct).toBeGreaterThan(0);
      const byPrisma = await (h.db.prismaOnly as any).newsfeedItem.create({ data });
      expect(withoutIdsAndTimes(created)).toEqual(withoutIdsAndTimes(byPrisma));
      expect(created.createdAt).toBeInstanceOf(Date);
      expect(created.createdAt.getTime()).toBeGreaterThanOrEqual(before - 1);
      expect(await (h.db.prismaOnly as any).newsfeedItem.findUnique({ where: { id: created.id } })).toEqual(created);

      const user = { accountId, name: "Writer", email: "writer@example.com" };
      const { value: made } = await inTx((tx) => tx.user.create({ data: user }));
      expect(made.approved).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 5));
      const { value: updated } = await inTx((tx) => tx.user.update({ where: { id: made.id }, data: { notes: "n", rankId: ids.ranks![1], lastSeenAt: new Date("2025-03-04T05:06:07.089Z") } }));
      expect(updated.updatedAt.getTime()).toBeGreaterThan(made.updatedAt.getTime());
      expect(await h.db.prismaOnly.user.findUnique({ where: { id: made.id } })).toEqual(updated);
    });

    it("reads in the transaction see its writes; reads outside do not until it commits; a rollback undoes them", async () => {
      let outside: unknown = "unset";
      const error = await (h.db.prisma as any).$transaction(async (tx: any) => {
        const rank = await tx.rank.create({ data: { accountId, name: "Uncommitted" } });
        expect(await tx.rank.findFirst({ where: { id: rank.id } })).toEqual(rank);
        outside = await h.db.prisma.rank.findFirst({ where: { name: "Uncommitted" } });
        throw new Error("roll back");
      }).catch((e: Error) => e);
      expect(String(error)).toMatch(/roll back/);
      expect(outside).toBeNull();
      expect(await h.db.prismaOnly.rank.findFirst({ where: { name: "Uncommitted" } })).toBeNull();
    });

    it("transactions open at once each run on their own connection: each sees only its own writes, a rollback undoes only its own", async () => {
      if (h.db.provider !== "postgresql") return; // SQLite runs one write transaction at a time
      const count = 5;
      const direct: string[] = [];
      const listener = (sql: string) => void direct.push(sql);
      h.db.onReaderStatement.add(listener);
      /** Resolves once all `count` transactions have reached it. */
      const barrier = () => {
        let arrived = 0;
        let all!: () => void;
        const reached = new Promise<void>((resolve) => (all = resolve));
        return () => (++arrived === count && all(), reached);
      };
      const written = barrier();
      const read = barrier();
      // A batch transaction started among them holds a connection of its own that must not be paired with any of them.
      const batch = (h.db.prisma as any).$transaction([h.db.prismaOnly.rank.create({ data: { accountId, name: "Batch beside them" } })]);
      const outcomes = await Promise.all(Array.from({ length: count }, (_, i) =>
        (h.db.prisma as any).$transaction(async (tx: any) => {
          const rank = await tx.rank.create({ data: { accountId, name: `Side by side ${i}` } });
          await written(); // every transaction has written, none has committed
          const seen = await tx.rank.findMany({ where: { name: { startsWith: "Side by side" } }, select: { id: true } });
          await read(); // none commits before all have read
          expect(seen).toEqual([{ id: rank.id }]);
          if (i % 2) throw new Error(`roll back ${i}`);
          return rank.id;
        }).catch((e: Error) => e.message)));
      h.db.onReaderStatement.delete(listener);
      expect((await batch)[0].name).toBe("Batch beside them");
      // The writes and reads went to the transactions' own connections, not back to Prisma.
      expect(direct.filter((sql) => sql.startsWith('INSERT INTO "Rank"'))).toHaveLength(count);
      expect(outcomes.filter((o) => typeof o === "string")).toEqual(["roll back 1", "roll back 3"]);
      const kept = await h.db.prismaOnly.rank.findMany({ where: { name: { startsWith: "Side by side" } }, orderBy: { id: "asc" } });
      expect(kept.map((r: { name: string }) => r.name)).toEqual(["Side by side 0", "Side by side 2", "Side by side 4"]);
    });

    it("reads a transaction starts side by side run on its connection one after another, each with its own answer", async () => {
      const warnings: string[] = [];
      const onWarning = (w: Error) => void warnings.push(w.message);
      process.on("warning", onWarning);
      const ids = (await h.db.prismaOnly.user.findMany({ where: { accountId }, select: { id: true }, take: 6, orderBy: { id: "asc" } })).map((u) => u.id);
      const found = await (h.db.prisma as any).$transaction((tx: any) => Promise.all(ids.map((id) => tx.user.findUnique({ where: { id }, select: { id: true } }))));
      await new Promise((resolve) => setImmediate(resolve));
      process.off("warning", onWarning);
      expect(found.map((u: { id: number }) => u.id)).toEqual(ids);
      // pg 8 queues a statement sent while another runs, with this warning; pg 9 refuses it.
      expect(warnings.filter((m) => m.includes("already executing a query"))).toEqual([]);
    });

    describe("a direct transaction (PostgreSQL: BEGIN and COMMIT without Prisma)", () => {
      const direct = (work: (tx: any) => Promise<unknown>) => (h.db.prisma as any).$transaction(work, { direct: true });
      const named = (name: string) => h.db.prismaOnly.rank.count({ where: { accountId, name } });

      it("runs its statements on a connection of its own and commits them", async () => {
        if (h.db.provider !== "postgresql") return;
        const seen: string[] = [];
        const listener = (sql: string) => void seen.push(sql);
        h.db.onReaderStatement.add(listener);
        const rank = await direct((tx) => tx.rank.create({ data: { accountId, name: "Direct" } })).finally(() => h.db.onReaderStatement.delete(listener));
        expect(seen[0]).toBe("BEGIN");
        expect(seen.at(-1)).toBe("COMMIT");
        expect(seen.filter((sql) => sql.startsWith('INSERT INTO "Rank"'))).toHaveLength(1);
        expect(await h.db.prismaOnly.rank.findUnique({ where: { id: rank.id } })).toMatchObject({ name: "Direct" });
      });

      it("a call only Prisma answers rolls it back and runs it again under Prisma: written once", async () => {
        let runs = 0;
        const value = await direct(async (tx) => {
          runs++;
          await tx.rank.create({ data: { accountId, name: "Once under Prisma" } });
          return (await tx.$queryRawUnsafe("SELECT 7 AS seven"))[0].seven;
        });
        expect(value).toBe(7);
        expect(runs).toBe(h.db.provider === "postgresql" ? 2 : 1);
        expect(await named("Once under Prisma")).toBe(1);
      });

      it("an error rolls it back, a refused write keeps Prisma's code, and the connections stay usable", async () => {
        const failed = await direct(async (tx) => {
          await tx.rank.create({ data: { accountId, name: "Rolled back" } });
          throw new Error("changed my mind");
        }).catch((e: Error) => e.message);
        expect(failed).toBe("changed my mind");
        const refused = await direct((tx) => tx.user.create({ data: { accountId, name: "Dup", email: "u0@example.com" } })).catch((e: any) => e);
        expect(refused.code).toBe("P2002");
        expect([await named("Rolled back"), await h.db.prismaOnly.user.count({ where: { name: "Dup" } })]).toEqual([0, 0]);
        // One that runs no statement sends none: BEGIN goes out with the first statement.
        expect(await direct(async () => "nothing to write")).toBe("nothing to write");
        // More direct transactions than the pool has connections: none was left checked out or in a transaction.
        const ranks = await Promise.all(Array.from({ length: 25 }, (_, i) => direct((tx) => tx.rank.create({ data: { accountId, name: `After ${i}` } }))));
        expect(ranks).toHaveLength(25);
      });
    });

    it("a write the database refuses, or that finds no row, gets Prisma's own error and changes nothing", async () => {
      // On PostgreSQL a failed statement aborts the transaction: the writer's savepoint keeps it usable for Prisma's retry.
      const duplicate = await (h.db.prisma as any).$transaction((tx: any) => tx.user.create({ data: { accountId, name: "Dup", email: "u0@example.com" } })).catch((e: any) => e);
      expect(duplicate.code).toBe("P2002");
      const missing = await (h.db.prisma as any).$transaction((tx: any) => tx.user.update({ where: { id: 987654 }, data: { name: "Nobody" } })).catch((e: any) => e);
      expect(missing.code).toBe("P2025");
      const noRank = await (h.db.prisma as any).$transaction((tx: any) => tx.user.create({ data: { accountId, name: "Orphan", email: "orphan@example.com", rankId: 999999 } }))
        .catch((e: any) => e);
      expect(noRank.code).toBe("P2003");
      expect(await h.db.prismaOnly.user.count({ where: { name: { in: ["Orphan", "Dup", "Nobody"] } } })).toBe(0);
    });
  });
});
