import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { startHarness, testProvider, type Harness } from "./harness.ts";
import { RowCapExceeded, rowBudget } from "../src/db/row-budget.ts";
import { mayRunTwice } from "../src/db/transaction.ts";
import type { StoreTransaction } from "../src/db/transaction.ts";

/**
 * The SQL reader (src/db/reader.ts) answers reads outside transactions in Prisma's place. Each case runs the same
 * arguments through the routed client and through Prisma alone, on the same data, and requires equal answers, and
 * that the reader (not a fallback to Prisma) gave the routed one, or, for arguments it leaves to Prisma, that it did not.
 */
let h: Harness;
/** A model named at run time: arguments as loose as the reader takes them. */
const USER: string = "User";

/** A Prisma delegate called by a model and method name, or with arguments its types do not take (`mode` on SQLite). */
type LooseDelegate = Record<string, (args: unknown) => Promise<unknown>>;
/** The store's methods called by name, as the case tables give them. */
type LooseStore = Record<string, (model: string, args: unknown) => Promise<unknown>>;
const loosePrisma = () => h.db.prisma as unknown as Record<string, LooseDelegate>;
const looseStore = () => h.db.store as unknown as LooseStore;
let accountId: number;
/** An account whose users' names and notes hold LIKE's wildcards and escape (`%`, `_`, `\`) in both cases. */
let patterns: number;
const ids: Record<string, number[]> = {};
const patternNames = [
  "50% off",
  "50x off",
  "5_0",
  "a\\b",
  "A\\B",
  "a%b",
  "AXB",
  "x_y%z",
  "back\\%slash",
  "Plain",
  "plain text",
  "%lead",
  "trail_",
];

beforeAll(async () => {
  h = await startHarness();
  const p = h.db.prisma;
  accountId = (await p.account.create({ data: { name: "reader" } })).id;
  const other = (await p.account.create({ data: { name: "other" } })).id;
  const at = (day: number) => new Date(Date.UTC(2025, 0, day, 12, 30, 15, 250));
  ids.ranks = [];
  for (const [i, name] of ["Private", "Corporal", "sergeant", "Captain"].entries()) {
    ids.ranks.push(
      (
        await p.rank.create({
          data: { accountId, name, order: i % 3, abbreviation: i % 2 ? null : name.slice(0, 3), createdAt: at(i + 1) },
        })
      ).id,
    );
  }
  ids.users = [];
  const names = ["Alice Able", "bob baker", "Carol Cook", "Dave Dunn", "Eve Early", "alice Again"];
  for (const [i, name] of names.entries()) {
    ids.users.push(
      (
        await p.user.create({
          data: {
            accountId,
            name,
            email: `u${i}@example.com`,
            rankId: i === 5 ? null : ids.ranks[i % 4],
            approved: i % 2 === 0,
            notes: i % 3 ? `note ${i}` : null,
            lastSeenAt: i % 2 ? at(10 + i) : null,
            createdAt: at(i + 1),
          },
        })
      ).id,
    );
  }
  await p.user.create({ data: { accountId: other, name: "Alice Other", email: "o@example.com" } });
  ids.documents = [];
  for (let i = 0; i < 3; i++)
    ids.documents.push(
      (
        await p.document.create({
          data: { accountId, name: `Doc ${i}`, content: "c", authorId: i === 2 ? null : ids.users[i] },
        })
      ).id,
    );
  for (let i = 0; i < 15; i++) {
    await p.rankRecord.create({
      data: {
        accountId,
        userId: ids.users[i % 5],
        rankId: i % 4 === 3 ? null : ids.ranks[i % 4],
        authorId: i % 3 === 0 ? null : ids.users[(i + 1) % 6],
        documentId: i % 2 ? ids.documents[i % 3] : null,
        type: i % 4,
        text: i % 5 ? `Record ${i}` : null,
        createdAt: at(20 - (i % 7)),
      },
    });
  }
  for (const [i, rankId] of ids.ranks.entries())
    await p.image.create({
      data: { accountId, name: `img ${i}`, path: `ranks/${i}.png`, modelType: "App\\Models\\Rank", modelId: rankId },
    });
  ids.tags = [];
  for (const name of ["red", "green", "blue"]) ids.tags.push((await p.tag.create({ data: { accountId, name } })).id);
  await p.documentTag.create({ data: { documentId: ids.documents[0], tagId: ids.tags[0] } });
  await p.documentTag.create({ data: { documentId: ids.documents[0], tagId: ids.tags[1] } });
  await p.documentTag.create({ data: { documentId: ids.documents[1], tagId: ids.tags[1] } });
  await p.message.create({
    data: {
      accountId,
      message: "m1",
      channels: ["email", "discord"],
      recipients: { all: true },
      repeats: true,
      sendAt: at(3),
    },
  });
  // A JSON column set to null as the reader sees it written (Prisma's input types ask for DbNull).
  await loosePrisma().message.create({ data: { accountId, message: "m2", channels: null } });
  patterns = (await p.account.create({ data: { name: "patterns" } })).id;
  for (const [i, name] of patternNames.entries()) {
    await p.user.create({
      data: {
        accountId: patterns,
        name,
        email: `p${i}@example.com`,
        notes: i % 3 === 0 ? null : patternNames[(i * 5) % patternNames.length].toUpperCase(),
      },
    });
  }
});

afterAll(async () => {
  await h?.close();
});

/**
 * Runs `args` both ways; returns the two answers, whether the reader ran any SQL for the routed one, the reader's
 * statements, and how many statements the routed call ran in all (the reader's and Prisma's).
 */
async function both<T = Array<Record<string, unknown>>>(model: string, method: string, args: unknown) {
  const statements: string[] = [];
  const listener = (sql: string) => void statements.push(sql);
  h.db.onReaderStatement.add(listener);
  try {
    const before = h.db.statements.count;
    const routed = (await (h.db.store as unknown as LooseStore)[method](
      model.charAt(0).toUpperCase() + model.slice(1),
      args,
    )) as T;
    const all = h.db.statements.count - before;
    const prisma = (await loosePrisma()[model][method](args)) as T;
    return { routed, prisma, translated: statements.length > 0, statements, all };
  } finally {
    h.db.onReaderStatement.delete(listener);
  }
}

async function same<T = Array<Record<string, unknown>>>(model: string, method: string, args: unknown) {
  const { routed, prisma, translated } = await both<T>(model, method, args);
  expect(translated, "the reader answered").toBe(true);
  expect(routed).toEqual(prisma);
  return routed;
}

const insensitive = testProvider === "postgresql" ? { mode: "insensitive" } : {};

describe("the SQL reader answers as Prisma does", () => {
  it("scalar filters, combinators and orders", async () => {
    const userIds = ids.users;
    const cases: unknown[] = [
      { where: { accountId }, orderBy: { id: "asc" } },
      { where: { accountId, name: { contains: "a", ...insensitive } }, orderBy: [{ name: "asc" }, { id: "desc" }] },
      { where: { accountId, name: { startsWith: "ali", ...insensitive } }, orderBy: { id: "asc" } },
      { where: { accountId, name: { endsWith: "n" } }, orderBy: { id: "asc" } },
      { where: { accountId, name: { equals: "ALICE ABLE", ...insensitive } }, orderBy: { id: "asc" } },
      { where: { accountId, notes: null }, orderBy: { id: "asc" } },
      { where: { accountId, notes: { not: null } }, orderBy: { id: "asc" } },
      { where: { accountId, notes: { not: "note 1" } }, orderBy: { id: "asc" } },
      { where: { accountId, rankId: { in: [ids.ranks[0], ids.ranks[2]] } }, orderBy: { id: "desc" } },
      { where: { accountId, rankId: { notIn: [ids.ranks[0]] } }, orderBy: { id: "asc" } },
      { where: { accountId, id: { in: [] } } },
      { where: { accountId, id: { notIn: [] } }, orderBy: { id: "asc" } },
      { where: { accountId, approved: true }, orderBy: { id: "asc" } },
      { where: { accountId, approved: { not: true } }, orderBy: { id: "asc" } },
      {
        where: { accountId, createdAt: { gte: new Date(Date.UTC(2025, 0, 3)), lt: new Date(Date.UTC(2025, 0, 6)) } },
        orderBy: { createdAt: "desc" },
      },
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

  it("rows of a frozen select (a REST document's plan, reused by every request) equal Prisma's, each column type, read twice", async () => {
    const frozen = <T>(value: T): T => {
      if (value && typeof value === "object") {
        for (const v of Object.values(value)) frozen(v);
        Object.freeze(value);
      }
      return value;
    };
    const userSelect = frozen({
      id: true,
      name: true,
      approved: true,
      lastSeenAt: true,
      notes: true,
      rankId: true,
      createdAt: true,
      rank: { select: { id: true, name: true, order: true } },
    });
    const messageSelect = frozen({
      id: true,
      channels: true,
      recipients: true,
      repeats: true,
      sendAt: true,
      createdAt: true,
    });
    const recordSelect = frozen({
      id: true,
      type: true,
      text: true,
      createdAt: true,
      author: { select: { id: true, name: true, lastSeenAt: true, approved: true } },
      document: { select: { id: true, name: true } },
    });
    for (let round = 0; round < 2; round++) {
      await same("user", "findMany", { where: { accountId }, select: userSelect, orderBy: { id: "asc" } });
      await same("message", "findMany", { where: { accountId }, select: messageSelect, orderBy: { id: "asc" } });
      await same("rankRecord", "findMany", { where: { accountId }, select: recordSelect, orderBy: { id: "asc" } });
    }
    // One frozen select used for two models reads each model's own columns.
    const idAndName = frozen({ id: true, name: true });
    await same("user", "findMany", { where: { accountId }, select: idAndName, orderBy: { id: "asc" } });
    await same("rank", "findMany", { where: { accountId }, select: idAndName, orderBy: { id: "asc" } });
  });

  it("a page with its total in one statement: filters with parameters before and after the count's, includes, orders by a relation, past the end", async () => {
    const cases: Array<Record<string, unknown>> = [
      { where: { accountId }, orderBy: [{ id: "asc" }], skip: 1, take: 2 },
      {
        where: { accountId, name: { contains: "a", ...insensitive }, rankId: { in: [ids.ranks[0], ids.ranks[1]] } },
        orderBy: [{ name: "asc" }, { id: "asc" }],
        skip: 0,
        take: 2,
      },
      {
        where: {
          accountId,
          OR: [{ approved: true }, { notes: { contains: "note" } }],
          rank: { is: { name: { startsWith: "C" } } },
        },
        orderBy: [{ id: "desc" }],
        skip: 0,
        take: 10,
      },
      {
        where: { accountId, lastSeenAt: { gt: "2025-01-12T00:00:00.000Z" } },
        include: { rank: true },
        orderBy: [{ id: "asc" }],
        skip: 1,
        take: 1,
      },
      {
        where: { accountId },
        include: { rank: { select: { id: true, name: true } } },
        orderBy: [{ rank: { name: "asc" } }, { id: "asc" }],
        skip: 2,
        take: 3,
      },
      { where: { accountId, approved: true }, orderBy: [{ id: "asc" }], skip: 0, take: 0 },
      { where: { accountId, name: "nobody" }, orderBy: [{ id: "asc" }], skip: 0, take: 5 },
      { where: { accountId }, orderBy: [{ id: "asc" }], skip: 100, take: 5 },
    ];
    for (const args of cases) {
      const statements: string[] = [];
      const listener = (sql: string) => void statements.push(sql);
      h.db.onReaderStatement.add(listener);
      const page = await h.db.store.findPage(USER, args).finally(() => h.db.onReaderStatement.delete(listener));
      const p = loosePrisma();
      expect(page.rows, JSON.stringify(args)).toEqual(await p.user.findMany(args));
      expect(page.total, JSON.stringify(args)).toBe(await p.user.count({ where: args.where }));
      // The count goes apart only when no row came back to carry it and rows were skipped or none asked for.
      expect(statements.length, statements.join("\n")).toBe(
        page.rows.length === 0 && ((args.skip as number) > 0 || args.take === 0) ? 2 : 1,
      );
    }
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
      [
        "document",
        {
          where: {
            accountId,
            tags: { some: { tag: { OR: [{ id: { in: [ids.tags[0]] } }, { name: { in: ["green"] } }] } } },
          },
          orderBy: { id: "asc" },
        },
      ],
      ["document", { where: { accountId, tags: { none: {} } }, orderBy: { id: "asc" } }],
    ];
    for (const [model, args] of cases) await same(model, "findMany", args);
  });

  it("nested to-one and to-many relations, with their own filters and orders", async () => {
    await same("rankRecord", "findMany", {
      where: { accountId },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      include: {
        author: true,
        rank: true,
        document: { include: { author: { include: { rank: true } } } },
        user: { select: { id: true, name: true } },
      },
    });
    await same("user", "findMany", {
      where: { accountId },
      orderBy: { id: "asc" },
      include: {
        rankRecords: { orderBy: [{ createdAt: "desc" }, { id: "desc" }], include: { rank: true } },
        rank: { include: { users: { orderBy: { id: "asc" } } } },
      },
    });
    await same("user", "findMany", {
      where: { accountId },
      orderBy: { id: "asc" },
      select: {
        id: true,
        rankRecords: {
          where: { type: { in: [0, 1] } },
          orderBy: { id: "asc" },
          select: { id: true, type: true, author: { select: { name: true } } },
        },
      },
    });
    await same("rank", "findMany", {
      where: { accountId },
      orderBy: { order: "asc" },
      include: { users: { orderBy: { id: "asc" }, include: { rankRecords: { orderBy: { id: "asc" } } } } },
    });
  });

  describe("nested take and skip: each parent's page, for all parents in one statement per level", () => {
    /** Runs `args` both ways, requires equal answers from the reader, and returns the reader's statements. */
    async function paged(model: string, args: unknown) {
      const { routed, prisma, translated, statements, all } = await both(model, "findMany", args);
      expect(translated, "the reader answered").toBe(true);
      expect(routed).toEqual(prisma);
      expect(all, "no statement of Prisma's").toBe(statements.length);
      return { routed, statements };
    }
    const byRecordOrders: unknown[] = [
      [{ createdAt: "desc" }, { id: "desc" }],
      { id: "asc" },
      [{ rank: { name: "desc" } }, { id: "asc" }],
      [{ rank: { order: "asc" } }, { type: "desc" }, { id: "desc" }],
      [{ text: { sort: "asc", nulls: "first" } }, { id: "asc" }],
    ];

    it("own and to-one relation orders, where, skip, take 0, skip past the end, parents without children", async () => {
      for (const orderBy of byRecordOrders) {
        for (const [take, skip] of [
          [2, undefined],
          [1, 1],
          [2, 2],
          [0, undefined],
          [undefined, 1],
          [3, 10],
          [undefined, undefined],
        ] as const) {
          const { statements, routed } = await paged("user", {
            where: { accountId },
            orderBy: { id: "asc" },
            include: {
              rankRecords: { orderBy, take, skip, include: { rank: true, author: { select: { name: true } } } },
            },
          });
          // The users, then (unless no rows can come) all their rank records in one statement, pages cut by row number.
          expect(statements).toHaveLength(take === 0 ? 1 : 2);
          if (take !== 0)
            expect(statements[1]).toContain(
              take === undefined && !skip ? 'FROM "RankRecord"' : "ROW_NUMBER() OVER (PARTITION BY",
            );
          expect(routed.at(-1)!.rankRecords).toEqual([]); // alice Again has none
        }
      }
      // With the children's own where, and selected columns that leave the join column out.
      await paged("user", {
        where: { accountId },
        orderBy: { id: "desc" },
        select: {
          id: true,
          rankRecords: {
            where: { type: { in: [0, 1, 3] }, rank: { isNot: null } },
            orderBy: [{ rank: { name: "asc" } }, { id: "desc" }],
            take: 1,
            skip: 1,
            select: { id: true, type: true },
          },
        },
      });
      await paged("document", {
        where: { accountId },
        orderBy: { id: "asc" },
        include: { tags: { take: 1, orderBy: [{ tag: { name: "asc" } }, { id: "asc" }], include: { tag: true } } },
      });
    });

    it("two levels deep, each with its own page: one statement per level", async () => {
      const { statements } = await paged("rank", {
        where: { accountId },
        orderBy: { id: "asc" },
        include: {
          users: {
            take: 2,
            skip: 0,
            orderBy: [{ name: "desc" }, { id: "asc" }],
            include: {
              rankRecords: {
                take: 2,
                skip: 1,
                orderBy: [{ createdAt: "asc" }, { id: "asc" }],
                select: { id: true, createdAt: true, rank: { select: { name: true } } },
              },
            },
          },
        },
      });
      expect(statements).toHaveLength(3);
      expect(statements.slice(1).every((sql) => sql.includes("ROW_NUMBER()"))).toBe(true);
      // A page under a to-one relation's own to-many relation.
      const { statements: under } = await paged("rankRecord", {
        where: { accountId },
        orderBy: { id: "asc" },
        include: {
          user: { include: { authoredRankRecords: { take: 1, orderBy: [{ createdAt: "desc" }, { id: "desc" }] } } },
        },
      });
      expect(under).toHaveLength(2);
    });

    it("the row budget counts the rows read: each parent's page, not every child", async () => {
      const args = {
        where: { accountId },
        orderBy: { id: "asc" },
        include: { rankRecords: { take: 1, orderBy: { id: "asc" } } },
      };
      // 6 users and one rank record for each of the 5 that have any (Prisma would read all 15).
      const answer = await h.db.store.withBudget(rowBudget(11)).findMany(USER, args);
      expect(answer.map((u) => (u.rankRecords as unknown[]).length)).toEqual([1, 1, 1, 1, 1, 0]);
      await expect(h.db.store.withBudget(rowBudget(10)).findMany(USER, args)).rejects.toBeInstanceOf(RowCapExceeded);
    });

    it("the store's fallback: arguments the reader does not translate are Prisma's, with no statement of the reader's, and its rows are counted", async () => {
      // `distinct` is not in the reader's subset: Prisma answers, and the rows it read count against the budget.
      const args = {
        where: { accountId },
        orderBy: { id: "asc" as const },
        distinct: ["approved" as const],
        include: { rankRecords: true },
      };
      const seen: string[] = [];
      const listener = (sql: string) => void seen.push(sql);
      h.db.onReaderStatement.add(listener);
      const answer = await h.db.store
        .withBudget(rowBudget(1000))
        .findMany("User", args)
        .finally(() => h.db.onReaderStatement.delete(listener));
      expect(seen).toEqual([]);
      expect(answer).toEqual(await h.db.prisma.user.findMany(args));
      const rows = answer.length + answer.reduce((n, u) => n + (u.rankRecords as unknown[]).length, 0);
      await expect(h.db.store.withBudget(rowBudget(rows)).findMany("User", args)).resolves.toHaveLength(answer.length);
      await expect(h.db.store.withBudget(rowBudget(rows - 1)).findMany("User", args)).rejects.toBeInstanceOf(
        RowCapExceeded,
      );
    });

    it("random pages, orders and filters of the children (property)", async () => {
      const where = fc.oneof(
        fc.constant(undefined),
        fc.record({ type: fc.record({ in: fc.subarray([0, 1, 2, 3]) }) }),
        fc.record({ rankId: fc.constant(null) }),
        fc.record({ rank: fc.record({ isNot: fc.record({ abbreviation: fc.constantFrom("Pri", null) }) }) }),
        fc.record({ text: fc.record({ contains: fc.constantFrom("1", "Record") }) }),
      );
      const count = fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined });
      await fc.assert(
        fc.asyncProperty(
          where,
          fc.constantFrom(...byRecordOrders),
          count,
          count,
          fc.boolean(),
          async (w, orderBy, take, skip, byAuthor) => {
            const relation = byAuthor ? "authoredRankRecords" : "rankRecords";
            const { statements } = await paged("user", {
              where: { accountId },
              orderBy: { id: "asc" },
              select: {
                id: true,
                name: true,
                [relation]: { where: w, orderBy, take, skip, select: { id: true, rank: true } },
              },
            });
            expect(statements).toHaveLength(take === 0 ? 1 : 2);
          },
        ),
        { numRuns: 80 },
      );
    });
  });

  it("groupBy with _count: per group, as Prisma shapes it", async () => {
    // Prisma's groupBy has no order of its own: both answers are sorted by their groups.
    let by: string[] = [];
    const group = (row: Record<string, unknown>) => by.map((k) => String(row[k]).padStart(12)).join();
    const sorted = (rows: Array<Record<string, unknown>>) => [...rows].sort((a, b) => group(a).localeCompare(group(b)));
    const cases: Array<{ by: string[]; [arg: string]: unknown }> = [
      { by: ["userId"], where: { accountId }, _count: { _all: true } },
      { by: ["userId"], where: { accountId, userId: { in: ids.users } }, _count: true },
      {
        by: ["userId", "type"],
        where: { accountId, type: { gte: 1 } },
        _count: { _all: true, text: true, rankId: false },
        _max: { createdAt: true },
      },
      { by: ["authorId"], where: { accountId }, _count: { authorId: true }, _min: { id: true } },
      { by: ["userId"], where: { accountId: -1 }, _count: { _all: true } },
    ];
    for (const args of cases) {
      by = args.by;
      const { routed, prisma, translated } = await both("rankRecord", "groupBy", args);
      expect(translated).toBe(true);
      expect(sorted(routed)).toEqual(sorted(prisma));
    }
    by = cases[0].by;
    const { routed } = await both("rankRecord", "groupBy", cases[0]);
    expect(sorted(routed)[0]).toEqual({ userId: ids.users[0], _count: { _all: 3 } });
  });

  it("to-one is and isNot, null included, and NOT over them with nullable columns", async () => {
    const cases: Array<[string, unknown]> = [
      ["user", { rank: { isNot: null } }],
      ["user", { rank: { is: null } }],
      ["user", { rank: { isNot: { name: "Private" } } }],
      ["user", { rank: { isNot: { abbreviation: "Pri" } } }],
      ["user", { rank: { isNot: { abbreviation: null } } }],
      ["user", { rank: { isNot: {} } }],
      ["user", { rank: {} }],
      ["user", { rank: { is: { order: { lte: 1 } }, isNot: { abbreviation: "Pri" } } }],
      ["user", { NOT: { rank: { is: { abbreviation: "Pri" } } } }],
      ["user", { NOT: { rank: { abbreviation: { startsWith: "s" } } } }],
      ["user", { NOT: { rank: { isNot: { abbreviation: "Pri" } } } }],
      ["user", { NOT: [{ rank: { isNot: { abbreviation: null } } }, { approved: false }] }],
      ["user", { OR: [{ rank: { isNot: { abbreviation: "ser" } } }, { notes: null }] }],
      ["user", { rankRecords: { every: { rank: { is: { abbreviation: "Pri" } } } } }],
      ["user", { rankRecords: { every: { rank: { isNot: { abbreviation: "Pri" } } } } }],
      ["user", { rankRecords: { some: { rank: { isNot: { name: "Private" } } } } }],
      ["rankRecord", { author: { isNot: { rank: { is: { abbreviation: null } } } } }],
      ["rankRecord", { NOT: { author: { is: { NOT: { rank: { abbreviation: "Pri" } } } } } }],
      ["rankRecord", { document: { isNot: { author: { isNot: null } } } }],
    ];
    for (const [model, where] of cases)
      await same(model, "findMany", { where: { AND: [{ accountId }, where] }, orderBy: { id: "asc" } });
  });

  describe("LIKE's wildcards and escape in a value, and mode: insensitive", () => {
    const userPatterns = (where: Record<string, unknown>) => ({
      where: { accountId: patterns, ...where },
      orderBy: { id: "asc" },
      select: { id: true, name: true },
    });

    it("contains, startsWith, endsWith, equals and not with %, _ and \\ answer as Prisma's (wildcards included)", async () => {
      const values = ["%", "_", "\\", "0%", "0_", "\\%", "a\\b", "%l", "X_Y", "5_0", "50% off", "PLAIN"];
      for (const value of values) {
        for (const op of ["contains", "startsWith", "endsWith", "equals", "not"]) {
          for (const mode of testProvider === "postgresql" ? [undefined, "insensitive"] : [undefined]) {
            const args = userPatterns({ name: { [op]: value, mode } });
            const pattern =
              op === "contains"
                ? `%${value}%`
                : op === "startsWith"
                  ? `${value}%`
                  : op === "endsWith"
                    ? `%${value}`
                    : value;
            const like = mode !== undefined || (op !== "equals" && op !== "not");
            if (like && (testProvider === "postgresql" || mode) && /(^|[^\\])(\\\\)*\\$/.test(pattern)) {
              // PostgreSQL refuses a pattern that ends in its escape: Prisma's error, from Prisma.
              const routed = await h.db.store.findMany(USER, args).catch((e: Error) => e);
              expect(String(routed)).toMatch(/escape/i);
              continue;
            }
            await same("user", "findMany", args);
          }
        }
      }
      // The wildcards match as wildcards, as in Prisma (prisma/prisma#19506): `%` alone matches every name.
      expect((await same("user", "findMany", userPatterns({ name: { contains: "%" } }))).length).toBe(
        patternNames.length,
      );
    });

    /** The rows `filter` on `column` selects, by the documented meaning of insensitive mode (ASCII values). */
    function expected(
      column: "name" | "notes",
      filter: Record<string, unknown>,
      rows: Array<{ id: number; name: string; notes: string | null }>,
    ): number[] {
      const lower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
      const likeRe = (pattern: string) => {
        let re = "";
        for (let i = 0; i < pattern.length; i++) {
          const c = pattern[i];
          if (c === "\\") re += (pattern[++i] ?? "").replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
          else re += c === "%" ? ".*" : c === "_" ? "." : c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        }
        return new RegExp(`^${re}$`, "s");
      };
      const like = (v: string, pattern: string) => likeRe(lower(pattern)).test(lower(v));
      const [op, arg] = Object.entries(filter).find(([k]) => k !== "mode")!;
      // A string, or for in and notIn a list of them.
      const value = arg as string;
      const list = arg as string[];
      const test = (v: string | null): boolean => {
        if (v === null) return op === "notIn" && list.length === 0;
        switch (op) {
          case "equals":
            return like(v, value);
          case "not":
            return !like(v, value);
          case "contains":
            return like(v, `%${value}%`);
          case "startsWith":
            return like(v, `${value}%`);
          case "endsWith":
            return like(v, `%${value}`);
          case "in":
            return list.map(lower).includes(lower(v));
          case "notIn":
            return !list.map(lower).includes(lower(v));
          case "lt":
            return lower(v) < lower(value);
          case "lte":
            return lower(v) <= lower(value);
          case "gt":
            return lower(v) > lower(value);
          default:
            return lower(v) >= lower(value);
        }
      };
      return rows.filter((r) => test(r[column])).map((r) => r.id);
    }

    it("insensitive mode: Prisma's meaning on PostgreSQL, and the same on SQLite (where only the reader answers it) (property)", async () => {
      const rows = await h.db.prisma.user.findMany({
        where: { accountId: patterns },
        orderBy: { id: "asc" },
        select: { id: true, name: true, notes: true },
      });
      const value = fc.constantFrom(
        "%",
        "_",
        "\\%",
        "\\_",
        "a\\\\b",
        "A%B",
        "50%",
        "5_0",
        "x_Y",
        "PLAIN",
        "plain text",
        "Back",
        "%LEAD",
        "TRAIL_",
        "off",
        "a",
        "",
      );
      const op = fc.constantFrom(
        "equals",
        "not",
        "contains",
        "startsWith",
        "endsWith",
        "lt",
        "lte",
        "gt",
        "gte",
        "in",
        "notIn",
      );
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom<"name" | "notes">("name", "notes"),
          op,
          value,
          fc.subarray(["%", "5_0", "PLAIN", "a\\b", "Axb", "aXb"]),
          async (column, op, value, values) => {
            const arg = op === "in" || op === "notIn" ? values : value;
            const pattern =
              op === "contains"
                ? `%${value}%`
                : op === "startsWith"
                  ? `${value}%`
                  : op === "endsWith"
                    ? `%${value}`
                    : value;
            fc.pre(
              !["equals", "not", "contains", "startsWith", "endsWith"].includes(op) ||
                !/(^|[^\\])(\\\\)*\\$/.test(pattern),
            );
            const filter = { [op]: arg, mode: "insensitive" };
            const args = {
              where: { accountId: patterns, [column]: filter },
              orderBy: { id: "asc" },
              select: { id: true },
            };
            const statements: string[] = [];
            const listener = (sql: string) => void statements.push(sql);
            h.db.onReaderStatement.add(listener);
            const routed = await h.db.store.findMany(USER, args).finally(() => h.db.onReaderStatement.delete(listener));
            expect(statements).toHaveLength(1);
            const ids = routed.map((r) => r.id);
            if (testProvider === "postgresql") expect(routed).toEqual(await loosePrisma().user.findMany(args));
            // PostgreSQL orders strings by its collation; the other operators mean the same on both databases.
            if (testProvider === "sqlite" || !["lt", "lte", "gt", "gte"].includes(op))
              expect(ids).toEqual(expected(column, filter, rows));
          },
        ),
        { numRuns: 300 },
      );
    });

    it("insensitive mode on SQLite, where Prisma refuses it: the reader answers; a pattern ending in an escape is Prisma's refusal", async () => {
      const names = async (where: Record<string, unknown>) =>
        (await h.db.store.findMany(USER, userPatterns(where))).map((u) => u.name);
      expect(await names({ name: { equals: "plain", mode: "insensitive" } })).toEqual(["Plain"]);
      expect(await names({ name: { startsWith: "PLAIN", mode: "insensitive" } })).toEqual(["Plain", "plain text"]);
      expect(await names({ name: { contains: "\\%", mode: "insensitive" } })).toEqual([
        "50% off",
        "a%b",
        "x_y%z",
        "back\\%slash",
        "%lead",
      ]);
      expect(await names({ name: { equals: "A\\\\B", mode: "insensitive" } })).toEqual(["a\\b", "A\\B"]);
      expect(await names({ name: { in: ["PLAIN", "axb"], mode: "insensitive" } })).toEqual(["AXB", "Plain"]);
      expect(await names({ NOT: { name: { contains: "_", mode: "insensitive" } } })).toEqual([]);
      const refused = await h.db.store
        .findMany(USER, userPatterns({ name: { endsWith: "\\", mode: "insensitive" } }))
        .catch((e: Error) => e);
      expect(refused).toBeInstanceOf(Error);
      if (testProvider === "sqlite") {
        expect(
          String(
            await loosePrisma()
              .user.findMany(userPatterns({ name: { equals: "plain", mode: "insensitive" } }))
              .catch((e: Error) => e),
          ),
        ).toMatch(/Unknown argument `mode`/);
      }
    });
  });

  it("findFirst, findUnique, count, groupBy, and JSON and boolean columns", async () => {
    await same("user", "findFirst", { where: { accountId, name: { contains: "o" } }, orderBy: { id: "desc" } });
    await same("user", "findFirst", { where: { accountId, id: -1 } });
    await same("user", "findUnique", { where: { id: ids.users[1] }, include: { rank: true } });
    await same("account", "findUnique", { where: { name: "reader" } });
    await same("user", "count", { where: { accountId, approved: false } });
    await same("user", "count", {});
    await same("message", "findMany", { where: { accountId }, orderBy: { id: "asc" } });
    const grouped = await same("rankRecord", "groupBy", {
      by: ["userId"],
      where: { accountId, type: { in: [0, 2] } },
      _max: { createdAt: true },
    });
    expect(grouped.length).toBeGreaterThan(0);
  });

  it("leaves what it does not translate to Prisma, with the same answer", async () => {
    const cases: Array<[string, string, unknown]> = [
      ["user", "findMany", { where: { accountId }, cursor: { id: ids.users[2] }, orderBy: { id: "asc" } }],
      // A negative nested take is Prisma's last rows; a nested cursor or distinct, Prisma's too.
      [
        "user",
        "findMany",
        {
          where: { accountId },
          include: { rankRecords: { take: -1, orderBy: { id: "asc" } } },
          orderBy: { id: "asc" },
        },
      ],
      [
        "user",
        "findMany",
        { where: { accountId }, include: { rankRecords: { cursor: { id: 1 }, take: 2 } }, orderBy: { id: "asc" } },
      ],
      // Found while planning, before any statement runs, however deep: the whole read is Prisma's.
      [
        "rank",
        "findMany",
        {
          where: { accountId },
          include: { users: { take: 1, include: { rankRecords: { where: { OR: [] } } } } },
          orderBy: { id: "asc" },
        },
      ],
      [
        "rankRecord",
        "groupBy",
        { by: ["userId"], where: { accountId }, _count: { _all: true }, orderBy: { userId: "asc" } },
      ],
      [
        "user",
        "findMany",
        {
          where: { accountId },
          select: { id: true, _count: { select: { rankRecords: true } } },
          orderBy: { id: "asc" },
        },
      ],
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
    const error = await h.db.store.findMany(USER, { where: { id: "1" } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(String(error)).toMatch(/Invalid|Argument/);
  });

  it("random filters and orders over users (property)", async () => {
    const userIds = ids.users;
    const leaf = fc.oneof(
      fc.record({
        id: fc.oneof(
          fc.constantFrom(...userIds),
          fc.record({ in: fc.subarray(userIds) }),
          fc.record({ gt: fc.constantFrom(...userIds) }),
        ),
      }),
      fc.record({
        name: fc.oneof(
          fc.constantFrom("Alice Able", "bob baker"),
          fc.record({ contains: fc.constantFrom("a", "li", "B", "e ") }),
          fc.record({ startsWith: fc.constantFrom("a", "C", "b") }),
        ),
      }),
      fc.record({
        notes: fc.oneof(
          fc.constant(null),
          fc.record({ not: fc.constant(null) }),
          fc.record({ not: fc.constantFrom("note 1", "note 2") }),
        ),
      }),
      fc.record({
        rankId: fc.oneof(
          fc.constant(null),
          fc.constantFrom(...ids.ranks),
          fc.record({ notIn: fc.subarray(ids.ranks) }),
        ),
      }),
      fc.record({ approved: fc.boolean() }),
      fc.record({
        lastSeenAt: fc.oneof(
          fc.constant(null),
          fc.record({
            lte: fc.date({ min: new Date("2025-01-01"), max: new Date("2025-01-31"), noInvalidDate: true }),
          }),
        ),
      }),
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
    const order = fc.constantFrom<unknown[]>(
      [{ id: "asc" }],
      [{ name: "desc" }, { id: "asc" }],
      [{ lastSeenAt: { sort: "desc", nulls: "last" } }, { id: "desc" }],
      [{ rank: { order: "asc" } }, { id: "asc" }],
    );
    await fc.assert(
      fc.asyncProperty(
        where,
        order,
        fc.option(fc.integer({ min: 0, max: 7 })),
        fc.integer({ min: 0, max: 3 }),
        async (w, orderBy, take, skip) => {
          const args = {
            where: { AND: [{ accountId }, w] },
            orderBy,
            take: take ?? undefined,
            skip,
            include: { rank: true },
          };
          const { routed, prisma, translated } = await both("user", "findMany", args);
          if (translated) runs.translated++;
          runs.all++;
          expect(routed).toEqual(prisma);
          const counted = await both("user", "count", { where: args.where });
          expect(counted.routed).toBe(counted.prisma);
        },
      ),
      { numRuns: 150 },
    );
    expect(runs.translated / runs.all).toBeGreaterThan(0.6);
  });

  describe("a JSON list column that holds a value (Prisma's array_contains, a person's messages)", () => {
    /** An account of its own whose messages' recipients are lists of ids, and what else a JSON column may hold. */
    let lists: number;
    let users: number[];
    let stored: Array<{ id: number; recipients: unknown }>;
    /** What `array_contains` of one value means: the column is a JSON list with that element, of that JSON type. */
    const holdsValue = (column: unknown, value: unknown) => Array.isArray(column) && column.some((e) => e === value);
    const pool = () => [users[0], users[1], users[2], String(users[0]), 1, 999999, "Alice", "alice", "x"];

    beforeAll(async () => {
      const p = h.db.prisma;
      lists = (await p.account.create({ data: { name: "lists" } })).id;
      users = ids.users;
      const recipients: unknown[] = [
        [users[0], users[1]],
        [users[1]],
        [],
        [String(users[0])],
        [[users[0]]],
        users[0],
        { id: users[0] },
        [true],
        ["Alice", "x"],
        [users[2], "x", null, { id: users[2] }],
      ];
      for (const [i, r] of recipients.entries())
        await p.message.create({ data: { accountId: lists, message: `l${i}`, recipients: r as number[] } });
      await p.message.create({ data: { accountId: lists, message: "no recipients" } });
      stored = (await p.message.findMany({
        where: { accountId: lists },
        select: { id: true, recipients: true },
        orderBy: { id: "asc" },
      })) as Array<{ id: number; recipients: unknown }>;
    });

    type Tree = { has: unknown; wrap: boolean } | { ids: number[] } | { AND: Tree[] } | { OR: Tree[] };
    const whereOf = (t: Tree): Record<string, unknown> =>
      "has" in t
        ? { recipients: { array_contains: t.wrap ? [t.has] : t.has } }
        : "ids" in t
          ? { id: { in: t.ids } }
          : "AND" in t
            ? { AND: t.AND.map(whereOf) }
            : { OR: t.OR.map(whereOf) };
    const matches = (t: Tree, row: { id: number; recipients: unknown }): boolean =>
      "has" in t
        ? holdsValue(row.recipients, t.has)
        : "ids" in t
          ? t.ids.includes(row.id)
          : "AND" in t
            ? t.AND.every((c) => matches(c, row))
            : t.OR.some((c) => matches(c, row));

    /**
     * The reader's answer, which must be Prisma's on PostgreSQL; on SQLite, where Prisma's connector refuses
     * `array_contains`, the rows the filter's meaning picks (the same meaning, checked against Prisma's on PostgreSQL).
     */
    async function check(tree: Tree) {
      const args = {
        where: { AND: [{ accountId: lists }, whereOf(tree)] },
        select: { id: true },
        orderBy: { id: "asc" },
      };
      const expected = stored.filter((row) => matches(tree, row)).map((row) => ({ id: row.id }));
      const { routed, translated } = await both("message", "findMany", args).catch(async (error: unknown) => {
        if (testProvider === "postgresql") throw error;
        // Prisma refused after the routed call answered: run the routed call alone.
        const statements: string[] = [];
        const listener = (sql: string) => void statements.push(sql);
        h.db.onReaderStatement.add(listener);
        try {
          const routed = (await looseStore().findMany("Message", args)) as Array<{ id: number }>;
          return { routed, prisma: undefined, translated: statements.length > 0 };
        } finally {
          h.db.onReaderStatement.delete(listener);
        }
      });
      expect(translated, "the reader answered").toBe(true);
      expect(routed, JSON.stringify(args)).toEqual(expected);
      if (testProvider === "postgresql")
        expect(await loosePrisma().message.findMany(args), "Prisma's meaning").toEqual(expected);
      const counted = await h.db.store.count("Message", { where: args.where });
      expect(counted).toBe(expected.length);
    }

    it("one value, alone or as a list of one: only lists holding it, of its JSON type, in this account", async () => {
      for (const value of pool()) {
        await check({ has: value, wrap: true });
        await check({ has: value, wrap: false });
      }
      // The fixture holds rows each value picks and rows it must not (a string "id", a nested list, a bare id).
      expect(stored.filter((row) => holdsValue(row.recipients, users[0])).length).toBeGreaterThan(0);
      const all = (await looseStore().findMany("Message", {
        where: { recipients: { array_contains: [users[1]] } },
        select: { accountId: true },
      })) as Array<{ accountId: number }>;
      expect(all.map((m) => m.accountId)).toEqual([lists, lists]);
    });

    it("Prisma on SQLite has no array_contains: the reader is the only path there", async () => {
      const args = { where: { accountId: lists, recipients: { array_contains: [users[0]] } } };
      const byPrisma = await loosePrisma()
        .message.findMany(args)
        .then(
          () => "answered",
          (e: Error) => e.message,
        );
      if (testProvider === "sqlite") expect(byPrisma).toMatch(/Unknown argument `array_contains`/);
      else expect(byPrisma).toBe("answered");
    });

    it("random combinations with other filters (property)", async () => {
      const leaf = fc.oneof(
        fc.record({ has: fc.constantFrom(...pool()), wrap: fc.boolean() }),
        // Never an empty `in`: a constant condition under OR is Prisma's (which refuses array_contains on SQLite).
        fc.record({
          ids: fc.subarray(
            stored.map((row) => row.id),
            { minLength: 1 },
          ),
        }),
      );
      const tree = fc.letrec<{ t: Tree }>((tie) => ({
        t: fc.oneof(
          { depthSize: "small", withCrossShrink: true },
          leaf,
          fc.record({ AND: fc.array(tie("t"), { minLength: 1, maxLength: 3 }) }),
          fc.record({ OR: fc.array(tie("t"), { minLength: 1, maxLength: 3 }) }),
        ),
      })).t;
      await fc.assert(fc.asyncProperty(tree, check), { numRuns: 80 });
    });

    it("leaves every other JSON filter to Prisma: more values, none, not a string or integer, other operators, under NOT", async () => {
      const filters: Array<Record<string, unknown>> = [
        { recipients: { array_contains: [users[0], users[1]] } },
        { recipients: { array_contains: [] } },
        { recipients: { array_contains: true } },
        { recipients: { array_contains: [{ id: users[0] }] } },
        { recipients: { array_contains: 1.5 } },
        { recipients: { array_contains: [users[0]], array_starts_with: [users[0]] } },
        { recipients: { equals: [users[1]] } },
        { NOT: { recipients: { array_contains: [users[0]] } } },
      ];
      for (const filter of filters) {
        const args = { where: { accountId: lists, ...filter }, select: { id: true }, orderBy: { id: "asc" } };
        const statements: string[] = [];
        const listener = (sql: string) => void statements.push(sql);
        h.db.onReaderStatement.add(listener);
        const routed = await looseStore()
          .findMany("Message", args)
          .catch((e: Error) => e.message)
          .finally(() => h.db.onReaderStatement.delete(listener));
        expect(statements, JSON.stringify(filter)).toEqual([]);
        const prisma = await loosePrisma()
          .message.findMany(args)
          .catch((e: Error) => e.message);
        // Prisma's own refusal, the same either way (its message quotes the call, which differs).
        const reason = (answer: unknown) => (typeof answer === "string" ? answer.trim().split("\n").at(-1) : answer);
        expect(reason(routed)).toEqual(reason(prisma));
      }
    });
  });

  describe("writes inside a transaction", () => {
    /** Runs `work` in a transaction of the routed client; returns its value and how many statements the SQL path ran. */
    async function inTx<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<{ value: T; direct: number }> {
      let direct = 0;
      const listener = () => void direct++;
      h.db.onReaderStatement.add(listener);
      try {
        return { value: await h.db.store.transaction(work), direct };
      } finally {
        h.db.onReaderStatement.delete(listener);
      }
    }
    const withoutIdsAndTimes = (row: Record<string, unknown>) => {
      const { id: _id, createdAt: _c, updatedAt: _u, ...rest } = row;
      return rest;
    };

    it("create and update answer and store what Prisma's do, defaults and JSON included", async () => {
      const data = {
        accountId,
        description: "created",
        headline: "h",
        properties: { headline: "h", list: [1, "two", null], nested: { ok: true } },
      };
      const before = Date.now();
      const { value: created, direct } = await inTx((tx) => tx.create("NewsfeedItem", { data }));
      expect(direct).toBeGreaterThan(0);
      const byPrisma = (await loosePrisma().newsfeedItem.create({ data })) as Record<string, unknown>;
      expect(withoutIdsAndTimes(created)).toEqual(withoutIdsAndTimes(byPrisma));
      expect(created.createdAt).toBeInstanceOf(Date);
      expect((created.createdAt as Date).getTime()).toBeGreaterThanOrEqual(before - 1);
      expect(await loosePrisma().newsfeedItem.findUnique({ where: { id: created.id } })).toEqual(created);

      const user = { accountId, name: "Writer", email: "writer@example.com" };
      const { value: made } = await inTx((tx) => tx.create("User", { data: user }));
      expect(made.approved).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 5));
      const { value: updated } = await inTx((tx) =>
        tx.update("User", {
          where: { id: made.id },
          data: { notes: "n", rankId: ids.ranks[1], lastSeenAt: new Date("2025-03-04T05:06:07.089Z") },
        }),
      );
      expect((updated.updatedAt as Date).getTime()).toBeGreaterThan((made.updatedAt as Date).getTime());
      expect(await h.db.prisma.user.findUnique({ where: { id: made.id } })).toEqual(updated);
    });

    it("reads in the transaction see its writes; reads outside do not until it commits; a rollback undoes them", async () => {
      let outside: unknown = "unset";
      const error = await h.db.store
        .transaction(async (tx) => {
          const rank = await tx.create("Rank", { data: { accountId, name: "Uncommitted" } });
          expect(await tx.findFirst("Rank", { where: { id: rank.id } })).toEqual(rank);
          outside = await h.db.store.findFirst("Rank", { where: { name: "Uncommitted" } });
          throw new Error("roll back");
        })
        .catch((e: Error) => e);
      expect(String(error)).toMatch(/roll back/);
      expect(outside).toBeNull();
      expect(await h.db.prisma.rank.findFirst({ where: { name: "Uncommitted" } })).toBeNull();
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
      const batch = h.db.store.batch([h.db.prisma.rank.create({ data: { accountId, name: "Batch beside them" } })]);
      const outcomes = await Promise.all(
        Array.from({ length: count }, (_, i) =>
          h.db.store
            .transaction(async (tx) => {
              const rank = await tx.create("Rank", { data: { accountId, name: `Side by side ${i}` } });
              await written(); // every transaction has written, none has committed
              const seen = await tx.findMany("Rank", {
                where: { name: { startsWith: "Side by side" } },
                select: { id: true },
              });
              await read(); // none commits before all have read
              expect(seen).toEqual([{ id: rank.id }]);
              if (i % 2) throw new Error(`roll back ${i}`);
              return rank.id;
            })
            .catch((e: Error) => e.message),
        ),
      );
      h.db.onReaderStatement.delete(listener);
      expect(((await batch)[0] as { name: string }).name).toBe("Batch beside them");
      // The writes and reads went to the transactions' own connections, not back to Prisma.
      expect(direct.filter((sql) => sql.startsWith('INSERT INTO "Rank"'))).toHaveLength(count);
      expect(outcomes.filter((o) => typeof o === "string")).toEqual(["roll back 1", "roll back 3"]);
      const kept = await h.db.prisma.rank.findMany({
        where: { name: { startsWith: "Side by side" } },
        orderBy: { id: "asc" },
      });
      expect(kept.map((r: { name: string }) => r.name)).toEqual(["Side by side 0", "Side by side 2", "Side by side 4"]);
    });

    it("reads a transaction starts side by side run on its connection one after another, each with its own answer", async () => {
      const warnings: string[] = [];
      const onWarning = (w: Error) => void warnings.push(w.message);
      process.on("warning", onWarning);
      const ids = (
        await h.db.prisma.user.findMany({ where: { accountId }, select: { id: true }, take: 6, orderBy: { id: "asc" } })
      ).map((u) => u.id);
      const found = await h.db.store.transaction((tx) =>
        Promise.all(ids.map((id) => tx.findUnique("User", { where: { id }, select: { id: true } }))),
      );
      await new Promise((resolve) => setImmediate(resolve));
      process.off("warning", onWarning);
      expect(found.map((u) => u!.id)).toEqual(ids);
      // pg 8 queues a statement sent while another runs, with this warning; pg 9 refuses it.
      expect(warnings.filter((m) => m.includes("already executing a query"))).toEqual([]);
    });

    describe("a direct transaction (BEGIN and COMMIT without Prisma)", () => {
      const direct = <T>(work: (tx: StoreTransaction) => Promise<T>) =>
        h.db.store.transaction(mayRunTwice(work), { direct: true });
      const named = (name: string) => h.db.prisma.rank.count({ where: { accountId, name } });

      it("runs its statements on a connection of its own (SQLite: the adapter's, held) and commits them", async () => {
        const seen: string[] = [];
        const listener = (sql: string) => void seen.push(sql);
        h.db.onReaderStatement.add(listener);
        const rank = await direct((tx) => tx.create("Rank", { data: { accountId, name: "Direct" } })).finally(() =>
          h.db.onReaderStatement.delete(listener),
        );
        expect(seen[0]).toBe("BEGIN");
        expect(seen.at(-1)).toBe("COMMIT");
        expect(seen.filter((sql) => sql.startsWith('INSERT INTO "Rank"'))).toHaveLength(1);
        expect(await h.db.prisma.rank.findUnique({ where: { id: rank.id } })).toMatchObject({ name: "Direct" });
      });

      it("a call only Prisma answers rolls it back and runs it again under Prisma: written once", async () => {
        let runs = 0;
        const value = await direct(async (tx) => {
          runs++;
          await tx.create("Rank", { data: { accountId, name: "Once under Prisma" } });
          return (await tx.prisma.$queryRawUnsafe<Array<{ seven: number }>>("SELECT 7 AS seven"))[0].seven;
        });
        expect(value).toBe(7);
        expect(runs).toBe(2);
        expect(await named("Once under Prisma")).toBe(1);
      });

      it("Prisma's statements and transactions started meanwhile wait for it, and never run inside it", async () => {
        const touched = await h.db.prisma.rank.create({ data: { accountId, name: "Touched meanwhile" } });
        let entered!: () => void;
        const inside = new Promise<void>((resolve) => (entered = resolve));
        const rolledBack = direct(async (tx) => {
          await tx.create("Rank", { data: { accountId, name: "Direct, rolled back" } });
          entered();
          await new Promise((resolve) => setTimeout(resolve, 50));
          throw new Error("rolled back");
        }).catch((e: Error) => e.message);
        await inside;
        const [plain, inPrisma, raw] = await Promise.all([
          h.db.prisma.rank.create({ data: { accountId, name: "Prisma, meanwhile" } }),
          h.db.store.transaction((tx) =>
            tx.prisma.rank.create({ data: { accountId, name: "Prisma transaction, meanwhile" } }),
          ),
          // A statement of its own (no transaction of Prisma's around it).
          h.db.prisma.$executeRawUnsafe(
            `UPDATE "Rank" SET "description" = 'raw, meanwhile' WHERE "id" = ${touched.id}`,
          ),
        ]);
        expect(await rolledBack).toBe("rolled back");
        expect(raw).toBe(1);
        expect((await h.db.prisma.rank.findUnique({ where: { id: touched.id } }))?.description).toBe("raw, meanwhile");
        expect([plain.name, inPrisma.name]).toEqual(["Prisma, meanwhile", "Prisma transaction, meanwhile"]);
        expect([
          await named("Direct, rolled back"),
          await named("Prisma, meanwhile"),
          await named("Prisma transaction, meanwhile"),
        ]).toEqual([0, 1, 1]);
      });

      it("an error rolls it back, a refused write keeps Prisma's code, and the connections stay usable", async () => {
        const failed = await direct(async (tx) => {
          await tx.create("Rank", { data: { accountId, name: "Rolled back" } });
          throw new Error("changed my mind");
        }).catch((e: Error) => e.message);
        expect(failed).toBe("changed my mind");
        const refused = await direct((tx) =>
          tx.create("User", { data: { accountId, name: "Dup", email: "u0@example.com" } }),
        ).catch((e: { code: string }) => e);
        expect(refused.code).toBe("P2002");
        expect([await named("Rolled back"), await h.db.prisma.user.count({ where: { name: "Dup" } })]).toEqual([0, 0]);
        // One that runs no statement sends none: BEGIN goes out with the first statement.
        expect(await direct(async () => "nothing to write")).toBe("nothing to write");
        // More direct transactions than the pool has connections: none was left checked out or in a transaction.
        const ranks = await Promise.all(
          Array.from({ length: 25 }, (_, i) =>
            direct((tx) => tx.create("Rank", { data: { accountId, name: `After ${i}` } })),
          ),
        );
        expect(ranks).toHaveLength(25);
      });
    });

    it("a write the database refuses, or that finds no row, gets Prisma's own error and changes nothing", async () => {
      // On PostgreSQL a failed statement aborts the transaction: the writer's savepoint keeps it usable for Prisma's retry.
      const duplicate = await h.db.store
        .transaction((tx) => tx.create("User", { data: { accountId, name: "Dup", email: "u0@example.com" } }))
        .catch((e: { code: string }) => e);
      expect(duplicate.code).toBe("P2002");
      const missing = await h.db.store
        .transaction((tx) => tx.update("User", { where: { id: 987654 }, data: { name: "Nobody" } }))
        .catch((e: { code: string }) => e);
      expect(missing.code).toBe("P2025");
      const noRank = await h.db.store
        .transaction((tx) =>
          tx.create("User", { data: { accountId, name: "Orphan", email: "orphan@example.com", rankId: 999999 } }),
        )
        .catch((e: { code: string }) => e);
      expect(noRank.code).toBe("P2003");
      expect(await h.db.prisma.user.count({ where: { name: { in: ["Orphan", "Dup", "Nobody"] } } })).toBe(0);
    });
  });
});
