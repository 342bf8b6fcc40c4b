import { afterAll, beforeAll, expect, test } from "vitest";
import { existsSync } from "node:fs";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { createApiKey } from "../src/auth/accounts.ts";
import { hashKey } from "../src/auth/keys.ts";
import { client, startHarness, type Harness } from "./harness.ts";
import { cliArgs } from "./support/built.ts";

const run = promisify(execFile);
let h: Harness;
const cli = (...args: string[]) =>
  run(process.execPath, [...cliArgs, ...args], { env: { ...process.env, DATABASE_URL: h.config.databaseUrl } });

/** Whether `needle` occurs in any row of any table (each row read as its text). */
async function storedInPostgres(needle: string): Promise<boolean> {
  const tables = await h.db.prisma.$queryRawUnsafe<Array<{ name: string }>>(
    "SELECT table_name::text AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
  );
  const union = tables.map(({ name }) => `SELECT 1 FROM "${name}" t WHERE strpos(t::text, $1) > 0`).join(" UNION ALL ");
  return (
    (await h.db.prisma.$queryRawUnsafe<unknown[]>(`SELECT EXISTS(${union}) AS found`, needle)) as Array<{
      found: boolean;
    }>
  )[0].found;
}

beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

test("only the key's hash is stored: the key text appears nowhere in the database file", async () => {
  const created = await createApiKey(h.db.store, { account: "alpha", scopes: "*", name: "stored" });
  const row = await h.db.prisma.apiKey.findUniqueOrThrow({ where: { id: created.id } });
  expect(row.hash).toBe(hashKey(created.key));
  // Read by another process: opening and closing the file here would drop this process's SQLite locks
  // (POSIX record locks belong to the process, and closing any descriptor of the file releases them).
  // PostgreSQL has no file of its own to read: every row of every table is searched as text instead.
  const stored =
    h.db.provider === "postgresql"
      ? storedInPostgres
      : (needle: string) => {
          const path = h.config.databaseUrl.slice("file:".length);
          const files = [path, `${path}-wal`].filter(existsSync);
          return run("grep", ["-qF", needle, ...files]).then(
            () => true,
            (e: Error & { code: number }) => (e.code === 1 ? false : Promise.reject(e)),
          );
        };
  expect(await stored(row.hash)).toBe(true);
  expect(await stored(created.key)).toBe(false);
  expect(await stored(created.key.slice(12))).toBe(false);
});

test("revocation takes effect on the next request, also through the CLI", async () => {
  const created = await createApiKey(h.db.store, { account: "alpha", scopes: "*", name: "to revoke" });
  const api = client(h, created.key);
  expect((await api.get("/v2/ranks")).status).toBe(200);
  const { stdout } = await cli("keys:revoke", String(created.id));
  expect(stdout).toMatch(new RegExp(`Revoked key ${created.id}`));
  const refused = await api.get("/v2/ranks");
  expect(refused.status).toBe(401);
  expect(refused.body.error.type).toBe("AuthenticationException");
  expect((await api.graphql("{ ranks { totalCount } }")).body.errors[0].extensions.code).toBe("UNAUTHENTICATED");
});

test("a key records when it was last used, and keys:list shows it without showing the key", async () => {
  const created = await createApiKey(h.db.store, { account: "listed", scopes: "view:rank", name: "reporting" });
  expect((await h.db.prisma.apiKey.findUniqueOrThrow({ where: { id: created.id } })).lastUsedAt).toBeNull();
  const before = Date.now();
  await client(h, created.key).get("/v2/ranks");
  const used = (await h.db.prisma.apiKey.findUniqueOrThrow({ where: { id: created.id } })).lastUsedAt!;
  expect(used.getTime()).toBeGreaterThanOrEqual(before - 1000);

  const { stdout } = await cli("keys:list", "--account", "listed");
  const line = stdout.split("\n").find((l) => l.startsWith(`${created.id}\t`))!;
  expect(line).toContain("reporting");
  expect(line).toContain("view:rank");
  expect(line).toContain(used.toISOString());
  expect(stdout).not.toContain(created.key);
  expect(stdout).not.toContain(hashKey(created.key));
});

test("an expired key is refused with a 401 that says when it expired, on REST and GraphQL; one expiring later works until then", async () => {
  const expired = await createApiKey(h.db.store, {
    account: "alpha",
    scopes: "*",
    expiresAt: new Date(Date.now() + 3_600_000),
  });
  const expiredAt = new Date(Date.now() - 60_000);
  await h.db.prisma.apiKey.update({ where: { id: expired.id }, data: { expiresAt: expiredAt } });
  const rest = await client(h, expired.key).get("/v2/ranks");
  expect(rest.status).toBe(401);
  expect(rest.body.error.type).toBe("AuthenticationException");
  expect(rest.body.error.message).toBe(
    `The API key expired on ${expiredAt.toISOString()}. Ask an administrator for a new key.`,
  );
  const graphql = await client(h, expired.key).graphql("{ ranks { nodes { id } } }");
  expect(graphql.body.errors[0].message).toContain(`expired on ${expiredAt.toISOString()}`);
  expect(graphql.body.errors[0].extensions.code).toBe("UNAUTHENTICATED");
  // An unknown key still gets PERSCOM's generic message: nothing is said about keys that never existed.
  const unknown = await client(h, "mst_nope").get("/v2/ranks");
  expect(unknown.body.error.message).toMatch(/^You are not authenticated/);
  const later = await createApiKey(h.db.store, {
    account: "alpha",
    scopes: "*",
    expiresAt: new Date(Date.now() + 3_600_000),
  });
  expect((await client(h, later.key).get("/v2/ranks")).status).toBe(200);
});

test("keys:revoke with no or an unknown id is one line and a non-zero exit", async () => {
  for (const args of [["keys:revoke"], ["keys:revoke", "99999"]]) {
    const failed = await cli(...args).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr.trim().split("\n")).toHaveLength(1);
  }
});

test("requests arriving together with a key last used over a minute ago record the use once", async () => {
  const created = await createApiKey(h.db.store, { account: "alpha", scopes: "*" });
  await h.db.prisma.apiKey.update({ where: { id: created.id }, data: { lastUsedAt: new Date(Date.now() - 120_000) } });
  const updates: string[] = [];
  const listener = (e: { query: string }) =>
    void (/^UPDATE\b.*ApiKey.*lastUsedAt/i.test(e.query) && updates.push(e.query));
  (h.db.prisma as unknown as { $on(event: "query", listener: (e: { query: string }) => void): void }).$on(
    "query",
    listener,
  );
  const before = Date.now();
  const answers = await Promise.all(Array.from({ length: 32 }, () => client(h, created.key).get("/v2/ranks")));
  expect(answers.map((a) => a.status)).toEqual(Array(32).fill(200));
  expect(updates).toHaveLength(1);
  const used = (await h.db.prisma.apiKey.findUniqueOrThrow({ where: { id: created.id } })).lastUsedAt!;
  expect(used.getTime()).toBeGreaterThanOrEqual(before - 1000);
});

test("keys:create --publishable refuses a scope a public page may not hold, a user, and missing or bad origins", async () => {
  const refusals: Array<[string[], RegExp]> = [
    [["--scopes", "view:user,update:user", "--origins", "https://unit.example"], /cannot hold "update:user"/],
    [["--scopes", "*", "--origins", "https://unit.example"], /cannot hold "\*"/],
    [["--scopes", "view:user"], /needs the origins/],
    [["--scopes", "view:user", "--origins", "https://unit.example/roster"], /is not an origin/],
    [["--scopes", "view:user", "--origins", "https://unit.example", "--user", "1"], /has no user 1|acts as no user/],
  ];
  const before = await h.db.prisma.apiKey.count();
  for (const [args, message] of refusals) {
    const failed = await cli("keys:create", "--account", "alpha", "--publishable", ...args).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code, args.join(" ")).toBe(1);
    expect(failed?.stderr.trim().split("\n")).toHaveLength(1);
    expect(failed?.stderr).toMatch(message);
  }
  expect(await h.db.prisma.apiKey.count()).toBe(before);
  expect(
    (await cli("keys:create", "--account", "alpha", "--scopes", "view:user", "--origins", "https://a.example").then(
      () => null,
      (error: { stderr: string }) => error.stderr,
    )) ?? "",
  ).toContain("--publishable");

  const made = await cli(
    "keys:create",
    ...["--account", "alpha", "--publishable", "--scopes", "view:user,create:submission"],
    ...["--origins", "https://unit.example,https://www.unit.example"],
  );
  const key = made.stdout.trim().split("\n").at(-1)!;
  expect(key).toMatch(/^mpk_/);
  const row = await h.db.prisma.apiKey.findUniqueOrThrow({ where: { hash: hashKey(key) } });
  expect({ publishable: row.publishable, scopes: row.scopes, origins: row.allowedOrigins }).toEqual({
    publishable: true,
    scopes: ["view:user", "create:submission"],
    origins: ["https://unit.example", "https://www.unit.example"],
  });
  const listed = await cli("keys:list", "--account", "alpha");
  expect(listed.stdout).toContain(row.prefix);
  expect(listed.stdout).not.toContain(key);
  const fromPage = client(h, key, { origin: "https://www.unit.example" });
  expect((await fromPage.get("/v2/users")).status).toBe(200);
  expect((await client(h, key, { origin: "https://evil.example" }).get("/v2/users")).status).toBe(403);
});
