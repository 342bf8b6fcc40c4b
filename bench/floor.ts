/**
 * The floor: a minimal hand-written `node:http` server over the same database as the service, answering the
 * bench's REST workloads (W1, W3, W4) with the same JSON as the service — same envelope, snake_case keys,
 * computed user fields and embedded includes — from direct SQL with batched `IN (...)` lookups. It
 * authenticates the key (one joined lookup) and checks scopes, as any real server must, and skips everything
 * else the service does (maintenance flag, rate limits, GraphQL).
 *
 * DATABASE_URL picks the database: `file:` is SQLite through @libsql/client, `postgresql://` is PostgreSQL
 * through a `pg` Pool (named prepared statements, `?` placeholders rewritten to `$n`). The SQL is the same
 * for both but for the id of the row just inserted.
 *
 * Each response carries `x-statements`: the SQL statements it ran.
 *
 *   PORT=8090 DATABASE_URL=file:bench.db node --import tsx bench/floor.ts
 *   PORT=8090 DATABASE_URL=postgresql://127.0.0.1/bench node --import tsx bench/floor.ts
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createClient } from "@libsql/client";
import pg from "pg";

type Json = Record<string, unknown>;
type Row = Record<string, unknown>;
type Args = unknown[];

const url = process.env.DATABASE_URL ?? "file:bench.db";
const port = Number(process.env.PORT ?? 8090);
const maxPageSize = 100;
const defaultPageSize = 15;

/** The database: rows as objects keyed by column name, and one write transaction of several statements. */
interface Db {
  all(sql: string, args: Args): Promise<Row[]>;
  /** Runs `statements` in one write transaction; the rows of the first. */
  write(statements: Array<{ sql: string; args: Args }>): Promise<Row[]>;
  /** SQL for the id of the `RankRecord` row this connection just inserted. */
  lastRankRecordId: string;
  /** Statements a write of `n` statements sends (PostgreSQL's BEGIN and COMMIT are statements of their own). */
  writeStatements(n: number): number;
  close(): Promise<void>;
}

async function sqlite(): Promise<Db> {
  const client = createClient({ url });
  await client.execute("PRAGMA journal_mode = WAL");
  await client.execute("PRAGMA busy_timeout = 10000");
  return {
    all: async (sql, args) => (await client.execute({ sql, args: args as never })).rows as unknown as Row[],
    write: async (statements) => (await client.batch(statements as never, "write"))[0]!.rows as unknown as Row[],
    lastRankRecordId: "last_insert_rowid()",
    writeStatements: (n) => n,
    close: async () => client.close(),
  };
}

function postgres(): Db {
  // Prisma stores DateTime as `timestamp(3)` in UTC; pg would parse it as local time. Kept as an ISO string.
  const types = {
    getTypeParser: (oid: number, format?: "text" | "binary") =>
      oid === 1114 ? (value: string) => `${value.replace(" ", "T")}Z` : pg.types.getTypeParser(oid, format as "text"),
  };
  const pool = new pg.Pool({ connectionString: url, types });
  // `?` → `$1, $2, …` in order, `?N` → `$N`; each distinct text becomes a named (server-side prepared) statement.
  const queries = new Map<string, { text: string; name?: string }>();
  const query = (sql: string) => {
    let q = queries.get(sql);
    if (!q) {
      let n = 0;
      const text = sql.replace(/\?(\d*)/g, (_, i: string) => `$${i || ++n}`);
      if (queries.size >= 1000) return { text };
      queries.set(sql, (q = { text, name: `floor_${queries.size}` }));
    }
    return q;
  };
  const run = async (client: pg.Pool | pg.PoolClient, sql: string, args: Args) =>
    (await client.query({ ...query(sql), values: args })).rows as Row[];
  return {
    all: (sql, args) => run(pool, sql, args),
    write: async (statements) => {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const [first, ...rest] = statements;
        const rows = await run(client, first!.sql, first!.args);
        for (const s of rest) await run(client, s.sql, s.args);
        await client.query("COMMIT");
        return rows;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    lastRankRecordId: `currval('"RankRecord_id_seq"')`,
    writeStatements: (n) => n + 2,
    close: () => pool.end(),
  };
}

const db = /^postgres(ql)?:\/\//i.test(url) ? postgres() : await sqlite();

let statements = 0;
const all = (sql: string, args: Args = []) => {
  statements++;
  return db.all(sql, args);
};
const marks = (n: number) => Array(n).fill("?").join(",");
const unique = (values: unknown[]) => [...new Set(values.filter((v) => v != null))] as number[];

const date = (v: unknown) => (v == null ? null : new Date(String(v)).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z"));
const bool = (v: unknown) => v === 1 || v === 1n || v === true;

class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

const shapes = {
  user: (r: Row, origin: string, latest: { rank: Map<number, unknown>; assignment: Map<number, unknown> }): Json => ({
    id: r.id, label: `User: ${r.id}`, name: r.name, email: r.email, email_verified_at: date(r.emailVerifiedAt),
    position_id: r.positionId, rank_id: r.rankId, specialty_id: r.specialtyId, status_id: r.statusId, unit_id: r.unitId,
    approved: bool(r.approved), notes: r.notes, notes_updated_at: date(r.notesUpdatedAt), profile_photo: r.profilePhoto,
    cover_photo: r.coverPhoto, last_seen_at: date(r.lastSeenAt), discord_user_id: r.discordUserId, facebook_user_id: r.facebookUserId,
    github_user_id: r.githubUserId, google_user_id: r.googleUserId, display_name: r.name, online: false,
    profile_photo_url: fileUrl(origin, r.profilePhoto) ?? avatarUrl(String(r.name ?? "")), cover_photo_url: fileUrl(origin, r.coverPhoto),
    last_assignment_change_date: date(latest.assignment.get(Number(r.id))), last_rank_change_date: date(latest.rank.get(Number(r.id))),
    created_at: date(r.createdAt), updated_at: date(r.updatedAt),
  }),
  rank: (r: Row): Json => ({
    id: r.id, label: `Rank: ${r.id}`, name: r.name, description: r.description, abbreviation: r.abbreviation, paygrade: r.paygrade,
    order: r.order, created_at: date(r.createdAt), updated_at: date(r.updatedAt),
  }),
  image: (r: Row, origin: string): Json => ({
    id: r.id, label: `Image: ${r.id}`, name: r.name, description: r.description, filename: r.filename, path: r.path,
    model_type: r.modelType, model_id: r.modelId, image_url: fileUrl(origin, r.path), created_at: date(r.createdAt), updated_at: date(r.updatedAt),
  }),
  document: (r: Row): Json => ({
    id: r.id, label: `Document: ${r.id}`, name: r.name, description: r.description, content: r.content, author_id: r.authorId,
    created_at: date(r.createdAt), updated_at: date(r.updatedAt),
  }),
  rankRecord: (r: Row): Json => ({
    id: r.id, label: `Rank Record: ${r.id}`, user_id: r.userId, document_id: r.documentId, author_id: r.authorId, text: r.text,
    rank_id: r.rankId, type: r.type, created_at: date(r.createdAt), updated_at: date(r.updatedAt),
  }),
  comment: (r: Row): Json => ({
    id: r.id, label: `Comment: ${r.id}`, author_id: r.authorId, model_type: r.modelType, model_id: r.modelId, comment: r.comment,
    created_at: date(r.createdAt), updated_at: date(r.updatedAt),
  }),
};

const fileUrl = (origin: string, path: unknown) => (path ? `${origin}/files/${String(path).split("/").map(encodeURIComponent).join("/")}` : null);
const avatarUrl = (name: string) => {
  const initials = name.split(" ").filter(Boolean).map((part) => [...part][0]).join(" ");
  return `https://ui-avatars.com/api/?name=${encodeURIComponent(initials).replace(/%20/g, "+")}&color=2563eb&background=eff6ff`;
};

/** Users by id, with their computed dates: three statements for any number of users. */
async function users(ids: number[], accountId: number, origin: string): Promise<Map<number, Json>> {
  if (!ids.length) return new Map();
  const rows = await all(`SELECT * FROM "User" WHERE "accountId" = ? AND id IN (${marks(ids.length)})`, [accountId, ...ids]);
  const found = rows.map((r) => Number(r.id));
  const maxOf = async (sql: string, args: Args) => new Map((await all(sql, args)).map((r) => [Number(r.userId), r.at]));
  const latest = {
    assignment: await maxOf(
      `SELECT "userId", MAX("createdAt") AS at FROM "AssignmentRecord" WHERE "type" = 'primary' AND "userId" IN (${marks(found.length)}) GROUP BY "userId"`, found),
    rank: await maxOf(`SELECT "userId", MAX("createdAt") AS at FROM "RankRecord" WHERE "userId" IN (${marks(found.length)}) GROUP BY "userId"`, found),
  };
  return new Map(rows.map((r) => [Number(r.id), shapes.user(r, origin, latest)]));
}

async function byIds(table: string, ids: number[], accountId: number, shape: (r: Row) => Json): Promise<Map<number, Json>> {
  if (!ids.length) return new Map();
  const rows = await all(`SELECT * FROM "${table}" WHERE "accountId" = ? AND id IN (${marks(ids.length)})`, [accountId, ...ids]);
  return new Map(rows.map((r) => [Number(r.id), shape(r)]));
}

/** Each rank's image (its newest), one statement. */
async function imagesOf(ranks: Json[], accountId: number, origin: string) {
  const ids = unique(ranks.map((r) => r.id));
  if (!ids.length) return;
  const rows = await all(
    `SELECT * FROM "Image" WHERE "accountId" = ? AND "modelType" = 'App\\Models\\Rank' AND "modelId" IN (${marks(ids.length)}) ORDER BY "createdAt" DESC, id DESC`,
    [accountId, ...ids],
  );
  const first = new Map<number, Json>();
  for (const r of rows) if (!first.has(Number(r.modelId))) first.set(Number(r.modelId), shapes.image(r, origin));
  for (const rank of ranks) rank.image = first.get(Number(rank.id)) ?? null;
}

/** `include` of a rank record: author, document, rank, rank.image. */
async function includeOnRecords(records: Json[], include: Set<string>, accountId: number, origin: string) {
  if (include.has("author")) {
    const authors = await users(unique(records.map((r) => r.author_id)), accountId, origin);
    for (const r of records) r.author = r.author_id == null ? null : (authors.get(Number(r.author_id)) ?? null);
  }
  if (include.has("document")) {
    const documents = await byIds("Document", unique(records.map((r) => r.document_id)), accountId, shapes.document);
    for (const r of records) r.document = r.document_id == null ? null : (documents.get(Number(r.document_id)) ?? null);
  }
  if (include.has("rank") || include.has("rank.image")) {
    const ranks = await byIds("Rank", unique(records.map((r) => r.rank_id)), accountId, shapes.rank);
    if (include.has("rank.image")) await imagesOf([...ranks.values()], accountId, origin);
    for (const r of records) r.rank = r.rank_id == null ? null : (ranks.get(Number(r.rank_id)) ?? null);
  }
}

function paging(query: URLSearchParams) {
  const limit = query.has("limit") ? Number(query.get("limit")) : defaultPageSize;
  const page = query.has("page") ? Number(query.get("page")) : 1;
  if (!Number.isInteger(limit) || limit <= 0 || !Number.isInteger(page) || page <= 0) throw new HttpError(422, "Invalid page or limit.");
  return { page, perPage: Math.min(limit, maxPageSize) };
}

function paginated(data: Json[], total: number, page: number, perPage: number, origin: string, pathname: string, query: URLSearchParams) {
  const path = `${origin}${pathname}`;
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const linkTo = (n: number) => {
    const params = new URLSearchParams();
    for (const key of ["include", "limit"]) if (query.has(key)) params.set(key, query.get(key)!);
    params.set("page", String(n));
    return `${path}?${params}`;
  };
  const from = data.length ? (page - 1) * perPage + 1 : null;
  return {
    data,
    links: { first: linkTo(1), last: linkTo(lastPage), prev: page > 1 ? linkTo(page - 1) : null, next: page < lastPage ? linkTo(page + 1) : null },
    meta: { current_page: page, from, last_page: lastPage, path, per_page: perPage, to: from === null ? null : from + data.length - 1, total },
  };
}

const includesOf = (query: URLSearchParams, allowed: string[]) => {
  const include = new Set((query.get("include") ?? "").split(",").map((s) => s.trim()).filter(Boolean));
  for (const i of include) if (!allowed.includes(i)) throw new HttpError(422, `Unknown include ${i}.`);
  return include;
};

interface Auth {
  accountId: number;
  userId: number | null;
  scopes: string[];
}

async function authenticate(req: IncomingMessage): Promise<Auth> {
  const header = req.headers.authorization ?? "";
  const key = header.startsWith("Bearer ") ? header.slice(7) : "";
  if (!key) throw new HttpError(401, "Unauthenticated.");
  const hash = createHash("sha256").update(key).digest("hex");
  const [row] = await all(
    `SELECT k."accountId", k."userId", k."scopes", k."expiresAt", k."revokedAt", a."subscriptionStatus"
       FROM "ApiKey" k JOIN "Account" a ON a.id = k."accountId" WHERE k."hash" = ?`, [hash]);
  if (!row || row.revokedAt != null || (row.expiresAt != null && new Date(String(row.expiresAt)) <= new Date())) throw new HttpError(401, "Unauthenticated.");
  return { accountId: Number(row.accountId), userId: row.userId == null ? null : Number(row.userId), scopes: JSON.parse(String(row.scopes)) };
}

const can = (auth: Auth, scope: string) => {
  if (!auth.scopes.includes("*") && !auth.scopes.includes(scope)) throw new HttpError(403, "Forbidden.");
};

async function userRankRecords(auth: Auth, userId: number, query: URLSearchParams, origin: string, pathname: string) {
  can(auth, "view:rankrecord");
  const include = includesOf(query, ["author", "document", "rank", "rank.image"]);
  const { page, perPage } = paging(query);
  const [head] = await all(
    `SELECT EXISTS (SELECT 1 FROM "User" WHERE id = ?1 AND "accountId" = ?2) AS found,
            (SELECT COUNT(*) FROM "RankRecord" WHERE "userId" = ?1 AND "accountId" = ?2) AS total`, [userId, auth.accountId]);
  if (!bool(head!.found)) throw new HttpError(404, "Not found.");
  const rows = await all(
    `SELECT * FROM "RankRecord" WHERE "userId" = ? AND "accountId" = ? ORDER BY "createdAt" DESC, id DESC LIMIT ? OFFSET ?`,
    [userId, auth.accountId, perPage, (page - 1) * perPage]);
  const records = rows.map(shapes.rankRecord);
  await includeOnRecords(records, include, auth.accountId, origin);
  return paginated(records, Number(head!.total), page, perPage, origin, pathname, query);
}

async function comments(auth: Auth, query: URLSearchParams, origin: string, pathname: string) {
  can(auth, "view:comment");
  const include = includesOf(query, ["author"]);
  const { page, perPage } = paging(query);
  const [head] = await all(`SELECT COUNT(*) AS total FROM "Comment" WHERE "accountId" = ?`, [auth.accountId]);
  const rows = await all(`SELECT * FROM "Comment" WHERE "accountId" = ? ORDER BY id ASC LIMIT ? OFFSET ?`, [auth.accountId, perPage, (page - 1) * perPage]);
  const data = rows.map(shapes.comment);
  if (include.has("author")) {
    const authors = await users(unique(data.map((c) => c.author_id)), auth.accountId, origin);
    for (const c of data) c.author = c.author_id == null ? null : (authors.get(Number(c.author_id)) ?? null);
  }
  return paginated(data, Number(head!.total), page, perPage, origin, pathname, query);
}

const rankRecordTypes = ["Promotion", "Demotion", "Lateral", "Transfer"];

/** Creates a rank record: validation reads, then one write transaction (record, the user's rank, a newsfeed item). */
async function createRankRecord(auth: Auth, userId: number, body: Json) {
  can(auth, "create:rankrecord");
  const rankId = body.rank_id;
  const type = body.type;
  const text = body.text ?? null;
  const errors: Record<string, string[]> = {};
  if (!Number.isInteger(rankId)) errors.rank_id = ["The rank id field is required."];
  if (![0, 1, 2, 3].includes(type as number)) errors.type = ["The selected type is invalid."];
  if (text !== null && typeof text !== "string") errors.text = ["The text field must be a string."];
  if (Object.keys(errors).length) throw new HttpError(422, JSON.stringify(errors));
  const [names] = await all(
    `SELECT (SELECT name FROM "User" WHERE id = ?1 AND "accountId" = ?3) AS "user", (SELECT name FROM "Rank" WHERE id = ?2 AND "accountId" = ?3) AS "rank"`,
    [userId, rankId as number, auth.accountId]);
  if (names!.user == null) throw new HttpError(404, "Not found.");
  if (names!.rank == null) throw new HttpError(422, JSON.stringify({ rank_id: ["The selected rank id is invalid."] }));
  const now = new Date().toISOString().replace("Z", "+00:00");
  const headline = `${names!.user} received a ${rankRecordTypes[type as number]!.toLowerCase()} to ${names!.rank}`;
  statements += db.writeStatements(3);
  const [inserted] = await db.write([
    {
      sql: `INSERT INTO "RankRecord" ("accountId", "userId", "rankId", "authorId", "text", "type", "createdAt", "updatedAt")
            VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      args: [auth.accountId, userId, rankId, auth.userId, text, type, now, now],
    },
    { sql: `UPDATE "User" SET "rankId" = ?, "updatedAt" = ? WHERE id = ?`, args: [rankId, now, userId] },
    {
      sql: `INSERT INTO "NewsfeedItem" ("accountId", "logName", "description", "event", "subjectType", "subjectId", "causerId", "headline", "text", "properties", "createdAt", "updatedAt")
            VALUES (?, 'newsfeed', 'created', 'created', 'App\\Models\\RankRecord', ${db.lastRankRecordId}, ?, ?, ?, ?, ?, ?)`,
      args: [auth.accountId, auth.userId, headline, text, JSON.stringify({ headline, text }), now, now],
    },
  ]);
  return { data: shapes.rankRecord(inserted!) };
}

async function readJson(req: IncomingMessage): Promise<Json> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    const parsed = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed;
  } catch {}
  throw new HttpError(400, "The request body is not valid JSON.");
}

async function route(req: IncomingMessage): Promise<unknown> {
  const origin = `http://${req.headers.host ?? `127.0.0.1:${port}`}`;
  const target = new URL(req.url ?? "/", origin);
  const auth = await authenticate(req);
  let m: RegExpMatchArray | null;
  if ((m = target.pathname.match(/^\/v2\/users\/(\d+)\/rank-records$/))) {
    if (req.method === "GET") return userRankRecords(auth, Number(m[1]), target.searchParams, origin, target.pathname);
    if (req.method === "POST") return createRankRecord(auth, Number(m[1]), await readJson(req));
  }
  if (target.pathname === "/v2/comments" && req.method === "GET") return comments(auth, target.searchParams, origin, target.pathname);
  throw new HttpError(404, "Not found.");
}

const server = createServer((req, res: ServerResponse) => {
  const before = statements;
  route(req).then(
    (body) => send(res, 200, body, statements - before),
    (error) => {
      const status = error instanceof HttpError ? error.status : 500;
      if (status === 500) console.error(error);
      send(res, status, { error: { message: error instanceof Error ? error.message : String(error) } }, statements - before);
    },
  );
});

function send(res: ServerResponse, status: number, body: unknown, count: number) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), "x-statements": String(count) });
  res.end(text);
}

server.listen(port, "127.0.0.1", () => console.log(`Floor listening on http://127.0.0.1:${port}`));
const stop = () => server.close(() => {
  db.close().finally(() => process.exit(0));
});
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
