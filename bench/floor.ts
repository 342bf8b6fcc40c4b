/**
 * The floor: the fastest hand-written `node:http` server we can write over the same database as the service,
 * answering the bench's workloads with the same JSON as the service — the REST ones (W1, W3, W4: same envelope,
 * snake_case keys, computed user fields and embedded includes) and W2, the one GraphQL document the bench sends
 * (`POST /graphql`, answered from its text without a GraphQL engine) — from direct SQL with batched lookups.
 * It authenticates the key (one joined lookup) and checks scopes, as any real server must, and skips everything
 * else the service does (maintenance flag, rate limits, GraphQL).
 *
 * DATABASE_URL picks the database:
 * - `file:` is SQLite through better-sqlite3: every statement prepared once and kept, rows as objects,
 *   `synchronous = FULL` as the service's libsql connections have it (better-sqlite3 builds with NORMAL in WAL mode,
 *   which would skip the fsync of every commit). The driver is synchronous, so reads run on read threads of their
 *   own (`FLOOR_READ_THREADS`, 2 by default), as the service's do; writes and key lookups on the main thread. `FLOOR_SQLITE=libsql` runs it on @libsql/client instead, as the
 *   floor did until issue 17, to compare the two drivers.
 * - `postgresql://` is PostgreSQL through a `pg` Pool: every statement a named (server-side prepared) statement
 *   (`{ name, text, values }`), lists as one array parameter (`= ANY($1)`), so each text is prepared once.
 * The SQL is the same for both but for lists (`IN (?, …)` on SQLite, `= ANY(?)` on PostgreSQL) and the id of the row
 * just inserted.
 *
 * Each response carries `x-statements`: the SQL statements it ran (BEGIN and COMMIT count on both databases).
 *
 *   PORT=8090 DATABASE_URL=file:bench.db node --import tsx bench/floor.ts
 *   PORT=8090 DATABASE_URL=postgresql://127.0.0.1/bench node --import tsx bench/floor.ts
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { createClient } from "@libsql/client";
import pg from "pg";
import { cursorUserId, userCursor, w2Document, w2cDocument } from "./w2.ts";

type Json = Record<string, unknown>;
type Row = Record<string, unknown>;
type Args = unknown[];
type Rows = Row[] | Promise<Row[]>;

const url = process.env.DATABASE_URL ?? "file:bench.db";
const port = Number(process.env.PORT ?? 8090);
const maxPageSize = 100;
const defaultPageSize = 15;

/** The database: rows as objects keyed by column name, and one write transaction of several statements. */
interface Db {
  /** `column IN (…ids)`: a fragment and its arguments (one array argument on PostgreSQL). */
  inList(column: string, ids: unknown[]): { sql: string; args: Args };
  all(sql: string, args: Args): Rows;
  /** `all` for a statement that looks up a row or two by key (on SQLite on the main thread). */
  lookup(sql: string, args: Args): Rows;
  /** Runs `statements` in one write transaction; the rows of the first. */
  write(statements: Array<{ sql: string; args: Args }>): Rows;
  /** SQL for the id of the `RankRecord` row this connection just inserted. */
  lastRankRecordId: string;
  close(): Promise<void>;
}

const marks = (n: number) => Array(n).fill("?").join(",");
const sqliteIn = (column: string, ids: unknown[]) => ({ sql: `${column} IN (${marks(ids.length)})`, args: ids });

/**
 * SQLite's read threads (`FLOOR_READ_THREADS`, 2 by default; 0 reads on the main thread). better-sqlite3 is
 * synchronous: on the main thread a read stops the event loop while SQLite makes its rows, so the floor used one core
 * where the service, whose reads run on a thread of their own (src/db/sqlite-read-thread.ts), used two.
 */
const readThreads = Number(process.env.FLOOR_READ_THREADS ?? 2);

/**
 * SQLite on better-sqlite3: each distinct SQL text prepared once per connection. Reads (`all`) go to the read
 * threads, each with a read-only connection of its own (bench/floor-read-worker.mjs), to the one with the fewest
 * waiting; a lookup of a row or two by key (`lookup`) and the writes run on the main thread's connection, where a
 * statement costs less than the two messages.
 */
async function betterSqlite(): Promise<Db> {
  const Database = createRequire(import.meta.url)("better-sqlite3") as typeof import("better-sqlite3");
  const file = url.replace(/^file:/, "");
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.pragma("busy_timeout = 10000");
  // better-sqlite3 binds an array to plain `?` only: `?N` becomes `?`, and the arguments are put in that order.
  type Bound = { text: string; order: number[] | null };
  const texts = new Map<string, Bound>();
  const bind = (sql: string, args: Args): { text: string; values: Args } => {
    let b = texts.get(sql);
    if (!b) {
      const order: number[] = [];
      let next = 0;
      const text = sql.replace(/\?(\d*)/g, (_, i: string) => (order.push(i ? Number(i) - 1 : next++), "?"));
      texts.set(sql, (b = { text, order: /\?\d/.test(sql) ? order : null }));
    }
    return { text: b.text, values: b.order ? b.order.map((i) => args[i]) : args };
  };
  const prepared = new Map<string, import("better-sqlite3").Statement>();
  const run = (sql: string, args: Args): Row[] => {
    const { text, values } = bind(sql, args);
    let statement = prepared.get(text);
    if (!statement) prepared.set(text, (statement = db.prepare(text)));
    if (statement.reader) return statement.all(values) as Row[];
    statement.run(values);
    return [];
  };
  const write = db.transaction((statements: Array<{ sql: string; args: Args }>) => {
    const [first, ...rest] = statements;
    const rows = run(first.sql, first.args);
    for (const s of rest) run(s.sql, s.args);
    return rows;
  });
  // Group commit, as the service's (src/db/sqlite-group-commit.ts): the writes asked for within one turn of the event
  // loop share one BEGIN IMMEDIATE … COMMIT, each in a savepoint of its own (better-sqlite3 nests a transaction
  // function as one), so a failed one rolls back alone. With one COMMIT, and its fsync, per write the floor's main
  // thread waited on the disk while the service committed ten writes at once, and W4 ran at about half the service's
  // rate on a busy disk.
  type Pending = {
    statements: Array<{ sql: string; args: Args }>;
    resolve(rows: Row[]): void;
    reject(e: unknown): void;
  };
  let group: Pending[] | null = null;
  const commitGroup = db.transaction((writes: Pending[]) =>
    writes.map((w) => {
      try {
        return { w, rows: write(w.statements) };
      } catch (error) {
        return { w, error };
      }
    }),
  );
  const flush = () => {
    const writes = group!;
    group = null;
    try {
      for (const { w, rows, error } of commitGroup.immediate(writes))
        if (rows) w.resolve(rows);
        else w.reject(error);
    } catch (error) {
      for (const w of writes) w.reject(error);
    }
  };
  const grouped = (statements: Array<{ sql: string; args: Args }>) =>
    new Promise<Row[]>((resolve, reject) => {
      if (!group) {
        group = [];
        setImmediate(flush);
      }
      group.push({ statements, resolve, reject });
    });
  type Waiting = { resolve(rows: Row[]): void; reject(error: Error): void };
  const threads = Array.from({ length: readThreads }, () => {
    const worker = new Worker(new URL("./floor-read-worker.mjs", import.meta.url), {
      workerData: { file },
      execArgv: [],
    });
    const waiting = new Map<number, Waiting>();
    worker.on("message", ({ id, rows, error }: { id: number; rows?: Row[]; error?: string }) => {
      const w = waiting.get(id)!;
      waiting.delete(id);
      if (error === undefined) w.resolve(rows!);
      else w.reject(new Error(error));
    });
    return { worker, waiting };
  });
  let nextId = 0;
  const read = (sql: string, args: Args): Promise<Row[]> => {
    const { text, values } = bind(sql, args);
    let thread = threads[0];
    for (const t of threads) if (t.waiting.size < thread.waiting.size) thread = t;
    const id = nextId++;
    return new Promise((resolve, reject) => {
      thread.waiting.set(id, { resolve, reject });
      thread.worker.postMessage({ id, sql: text, args: values });
    });
  };
  return {
    inList: sqliteIn,
    all: threads.length ? read : run,
    lookup: run,
    write: grouped,
    lastRankRecordId: "last_insert_rowid()",
    close: async () => {
      await Promise.all(threads.map((t) => t.worker.terminate()));
      db.close();
    },
  };
}

/** SQLite on @libsql/client, as the floor ran until issue 17 (`FLOOR_SQLITE=libsql`). */
async function libsql(): Promise<Db> {
  const client = createClient({ url });
  await client.execute("PRAGMA journal_mode = WAL");
  await client.execute("PRAGMA busy_timeout = 10000");
  const all = async (sql: string, args: Args) =>
    (await client.execute({ sql, args: args as never })).rows as unknown as Row[];
  return {
    inList: sqliteIn,
    all,
    lookup: all,
    write: async (statements) => (await client.batch(statements as never, "write"))[0].rows as unknown as Row[],
    lastRankRecordId: "last_insert_rowid()",
    close: async () => client.close(),
  };
}

function postgres(): Db {
  // Prisma stores DateTime as `timestamp(3)` in UTC; pg would parse it as local time. Kept as text in the form
  // SQLite keeps it (`2025-01-01T00:00:00.000+00:00`, from `2025-01-01 00:00:00[.fff]`), which `date` formats as it is.
  const timestamp = (value: string) =>
    /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,3})?$/.test(value)
      ? `${value.slice(0, 10)}T${value.slice(11, 19)}.${`${value.slice(20)}000`.slice(0, 3)}+00:00`
      : `${value.replace(" ", "T")}Z`;
  const types = {
    getTypeParser: (oid: number, format?: "text" | "binary") =>
      oid === 1114 ? timestamp : pg.types.getTypeParser(oid, format as "text"),
  };
  const pool = new pg.Pool({ connectionString: url, types, max: 10 });
  // `?` → `$1, $2, …` in order, `?N` → `$N`; each distinct text becomes a named (server-side prepared) statement.
  const queries = new Map<string, { text: string; name: string }>();
  const query = (sql: string) => {
    let q = queries.get(sql);
    if (!q) {
      let n = 0;
      const text = sql.replace(/\?(\d*)/g, (_, i: string) => `$${i || ++n}`);
      queries.set(sql, (q = { text, name: `floor_${queries.size}` }));
    }
    return q;
  };
  const run = async (client: pg.Pool | pg.PoolClient, sql: string, args: Args) => {
    const { name, text } = query(sql);
    return (await client.query({ name, text, values: args })).rows as Row[];
  };
  return {
    inList: (column, ids) => ({ sql: `${column} = ANY(?)`, args: [ids] }),
    all: (sql, args) => run(pool, sql, args),
    lookup: (sql, args) => run(pool, sql, args),
    write: async (statements) => {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const [first, ...rest] = statements;
        const rows = await run(client, first.sql, first.args);
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
    close: () => pool.end(),
  };
}

const db = /^postgres(ql)?:\/\//i.test(url)
  ? postgres()
  : process.env.FLOOR_SQLITE === "libsql"
    ? await libsql()
    : await betterSqlite();

let statements = 0;
const all = (sql: string, args: Args = []) => {
  statements++;
  return db.all(sql, args);
};
const lookup = (sql: string, args: Args = []) => {
  statements++;
  return db.lookup(sql, args);
};
const unique = (values: unknown[]) => [...new Set(values.filter((v) => v != null))] as number[];

/** A stored time as the service writes it (microseconds, `Z`); Prisma's SQLite text (`….123+00:00`) without a Date. */
const date = (v: unknown) => {
  if (v == null) return null;
  const text = String(v);
  if (text.length === 29 && text.endsWith("+00:00") && text[19] === ".") return `${text.slice(0, 23)}000Z`;
  return new Date(text).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
};
const bool = (v: unknown) => v === 1 || v === 1n || v === true;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const shapes = {
  /** A user as a publishable key sees it: without the fields src/resources/user.ts marks `private: true`. */
  publicUser: (r: Row, origin: string): Json => ({
    id: r.id,
    label: `User: ${r.id}`,
    name: r.name,
    position_id: r.positionId,
    rank_id: r.rankId,
    specialty_id: r.specialtyId,
    status_id: r.statusId,
    unit_id: r.unitId,
    approved: bool(r.approved),
    profile_photo: r.profilePhoto,
    cover_photo: r.coverPhoto,
    display_name: r.name,
    online: false,
    profile_photo_url: fileUrl(origin, r.profilePhoto) ?? avatarUrl(String(r.name ?? "")),
    cover_photo_url: fileUrl(origin, r.coverPhoto),
    last_assignment_change_date: date(r.lastAssignmentAt),
    last_rank_change_date: date(r.lastRankAt),
    created_at: date(r.createdAt),
    updated_at: date(r.updatedAt),
  }),
  user: (r: Row, origin: string): Json => ({
    id: r.id,
    label: `User: ${r.id}`,
    name: r.name,
    email: r.email,
    email_verified_at: date(r.emailVerifiedAt),
    position_id: r.positionId,
    rank_id: r.rankId,
    specialty_id: r.specialtyId,
    status_id: r.statusId,
    unit_id: r.unitId,
    approved: bool(r.approved),
    notes: r.notes,
    notes_updated_at: date(r.notesUpdatedAt),
    profile_photo: r.profilePhoto,
    cover_photo: r.coverPhoto,
    last_seen_at: date(r.lastSeenAt),
    discord_user_id: r.discordUserId,
    facebook_user_id: r.facebookUserId,
    github_user_id: r.githubUserId,
    google_user_id: r.googleUserId,
    display_name: r.name,
    online: false,
    profile_photo_url: fileUrl(origin, r.profilePhoto) ?? avatarUrl(String(r.name ?? "")),
    cover_photo_url: fileUrl(origin, r.coverPhoto),
    last_assignment_change_date: date(r.lastAssignmentAt),
    last_rank_change_date: date(r.lastRankAt),
    created_at: date(r.createdAt),
    updated_at: date(r.updatedAt),
  }),
  rank: (r: Row): Json => ({
    id: r.id,
    label: `Rank: ${r.id}`,
    name: r.name,
    description: r.description,
    abbreviation: r.abbreviation,
    paygrade: r.paygrade,
    order: r.order,
    created_at: date(r.createdAt),
    updated_at: date(r.updatedAt),
  }),
  image: (r: Row, origin: string): Json => ({
    id: r.id,
    label: `Image: ${r.id}`,
    name: r.name,
    description: r.description,
    filename: r.filename,
    path: r.path,
    model_type: r.modelType,
    model_id: r.modelId,
    image_url: fileUrl(origin, r.path),
    created_at: date(r.createdAt),
    updated_at: date(r.updatedAt),
  }),
  document: (r: Row): Json => ({
    id: r.id,
    label: `Document: ${r.id}`,
    name: r.name,
    description: r.description,
    content: r.content,
    author_id: r.authorId,
    created_at: date(r.createdAt),
    updated_at: date(r.updatedAt),
  }),
  rankRecord: (r: Row): Json => ({
    id: r.id,
    label: `Rank Record: ${r.id}`,
    user_id: r.userId,
    document_id: r.documentId,
    author_id: r.authorId,
    text: r.text,
    rank_id: r.rankId,
    type: r.type,
    created_at: date(r.createdAt),
    updated_at: date(r.updatedAt),
  }),
  comment: (r: Row): Json => ({
    id: r.id,
    label: `Comment: ${r.id}`,
    author_id: r.authorId,
    model_type: r.modelType,
    model_id: r.modelId,
    comment: r.comment,
    created_at: date(r.createdAt),
    updated_at: date(r.updatedAt),
  }),
};

const fileUrl = (origin: string, path: unknown) =>
  path ? `${origin}/files/${String(path).split("/").map(encodeURIComponent).join("/")}` : null;
const avatarUrl = (name: string) => {
  const initials = name
    .split(" ")
    .filter(Boolean)
    .map((part) => [...part][0])
    .join(" ");
  return `https://ui-avatars.com/api/?name=${encodeURIComponent(initials).replace(/%20/g, "+")}&color=2563eb&background=eff6ff`;
};

/**
 * Users by id, with their computed dates (a user's newest rank record and newest primary assignment record, two
 * correlated `max()` lookups on the `(userId, createdAt)` indexes): one statement for any number of users.
 */
const computedUserDates = `(SELECT MAX(a."createdAt") FROM "AssignmentRecord" a WHERE a."userId" = u.id AND a."type" = 'primary') AS "lastAssignmentAt",
            (SELECT MAX(r."createdAt") FROM "RankRecord" r WHERE r."userId" = u.id) AS "lastRankAt"`;

/** The columns of a user a publishable key may see (no private ones read at all). */
const publicUserColumns = [
  "id",
  "name",
  "positionId",
  "rankId",
  "specialtyId",
  "statusId",
  "unitId",
  "approved",
  "profilePhoto",
  "coverPhoto",
  "createdAt",
  "updatedAt",
]
  .map((c) => `u."${c}"`)
  .join(", ");

async function users(ids: number[], accountId: number, origin: string): Promise<Map<number, Json>> {
  if (!ids.length) return new Map();
  const list = db.inList("u.id", ids);
  const rows = await all(`SELECT u.*, ${computedUserDates} FROM "User" u WHERE u."accountId" = ? AND ${list.sql}`, [
    accountId,
    ...list.args,
  ]);
  return new Map(rows.map((r) => [Number(r.id), shapes.user(r, origin)]));
}

/** Rows of `table` by id, the columns `columns` (a select list), keyed by id: one statement. */
async function rowsByIds(table: string, columns: string, ids: number[], accountId: number): Promise<Map<number, Row>> {
  if (!ids.length) return new Map();
  const list = db.inList("id", ids);
  const rows = await all(`SELECT ${columns} FROM "${table}" WHERE "accountId" = ? AND ${list.sql}`, [
    accountId,
    ...list.args,
  ]);
  return new Map(rows.map((r) => [Number(r.id), r]));
}

async function byIds(
  table: string,
  ids: number[],
  accountId: number,
  shape: (r: Row) => Json,
): Promise<Map<number, Json>> {
  const rows = await rowsByIds(table, "*", ids, accountId);
  return new Map([...rows].map(([id, r]) => [id, shape(r)]));
}

/** Each rank's image (its newest), by rank id: one statement. */
async function rankImages(rankIds: number[], accountId: number, columns = "*"): Promise<Map<number, Row>> {
  if (!rankIds.length) return new Map();
  const list = db.inList(`"modelId"`, rankIds);
  const rows = await all(
    `SELECT ${columns} FROM "Image" WHERE "accountId" = ? AND "modelType" = 'App\\Models\\Rank' AND ${list.sql} ORDER BY "createdAt" DESC, id DESC`,
    [accountId, ...list.args],
  );
  const first = new Map<number, Row>();
  for (const r of rows) if (!first.has(Number(r.modelId))) first.set(Number(r.modelId), r);
  return first;
}

/** `include` of a rank record: author, document, rank, rank.image; the lookups run side by side. */
async function includeOnRecords(records: Json[], include: Set<string>, accountId: number, origin: string) {
  const rankIds = unique(records.map((r) => r.rank_id));
  const [authors, documents, ranks, images] = await Promise.all([
    include.has("author") ? users(unique(records.map((r) => r.author_id)), accountId, origin) : null,
    include.has("document")
      ? byIds("Document", unique(records.map((r) => r.document_id)), accountId, shapes.document)
      : null,
    include.has("rank") || include.has("rank.image") ? byIds("Rank", rankIds, accountId, shapes.rank) : null,
    include.has("rank.image") ? rankImages(rankIds, accountId) : null,
  ]);
  if (ranks && images)
    for (const [id, rank] of ranks) rank.image = images.has(id) ? shapes.image(images.get(id)!, origin) : null;
  for (const r of records) {
    if (authors) r.author = r.author_id == null ? null : (authors.get(Number(r.author_id)) ?? null);
    if (documents) r.document = r.document_id == null ? null : (documents.get(Number(r.document_id)) ?? null);
    if (ranks) r.rank = r.rank_id == null ? null : (ranks.get(Number(r.rank_id)) ?? null);
  }
}

function paging(query: URLSearchParams) {
  const limit = query.has("limit") ? Number(query.get("limit")) : defaultPageSize;
  const page = query.has("page") ? Number(query.get("page")) : 1;
  if (!Number.isInteger(limit) || limit <= 0 || !Number.isInteger(page) || page <= 0)
    throw new HttpError(422, "Invalid page or limit.");
  return { page, perPage: Math.min(limit, maxPageSize) };
}

function paginated(
  data: Json[],
  total: number,
  page: number,
  perPage: number,
  origin: string,
  pathname: string,
  query: URLSearchParams,
) {
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
    links: {
      first: linkTo(1),
      last: linkTo(lastPage),
      prev: page > 1 ? linkTo(page - 1) : null,
      next: page < lastPage ? linkTo(page + 1) : null,
    },
    meta: {
      current_page: page,
      from,
      last_page: lastPage,
      path,
      per_page: perPage,
      to: from === null ? null : from + data.length - 1,
      total,
    },
  };
}

const includesOf = (query: URLSearchParams, allowed: string[]) => {
  const include = new Set(
    (query.get("include") ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
  );
  for (const i of include) if (!allowed.includes(i)) throw new HttpError(422, `Unknown include ${i}.`);
  return include;
};

interface Auth {
  accountId: number;
  userId: number | null;
  scopes: string[];
  /** A publishable key: it sees no private field. */
  publishable: boolean;
}

/** A JSON column as each driver gives it: text on SQLite, parsed on PostgreSQL (jsonb). */
const jsonList = (value: unknown): unknown[] =>
  value == null ? [] : typeof value === "string" ? (JSON.parse(value) as unknown[]) : (value as unknown[]);

async function authenticate(req: IncomingMessage): Promise<Auth> {
  const header = req.headers.authorization ?? "";
  const key = header.startsWith("Bearer ") ? header.slice(7) : "";
  if (!key) throw new HttpError(401, "Unauthenticated.");
  const hash = createHash("sha256").update(key).digest("hex");
  const [row] = await lookup(
    `SELECT k."accountId", k."userId", k."scopes", k."publishable", k."allowedOrigins", k."expiresAt", k."revokedAt", a."subscriptionStatus"
       FROM "ApiKey" k JOIN "Account" a ON a.id = k."accountId" WHERE k."hash" = ?`,
    [hash],
  );
  if (!row || row.revokedAt != null || (row.expiresAt != null && new Date(String(row.expiresAt)) <= new Date()))
    throw new HttpError(401, "Unauthenticated.");
  const publishable = bool(row.publishable);
  // A publishable key is used from the origins it names (a request without an Origin is a server's, and may use it).
  const origin = req.headers.origin;
  if (publishable && origin !== undefined && !(jsonList(row.allowedOrigins) as string[]).includes(origin))
    throw new HttpError(403, "Forbidden.");
  return {
    accountId: Number(row.accountId),
    userId: publishable || row.userId == null ? null : Number(row.userId),
    scopes: jsonList(row.scopes) as string[],
    publishable,
  };
}

const can = (auth: Auth, scope: string) => {
  if (!auth.scopes.includes("*") && !auth.scopes.includes(scope)) throw new HttpError(403, "Forbidden.");
};

async function userRankRecords(auth: Auth, userId: number, query: URLSearchParams, origin: string, pathname: string) {
  can(auth, "view:rankrecord");
  const include = includesOf(query, ["author", "document", "rank", "rank.image"]);
  const { page, perPage } = paging(query);
  const [[head], rows] = await Promise.all([
    all(
      `SELECT EXISTS (SELECT 1 FROM "User" WHERE id = ?1 AND "accountId" = ?2) AS found,
              (SELECT COUNT(*) FROM "RankRecord" WHERE "userId" = ?1 AND "accountId" = ?2) AS total`,
      [userId, auth.accountId],
    ),
    all(
      `SELECT * FROM "RankRecord" WHERE "userId" = ? AND "accountId" = ? ORDER BY "createdAt" DESC, id DESC LIMIT ? OFFSET ?`,
      [userId, auth.accountId, perPage, (page - 1) * perPage],
    ),
  ]);
  if (!bool(head.found)) throw new HttpError(404, "Not found.");
  const records = rows.map(shapes.rankRecord);
  await includeOnRecords(records, include, auth.accountId, origin);
  return paginated(records, Number(head.total), page, perPage, origin, pathname, query);
}

async function comments(auth: Auth, query: URLSearchParams, origin: string, pathname: string) {
  can(auth, "view:comment");
  const include = includesOf(query, ["author"]);
  const { page, perPage } = paging(query);
  const [[head], rows] = await Promise.all([
    all(`SELECT COUNT(*) AS total FROM "Comment" WHERE "accountId" = ?`, [auth.accountId]),
    all(`SELECT * FROM "Comment" WHERE "accountId" = ? ORDER BY id ASC LIMIT ? OFFSET ?`, [
      auth.accountId,
      perPage,
      (page - 1) * perPage,
    ]),
  ]);
  const data = rows.map(shapes.comment);
  if (include.has("author")) {
    const authors = await users(unique(data.map((c) => c.author_id)), auth.accountId, origin);
    for (const c of data) c.author = c.author_id == null ? null : (authors.get(Number(c.author_id)) ?? null);
  }
  return paginated(data, Number(head.total), page, perPage, origin, pathname, query);
}

/** The roster page (W5): a page of users by id with their rank; a publishable key's without the private fields. */
async function userList(auth: Auth, query: URLSearchParams, origin: string, pathname: string) {
  can(auth, "view:user");
  const include = includesOf(query, ["rank"]);
  if (include.has("rank")) can(auth, "view:rank");
  const { page, perPage } = paging(query);
  const [[head], rows] = await Promise.all([
    all(`SELECT COUNT(*) AS total FROM "User" WHERE "accountId" = ?`, [auth.accountId]),
    // The page is cut before the computed dates are read: PostgreSQL evaluates a select list's subqueries for the rows
    // OFFSET skips too (page 40 read the dates of 1,000 users for 25; 2.0 ms of PostgreSQL CPU a request against 0.5).
    all(
      `SELECT ${auth.publishable ? publicUserColumns : "u.*"}, ${computedUserDates}
         FROM (SELECT * FROM "User" WHERE "accountId" = ? ORDER BY id ASC LIMIT ? OFFSET ?) u ORDER BY u.id ASC`,
      [auth.accountId, perPage, (page - 1) * perPage],
    ),
  ]);
  const shape = auth.publishable ? shapes.publicUser : shapes.user;
  const data = rows.map((r) => shape(r, origin));
  if (include.has("rank")) {
    const ranks = await byIds("Rank", unique(data.map((u) => u.rank_id)), auth.accountId, shapes.rank);
    for (const u of data) u.rank = u.rank_id == null ? null : (ranks.get(Number(u.rank_id)) ?? null);
  }
  return paginated(data, Number(head.total), page, perPage, origin, pathname, query);
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
  const [names] = await lookup(
    `SELECT (SELECT name FROM "User" WHERE id = ?1 AND "accountId" = ?3) AS "user", (SELECT name FROM "Rank" WHERE id = ?2 AND "accountId" = ?3) AS "rank"`,
    [userId, rankId as number, auth.accountId],
  );
  if (names.user == null) throw new HttpError(404, "Not found.");
  if (names.rank == null) throw new HttpError(422, JSON.stringify({ rank_id: ["The selected rank id is invalid."] }));
  const now = new Date().toISOString().replace("Z", "+00:00");
  const headline = `${names.user} received a ${rankRecordTypes[type as number].toLowerCase()} to ${names.rank}`;
  statements += 5; // BEGIN, three statements, COMMIT
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
  return { data: shapes.rankRecord(inserted) };
}

const rankRecordEnum = ["PROMOTION", "DEMOTION", "LATERAL", "TRANSFER"];
const w2Text = w2Document.replace(/\s+/g, " ").trim();
const w2cText = w2cDocument.replace(/\s+/g, " ").trim();
const w2PageSize = 100;
const w2RecordsPerUser = 20;

/**
 * W2 as a GraphQL endpoint answers it: `{ data: { users: { nodes } } }`, keys in the order the document selects them.
 * Only the bench's W2 document is known (by its text); the SQL: the page of users, their rank records (the newest
 * 20 of each: ROW_NUMBER() per user in one statement), then the records' ranks, the ranks' images and the authors,
 * each one batched statement, side by side.
 */
async function w2(auth: Auth, body: Json) {
  can(auth, "view:user");
  can(auth, "view:rankrecord");
  const text = typeof body.query === "string" ? body.query.replace(/\s+/g, " ").trim() : "";
  if (text !== w2Text && text !== w2cText)
    throw new HttpError(400, "The floor answers only the bench's W2 and W2c documents.");
  const variables = (body.variables ?? {}) as Json;
  let users: Row[];
  let hasNextPage = false;
  if (text === w2Text) {
    const offset = Number(variables.offset ?? 0);
    if (!Number.isInteger(offset) || offset < 0) throw new HttpError(400, "Invalid offset.");
    users = await all(`SELECT id, name FROM "User" WHERE "accountId" = ? ORDER BY id LIMIT ? OFFSET ?`, [
      auth.accountId,
      w2PageSize,
      offset,
    ]);
  } else {
    // W2c: the page after the cursor's user, by id; one row more says whether there is a next page.
    const after = variables.after == null ? 0 : cursorUserId(String(variables.after));
    if (!Number.isInteger(after)) throw new HttpError(400, "Invalid cursor.");
    users = await all(`SELECT id, name FROM "User" WHERE "accountId" = ? AND id > ? ORDER BY id LIMIT ?`, [
      auth.accountId,
      after,
      w2PageSize + 1,
    ]);
    hasNextPage = users.length > w2PageSize;
    if (hasNextPage) users = users.slice(0, w2PageSize);
  }
  const list = db.inList(
    `"userId"`,
    users.map((u) => u.id),
  );
  // The users are the account's, and so are their records: no `"accountId" = ?` here (the service has none either).
  // With it, SQLite read every record of the account through the (accountId, createdAt) index and sorted them,
  // 200,000 rows for 2,000 (about 28 ms against 4 ms a request), rather than each user's through (userId, createdAt).
  const records = users.length
    ? await all(
        `SELECT id, "userId", type, "rankId", "authorId" FROM (
           SELECT id, "userId", type, "rankId", "authorId", ROW_NUMBER() OVER (PARTITION BY "userId" ORDER BY "createdAt" DESC, id DESC) AS n
             FROM "RankRecord" WHERE ${list.sql}) r
          WHERE n <= ? ORDER BY "userId", n`,
        [...list.args, w2RecordsPerUser],
      )
    : [];
  const rankIds = unique(records.map((r) => r.rankId));
  const [ranks, images, authors] = await Promise.all([
    rowsByIds("Rank", "id, name", rankIds, auth.accountId),
    rankImages(rankIds, auth.accountId, `"modelId", path`),
    rowsByIds("User", "id, name", unique(records.map((r) => r.authorId)), auth.accountId),
  ]);
  const rankOf = new Map<number, Json>();
  for (const [id, r] of ranks) {
    const image = images.get(id);
    rankOf.set(id, { name: r.name, image: image ? { path: image.path } : null });
  }
  const byUser = new Map<number, Json[]>(users.map((u) => [Number(u.id), []]));
  for (const r of records) {
    const author = r.authorId == null ? null : authors.get(Number(r.authorId));
    byUser.get(Number(r.userId))!.push({
      rowId: r.id,
      type: rankRecordEnum[Number(r.type)],
      rank: r.rankId == null ? null : (rankOf.get(Number(r.rankId)) ?? null),
      author: author ? { name: author.name } : null,
    });
  }
  const nodes = users.map((u) => ({ rowId: u.id, name: u.name, rankRecords: { nodes: byUser.get(Number(u.id))! } }));
  if (text === w2Text) return { data: { users: { nodes } } };
  const endCursor = users.length ? userCursor(Number(users.at(-1)!.id)) : null;
  return { data: { users: { pageInfo: { endCursor, hasNextPage }, nodes } } };
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
  if (target.pathname === "/graphql" && req.method === "POST") return w2(auth, await readJson(req));
  if (target.pathname === "/v2/comments" && req.method === "GET")
    return comments(auth, target.searchParams, origin, target.pathname);
  if (target.pathname === "/v2/users" && req.method === "GET")
    return userList(auth, target.searchParams, origin, target.pathname);
  throw new HttpError(404, "Not found.");
}

const server = createServer((req, res: ServerResponse) => {
  const before = statements;
  route(req).then(
    // Only a publishable key from one of its origins gets this far with an Origin: a browser may read the answer.
    (body) => send(res, 200, body, statements - before, req.headers.origin),
    (error) => {
      const status = error instanceof HttpError ? error.status : 500;
      if (status === 500) console.error(error);
      send(
        res,
        status,
        { error: { message: error instanceof Error ? error.message : String(error) } },
        statements - before,
      );
    },
  );
});

function send(res: ServerResponse, status: number, body: unknown, count: number, allowedOrigin?: string) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "x-statements": String(count),
    ...(allowedOrigin ? { "access-control-allow-origin": allowedOrigin, vary: "Origin" } : {}),
  });
  res.end(text);
}

server.listen(port, "127.0.0.1", () => console.log(`Floor listening on http://127.0.0.1:${port}`));
const stop = () =>
  server.close(() => {
    void db.close().finally(() => process.exit(0));
  });
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
