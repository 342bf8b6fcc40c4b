import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { loadConfig, type Config } from "../src/core/config.ts";
import { openDatabase, type Database } from "../src/db/prisma.ts";
import { migrate } from "../src/db/migrate.ts";
import { createApp, type App } from "../src/server/app.ts";
import type { ObservabilityOptions } from "../src/http/observability/index.ts";
import { createApiKey } from "../src/auth/accounts.ts";
import pg from "pg";

/** The database the suite runs on: `MUSTER_TEST_DATABASE=postgresql` (set by `npm test`'s second pass) or SQLite. */
export const testProvider: "sqlite" | "postgresql" =
  process.env.MUSTER_TEST_DATABASE === "postgresql" ? "postgresql" : "sqlite";

/** The PostgreSQL server the PG pass creates its scratch databases on (trust auth on 127.0.0.1 by default). */
export const testPostgresUrl = process.env.MUSTER_TEST_POSTGRES_URL || "postgresql://postgres@127.0.0.1:5432/postgres";

async function adminQuery(sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: testPostgresUrl, connectionTimeoutMillis: 5000 });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/**
 * A fresh, empty database for one test: a file in `dir` on SQLite; on PostgreSQL a new database
 * `muster_t_<random>` on the test server, dropped (connections and all) by `drop`.
 */
export async function createTestDatabase(dir: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (testProvider === "sqlite") return { url: `file:${path.join(dir, "test.db")}`, drop: async () => {} };
  const name = `muster_t_${randomBytes(6).toString("hex")}`;
  await adminQuery(`CREATE DATABASE "${name}"`);
  // A scratch database: durability is not what the tests test (the SQLite counterpart is `PRAGMA synchronous = OFF`).
  await adminQuery(`ALTER DATABASE "${name}" SET synchronous_commit = off`);
  const url = new URL(testPostgresUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}

export interface Harness {
  app: App;
  db: Database;
  config: Config;
  dir: string;
  /** A key of `account` with `scopes` (default `*`), bound to `userId` if given. */
  key(account?: string, scopes?: string, userId?: number | null): Promise<string>;
  close(): Promise<void>;
}

/**
 * A service on a fresh database of its own (a SQLite file, or a PostgreSQL database under
 * `MUSTER_TEST_DATABASE=postgresql`), reached through `yoga.fetch` (the real HTTP pipeline). `observability` (a log
 * stream of the test's, with `logLevel` in `overrides`) goes to the app.
 */
export async function startHarness(
  overrides: Partial<Config> = {},
  observability: ObservabilityOptions = {},
): Promise<Harness> {
  const dir = mkdtempSync(path.join(tmpdir(), "muster-test-"));
  const database = await createTestDatabase(dir);
  const databaseUrl = database.url;
  await migrate(databaseUrl);
  const db = await openDatabase(databaseUrl);
  const config = {
    ...loadConfig({}),
    logLevel: "silent" as const,
    databaseUrl,
    storageDir: path.join(dir, "files"),
    ...overrides,
  };
  const app = createApp({ db, config, ...observability });
  return {
    app,
    db,
    config,
    dir,
    key: async (account = "alpha", scopes = "*", userId = null) =>
      (await createApiKey(db.store, { account, scopes, userId })).key,
    close: async () => {
      await app.events.close();
      await db.close();
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** SQLite's plan of `sql` (EXPLAIN QUERY PLAN), a line per step; its `?` parameters left null (the plan does not depend on them). */
export async function sqlitePlan(db: Database, sql: string): Promise<string[]> {
  const params = Array.from(sql.matchAll(/\?/g), () => null);
  return (await db.read(`EXPLAIN QUERY PLAN ${sql}`, params)).map((row) => String(row[3]));
}

export interface Reply {
  status: number;
  /**
   * The JSON body. Each test reads the members its request's documented answer has; typing every read (about 670 of
   * them in 40 files) is not done yet, so this is the one `any` of the tests.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above; a new `any` anywhere else fails lint
  body: any;
  headers: Headers;
}

/** A REST client bound to one key. */
export function client(h: Harness, key: string | null, extraHeaders: Record<string, string> = {}) {
  const send = async (method: string, url: string, body?: unknown): Promise<Reply> => {
    const headers: Record<string, string> = { accept: "application/json", ...extraHeaders };
    if (key) headers.authorization = `Bearer ${key}`;
    let payload: BodyInit | undefined;
    if (body instanceof FormData) payload = body;
    else if (typeof body === "string") payload = body;
    else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers["content-type"] = "application/json";
    }
    const response = await h.app.yoga.fetch(`http://muster.test${url}`, { method, headers, body: payload });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers };
  };
  return {
    get: (url: string) => send("GET", url),
    post: (url: string, body?: unknown) => send("POST", url, body),
    patch: (url: string, body?: unknown) => send("PATCH", url, body),
    put: (url: string, body?: unknown) => send("PUT", url, body),
    delete: (url: string, body?: unknown) => send("DELETE", url, body),
    send,
    graphql: async (query: string, variables?: Record<string, unknown>) =>
      send("POST", "/graphql", { query, variables }),
  };
}

export type Client = ReturnType<typeof client>;

/** Seeds one organisation through the API itself and returns the ids the tests use. */
export async function seed(api: Client) {
  const ok = async (p: Promise<Reply>) => {
    const r = await p;
    if (r.status !== 200) throw new Error(`seed failed: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.data;
  };
  const private_ = await ok(api.post("/v2/ranks", { name: "Private", abbreviation: "PVT" }));
  const corporal = await ok(api.post("/v2/ranks", { name: "Corporal", abbreviation: "CPL" }));
  const active = await ok(api.post("/v2/statuses", { name: "Active", color: "#00ff00" }));
  const pending = await ok(api.post("/v2/statuses", { name: "Pending", color: "#999" }));
  const user = await ok(
    api.post("/v2/users", { name: "Ann Smith", email: "ann@example.com", rank_id: private_.id, status_id: active.id }),
  );
  const other = await ok(api.post("/v2/users", { name: "Bob Jones", email: "bob@example.com" }));
  const specialty = await ok(api.post("/v2/specialties", { name: "Medic", abbreviation: "MED" }));
  const qualification = await ok(api.post("/v2/qualifications", { name: "Marksman" }));
  const category = await ok(api.post("/v2/categories", { name: "Admin", resource: "App\\Models\\Form" }));
  const document = await ok(api.post("/v2/documents", { name: "Promotion order", content: "<p>Promoted</p>" }));
  const form = await ok(
    api.post("/v2/forms", {
      name: "Enlistment",
      slug: "enlistment",
      is_public: false,
      submission_status_id: pending.id,
    }),
  );
  const field = await ok(
    api.post(`/v2/forms/${form.id}/fields`, { name: "Callsign", key: "callsign", type: "text", required: true }),
  );
  const field2 = await ok(api.post(`/v2/forms/${form.id}/fields`, { name: "Age", key: "age", type: "number" }));
  return {
    private_,
    corporal,
    active,
    pending,
    user,
    other,
    specialty,
    qualification,
    category,
    document,
    form,
    field,
    field2,
  };
}
