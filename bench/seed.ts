import { createClient, type InValue } from "@libsql/client";

/** How much the bench seeds; `quick` is a smaller organisation for smoke runs. */
export interface SeedSize {
  ranks: number;
  users: number;
  /** Rank records per user: every user has exactly this many (W2 reads 100 users × 20). */
  recordsPerUser: number;
  documents: number;
  comments: number;
}

export const fullSize: SeedSize = { ranks: 50, users: 10_000, recordsPerUser: 20, documents: 100, comments: 50_000 };
export const quickSize: SeedSize = { ranks: 50, users: 1_000, recordsPerUser: 20, documents: 100, comments: 5_000 };

export interface Seeded {
  accountId: number;
  userIds: number[];
  rankIds: number[];
  documentIds: number[];
  rankRecords: number;
  comments: number;
  ms: number;
}

/** mulberry32: a small deterministic PRNG, so every run seeds the same rows and asks for the same ids. */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(list: readonly T[]) => list[Math.floor(next() * list.length)],
  };
}

const first = [
  "Ann",
  "Bob",
  "Cara",
  "Dan",
  "Eve",
  "Finn",
  "Gail",
  "Hugo",
  "Ivy",
  "Jon",
  "Kai",
  "Lena",
  "Max",
  "Nora",
  "Otto",
  "Pia",
];
const last = [
  "Smith",
  "Jones",
  "Brown",
  "Miller",
  "Davis",
  "Garcia",
  "Wilson",
  "Moore",
  "Taylor",
  "Clark",
  "Lewis",
  "Walker",
];
const words = [
  "promoted",
  "for",
  "outstanding",
  "service",
  "during",
  "operation",
  "training",
  "exercise",
  "leadership",
  "conduct",
  "merit",
  "review",
];

const base = Date.UTC(2025, 0, 1);
const at = (minutes: number) => new Date(base + minutes * 60_000);

/** Where the seeder writes: bulk inserts and the ids they got, in insertion order. */
export interface Sink {
  insert(model: Model, rows: Array<Record<string, unknown>>): Promise<void>;
  ids(model: Model, accountId: number): Promise<number[]>;
  close(): Promise<void>;
}

type Model = "Rank" | "Image" | "User" | "Document" | "RankRecord" | "Comment";

/** SQLite: multi-row INSERTs with @libsql/client inside one transaction per table, stored the way Prisma stores them. */
export function sqliteSink(url: string): Sink {
  const client = createClient({ url });
  const value = (v: unknown) =>
    v instanceof Date ? v.toISOString().replace("Z", "+00:00") : typeof v === "boolean" ? (v ? 1 : 0) : (v ?? null);
  return {
    async insert(model, rows) {
      if (!rows.length) return;
      const columns = Object.keys(rows[0]);
      const perStatement = Math.floor(30_000 / columns.length);
      const tx = await client.transaction("write");
      try {
        for (let i = 0; i < rows.length; i += perStatement) {
          const chunk = rows.slice(i, i + perStatement);
          const tuple = `(${columns.map(() => "?").join(",")})`;
          await tx.execute({
            sql: `INSERT INTO "${model}" (${columns.map((c) => `"${c}"`).join(",")}) VALUES ${chunk.map(() => tuple).join(",")}`,
            args: chunk.flatMap((row) => columns.map((c) => value(row[c])) as InValue[]),
          });
        }
        await tx.commit();
      } finally {
        tx.close();
      }
    },
    async ids(model, accountId) {
      const result = await client.execute({
        sql: `SELECT id FROM "${model}" WHERE "accountId" = ? ORDER BY id`,
        args: [accountId],
      });
      return result.rows.map((r) => Number(r.id));
    },
    close: async () => client.close(),
  };
}

/** PostgreSQL: multi-row INSERTs with `pg` in one transaction per table (timestamps as UTC, as Prisma keeps them). */
export async function postgresSink(url: string): Promise<Sink> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const value = (v: unknown) => (v instanceof Date ? v.toISOString() : (v ?? null));
  return {
    async insert(model, rows) {
      if (!rows.length) return;
      const columns = Object.keys(rows[0]);
      const perStatement = Math.floor(30_000 / columns.length);
      await client.query("BEGIN");
      try {
        for (let i = 0; i < rows.length; i += perStatement) {
          const chunk = rows.slice(i, i + perStatement);
          const tuples = chunk.map((_, r) => `(${columns.map((__, c) => `$${r * columns.length + c + 1}`).join(",")})`);
          await client.query(
            `INSERT INTO "${model}" (${columns.map((c) => `"${c}"`).join(",")}) VALUES ${tuples.join(",")}`,
            chunk.flatMap((row) => columns.map((c) => value(row[c]))),
          );
        }
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      }
    },
    async ids(model, accountId) {
      const result = await client.query(`SELECT id FROM "${model}" WHERE "accountId" = $1 ORDER BY id`, [accountId]);
      return result.rows.map((r: { id: number }) => Number(r.id));
    },
    close: () => client.end(),
  };
}

/**
 * Seeds one organisation into `accountId` straight into the tables (no API calls, no hooks): ranks with an image row each (the files need not exist),
 * users, documents, `recordsPerUser` rank records for every user, comments on rank records.
 * Deterministic: the same size gives the same rows.
 */
export async function seed(sink: Sink, accountId: number, size: SeedSize): Promise<Seeded> {
  const started = performance.now();
  const rnd = prng(20261122);

  await sink.insert(
    "Rank",
    Array.from({ length: size.ranks }, (_, i) => ({
      accountId,
      name: `Rank ${String(i + 1).padStart(2, "0")}`,
      abbreviation: `R${i + 1}`,
      paygrade: `E-${(i % 9) + 1}`,
      description: `Rank number ${i + 1}`,
      order: i + 1,
      createdAt: at(i),
      updatedAt: at(i),
    })),
  );
  const rankIds = await sink.ids("Rank", accountId);
  await sink.insert(
    "Image",
    rankIds.map((id, i) => ({
      accountId,
      name: `Insignia ${i + 1}`,
      description: null,
      filename: `rank-${i + 1}.png`,
      path: `images/rank-${i + 1}.png`,
      modelType: "App\\Models\\Rank",
      modelId: id,
      createdAt: at(i),
      updatedAt: at(i),
    })),
  );

  const users = Array.from({ length: size.users }, (_, i) => ({
    accountId,
    name: `${rnd.pick(first)} ${rnd.pick(last)} ${i + 1}`,
    email: `user${i + 1}@bench.test`,
    rankId: rnd.pick(rankIds),
    approved: true,
    createdAt: at(1000 + i),
    updatedAt: at(1000 + i),
  }));
  await sink.insert("User", users);
  const userIds = await sink.ids("User", accountId);

  await sink.insert(
    "Document",
    Array.from({ length: size.documents }, (_, i) => ({
      accountId,
      name: `Order ${i + 1}`,
      description: `Personnel order ${i + 1}`,
      content: `<p>Order ${i + 1}: ${words.join(" ")}</p>`,
      authorId: rnd.pick(userIds),
      createdAt: at(20_000 + i),
      updatedAt: at(20_000 + i),
    })),
  );
  const documentIds = await sink.ids("Document", accountId);

  // Records are written in time order, interleaving users, so `createdAt desc, id desc` is a real sort.
  const records: Array<Record<string, unknown>> = [];
  for (let r = 0; r < size.recordsPerUser; r++) {
    for (let u = 0; u < userIds.length; u++) {
      const minute = 30_000 + r * userIds.length + u;
      records.push({
        accountId,
        userId: userIds[u],
        rankId: rnd.pick(rankIds),
        documentId: rnd.next() < 0.7 ? rnd.pick(documentIds) : null,
        authorId: rnd.pick(userIds),
        type: rnd.int(4),
        text: `${rnd.pick(words)} ${rnd.pick(words)} ${rnd.pick(words)}`,
        createdAt: at(minute),
        updatedAt: at(minute),
      });
    }
  }
  await sink.insert("RankRecord", records);
  const recordIds = await sink.ids("RankRecord", accountId);

  const comments = Array.from({ length: size.comments }, (_, i) => ({
    accountId,
    authorId: rnd.pick(userIds),
    modelType: "App\\Models\\RankRecord",
    modelId: rnd.pick(recordIds),
    comment: `${rnd.pick(words)} ${rnd.pick(words)} ${rnd.pick(words)} ${rnd.pick(words)}`,
    createdAt: at(300_000 + i),
    updatedAt: at(300_000 + i),
  }));
  await sink.insert("Comment", comments);

  return {
    accountId,
    userIds,
    rankIds,
    documentIds,
    rankRecords: records.length,
    comments: comments.length,
    ms: performance.now() - started,
  };
}
