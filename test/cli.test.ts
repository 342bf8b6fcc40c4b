import { afterAll, beforeAll, expect, test } from "vitest";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { client, startHarness, type Harness } from "./harness.ts";
import { cliArgs } from "./support/built.ts";

const run = promisify(execFile);
let h: Harness;

const cli = (env: NodeJS.ProcessEnv, ...args: string[]) =>
  run(process.execPath, [...cliArgs, ...args], { env: { ...process.env, ...env } });

beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

test("keys:create prints the key alone on the last line, and a running server accepts it at once", async () => {
  const env = { DATABASE_URL: h.config.databaseUrl };
  const { stdout } = await cli(env, "keys:create", "--account", "cli-org", "--scopes", "view:rank,create:rank");
  const key = stdout.trim().split("\n").at(-1)!;
  expect(key).toMatch(/^mst_[A-Za-z0-9_-]{40,}$/);
  const api = client(h, key);
  expect((await api.post("/v2/ranks", { name: "Private" })).status).toBe(200);
  expect((await api.get("/v2/ranks")).body.data.map((r: any) => r.name)).toEqual(["Private"]);
  expect((await api.delete("/v2/ranks/1")).status).toBe(403);
  const stored = await h.db.prisma.apiKey.findMany();
  expect(stored.some((k) => k.hash.includes(key) || k.prefix === key)).toBe(false);
});

test("maintenance on answers 503 to the running server until it is switched off", async () => {
  const env = { DATABASE_URL: h.config.databaseUrl };
  const api = client(h, await h.key());
  await cli(env, "maintenance", "on");
  expect((await api.get("/v2/ranks")).status).toBe(503);
  expect((await client(h, null).graphql("{ ranks { totalCount } }")).status).toBe(503);
  await cli(env, "maintenance", "off");
  expect((await api.get("/v2/ranks")).status).toBe(200);
});

test("accounts:subscription sets the state the 402 check reads; bad input is one line and a non-zero exit", async () => {
  const env = { DATABASE_URL: h.config.databaseUrl };
  const { stdout } = await cli(env, "accounts:subscription", "--account", "cli-org", "--status", "canceled");
  expect(stdout.trim()).toBe("Account cli-org: subscription canceled");
  expect((await h.db.prisma.account.findUnique({ where: { name: "cli-org" } }))?.subscriptionStatus).toBe("canceled");
  const failed = await cli(env, "keys:create", "--account", "x", "--scopes", "not a scope!").catch((e) => e);
  expect(failed.code).toBe(1);
  expect(failed.stderr.trim().split("\n")).toHaveLength(1);
  expect(failed.stderr).toMatch(/^error: /);
});

test("accounts:create and accounts:list: id, name, subscription, key count; a second create is an error", async () => {
  const env = { DATABASE_URL: h.config.databaseUrl };
  const { stdout } = await cli(env, "accounts:create", "--name", "listed-org");
  expect(stdout.trim()).toMatch(/^Created account \d+ "listed-org"$/);
  await cli(env, "keys:create", "--account", "listed-org", "--scopes", "*");
  const again = await cli(env, "accounts:create", "--name", "listed-org").catch((e) => e);
  expect(again.code).toBe(1);
  expect(again.stderr.trim()).toBe('error: Account "listed-org" already exists');
  const rows = (await cli(env, "accounts:list")).stdout.trim().split("\n").map((l) => l.split("\t"));
  expect(rows[0]).toEqual(["id", "name", "subscription", "keys"]);
  expect(rows.find((r) => r[1] === "listed-org")?.slice(2)).toEqual(["active", "1"]);
});

test("seed writes the same organisation for the same seed, reports progress on stderr and counts on stdout", { timeout: 120_000 }, async () => {
  const env = { DATABASE_URL: h.config.databaseUrl };
  const first = await cli(env, "seed", "--account", "seed-a", "--users", "40", "--seed", "7");
  expect(first.stderr).toMatch(/Seeding: 40\/40 \(100%\)/);
  expect(first.stdout).toMatch(/^Seeded account "seed-a"/);
  expect(first.stdout).toMatch(/^\s+users\s+40$/m);
  expect(first.stdout).toMatch(/^\s+total\s+\d+ rows in [\d.]+ s$/m);
  await cli(env, "seed", "--account", "seed-b", "--users", "40", "--seed", "7");
  await cli(env, "seed", "--account", "seed-c", "--users", "40", "--seed", "8");
  const snapshot = async (name: string) => {
    const account = await h.db.prisma.account.findUniqueOrThrow({ where: { name } });
    const users = await h.db.prisma.user.findMany({
      where: { accountId: account.id }, orderBy: { id: "asc" },
      select: { name: true, email: true, createdAt: true, rank: { select: { name: true } }, unit: { select: { name: true } }, _count: { select: { rankRecords: true, awardRecords: true, qualificationRecords: true } } },
    });
    return users;
  };
  const a = await snapshot("seed-a");
  expect(a).toHaveLength(40);
  expect(await snapshot("seed-b")).toEqual(a);
  expect(await snapshot("seed-c")).not.toEqual(a);
  // The seeded organisation is served by the API like any other.
  const api = client(h, (await cli(env, "keys:create", "--account", "seed-a", "--scopes", "*")).stdout.trim().split("\n").at(-1)!);
  const records = await api.get(`/v2/users/${(await api.get("/v2/users?limit=1")).body.data[0].id}/rank-records?include=rank,author`);
  expect(records.status).toBe(200);
  expect(records.body.data.length).toBeGreaterThan(0);
  expect(records.body.data[0].rank.name).toBeTruthy();
  const forms = await api.get("/v2/forms?include=fields,submissions");
  expect(forms.body.data[0].fields.length).toBeGreaterThan(0);
  expect(forms.body.data[0].submissions.length).toBeGreaterThan(0);

  const twice = await cli(env, "seed", "--account", "seed-a").catch((e) => e);
  expect(twice.code).toBe(1);
  expect(twice.stderr.trim()).toBe('error: Account "seed-a" already has data; seed a new account');
  const bad = await cli(env, "seed", "--account", "x", "--users", "lots").catch((e) => e);
  expect([bad.code, bad.stderr.trim()]).toEqual([1, "error: --users takes a positive whole number"]);
});

test("--help on every command prints its usage and exits 0", { timeout: 120_000 }, async () => {
  const { stdout } = await cli({}, "--help");
  const names = [...stdout.matchAll(/^ {2}(\S+)/gm)].map((m) => m[1]!);
  expect(names).toEqual(expect.arrayContaining(["accounts:create", "accounts:list", "seed", "keys:create", "keys:list", "keys:revoke"]));
  await Promise.all(names.map(async (name) => {
    const help = await cli({}, name, "--help");
    expect(help.stdout).toMatch(new RegExp(`Usage: npm run cli -- ${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
  }));
});
