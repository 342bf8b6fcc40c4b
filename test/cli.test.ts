import { afterAll, beforeAll, expect, test } from "vitest";
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { client, startHarness, type Harness } from "./harness.ts";
import { cliArgs } from "./support/built.ts";
import { createApiKey } from "../src/auth/accounts.ts";
import { operations } from "../src/resources/operations.ts";

const run = promisify(execFile);
let h: Harness;

const cli = (env: NodeJS.ProcessEnv, ...args: string[]) =>
  run(process.execPath, [...cliArgs, ...args], { env: { ...process.env, ...env } });

/** A run that must fail: its exit code and its stderr, which must be a single line. */
async function refused(...args: string[]): Promise<{ code: number; line: string }> {
  const failed = await cli({ DATABASE_URL: h.config.databaseUrl }, ...args).then(
    (ok) => {
      throw new Error(`${args.join(" ")} succeeded: ${ok.stdout}`);
    },
    (error: { code: number; stderr: string }) => error,
  );
  expect(failed.stderr.trimEnd().split("\n"), failed.stderr).toHaveLength(1);
  return { code: failed.code, line: failed.stderr.trim() };
}

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
  expect((await api.get("/v2/ranks")).body.data.map((r: { name: string }) => r.name)).toEqual(["Private"]);
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

test("accounts:create and accounts:list: id, name, subscription, key count, slug; a second create is an error", async () => {
  const env = { DATABASE_URL: h.config.databaseUrl };
  const { stdout } = await cli(env, "accounts:create", "--name", "Listed Org");
  expect(stdout.trim()).toMatch(/^Created account \d+ "Listed Org" \(slug listed-org\)$/);
  await cli(env, "keys:create", "--account", "Listed Org", "--scopes", "*");
  const again = await cli(env, "accounts:create", "--name", "Listed Org").catch((e) => e);
  expect(again.code).toBe(1);
  expect(again.stderr.trim()).toBe('error: Account "Listed Org" already exists');
  // The same name folded again is numbered; a slug given is kept.
  expect((await cli(env, "accounts:create", "--name", "listed org!")).stdout).toMatch(/\(slug listed-org-2\)/);
  expect((await cli(env, "accounts:create", "--name", "Third", "--slug", "third-unit")).stdout).toMatch(
    /\(slug third-unit\)/,
  );
  const rows = async () =>
    (await cli(env, "accounts:list")).stdout
      .trim()
      .split("\n")
      .map((l) => l.split("\t"));
  expect((await rows())[0]).toEqual(["id", "name", "subscription", "keys", "slug"]);
  expect((await rows()).find((r) => r[1] === "Listed Org")?.slice(2)).toEqual(["active", "1", "listed-org"]);
  expect((await cli(env, "accounts:slug", "Listed Org", "the-listed")).stdout).toMatch(/\/v2\/public\/the-listed\//);
  expect((await rows()).find((r) => r[1] === "Listed Org")?.[4]).toBe("the-listed");
  const taken = await cli(env, "accounts:slug", "Third", "the-listed").catch((e) => e);
  expect(taken.stderr.trim()).toBe('error: The slug "the-listed" is taken by account "Listed Org"');
  const malformed = await cli(env, "accounts:slug", "Third", "Not A Slug").catch((e) => e);
  expect(malformed.code).toBe(1);
  expect(malformed.stderr).toMatch(/is not a slug/);
  expect((await rows()).find((r) => r[1] === "Third")?.[4]).toBe("third-unit");
});

test(
  "seed writes the same organisation for the same seed, reports progress on stderr and counts on stdout",
  { timeout: 120_000 },
  async () => {
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
        where: { accountId: account.id },
        orderBy: { id: "asc" },
        select: {
          name: true,
          email: true,
          createdAt: true,
          rank: { select: { name: true } },
          unit: { select: { name: true } },
          _count: { select: { rankRecords: true, awardRecords: true, qualificationRecords: true } },
        },
      });
      return users;
    };
    const a = await snapshot("seed-a");
    expect(a).toHaveLength(40);
    expect(await snapshot("seed-b")).toEqual(a);
    expect(await snapshot("seed-c")).not.toEqual(a);
    // The seeded organisation is served by the API like any other.
    const api = client(
      h,
      (await cli(env, "keys:create", "--account", "seed-a", "--scopes", "*")).stdout.trim().split("\n").at(-1)!,
    );
    const records = await api.get(
      `/v2/users/${(await api.get("/v2/users?limit=1")).body.data[0].id}/rank-records?include=rank,author`,
    );
    expect(records.status).toBe(200);
    expect(records.body.data.length).toBeGreaterThan(0);
    expect(records.body.data[0].rank.name).toBeTruthy();
    const forms = await api.get("/v2/forms?include=fields,submissions");
    expect(forms.body.data[0].fields.length).toBeGreaterThan(0);
    expect(forms.body.data[0].submissions.length).toBeGreaterThan(0);

    const twice = await cli(env, "seed", "--account", "seed-a").catch((e) => e);
    expect(twice.code).toBe(1);
    expect(twice.stderr.trim()).toBe('error: Account "seed-a" already has data; seed a new account');
    const bad = await refused("seed", "--account", "x", "--users", "lots");
    expect(bad).toEqual({
      code: 1,
      line: "error: option '--users <count>' argument 'lots' is invalid. Expected a positive integer.",
    });
  },
);

test("--help on every command prints its usage and exits 0", { timeout: 120_000 }, async () => {
  const { stdout } = await cli({}, "--help");
  const names = [...stdout.split("Commands:")[1].matchAll(/^ {2}([a-z][\w:-]*)/gm)]
    .map((m) => m[1])
    .filter((name) => name !== "help");
  expect(names).toEqual(
    expect.arrayContaining(["accounts:create", "accounts:list", "seed", "keys:create", "keys:list", "keys:revoke"]),
  );
  await Promise.all(
    names.map(async (name) => {
      const help = await cli({}, name, "--help");
      expect(help.stdout).toMatch(new RegExp(`Usage: npm run cli -- ${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
    }),
  );
});

test("an unknown command or option is one line with a suggestion, exit 1", async () => {
  expect(await refused("keys:creat", "--account", "a")).toEqual({
    code: 1,
    line: "error: unknown command 'keys:creat' (Did you mean keys:create?)",
  });
  expect(await refused("keys:create", "--acount", "a", "--scopes", "*")).toEqual({
    code: 1,
    line: "error: unknown option '--acount' (Did you mean --account?)",
  });
  expect(await refused("keys:create", "--scopes", "*")).toEqual({
    code: 1,
    line: "error: required option '--account <name>' not specified",
  });
});

test("keys:create --help lists every scope a key can hold", async () => {
  const { stdout } = await cli({}, "keys:create", "--help");
  const listed = new Set(stdout.split(/\s+/));
  const scopes = [...new Set(operations.flatMap((op) => op.scopes))];
  expect(scopes.length).toBeGreaterThan(100);
  expect(scopes.filter((scope) => !listed.has(scope))).toEqual([]);
});

test("numbers are checked: a negative or non-numeric count or id says which option and value are wrong", async () => {
  const [users, seed, id] = await Promise.all([
    refused("seed", "--account", "numbers", "--users", "-5"),
    refused("seed", "--account", "numbers", "--seed", "1.5"),
    refused("keys:revoke", "first"),
  ]);
  expect(users).toEqual({
    code: 1,
    line: "error: option '--users <count>' argument '-5' is invalid. Expected a positive integer.",
  });
  expect(seed).toEqual({
    code: 1,
    line: "error: option '--seed <number>' argument '1.5' is invalid. Expected an integer.",
  });
  expect(id).toEqual({
    code: 1,
    line: "error: command-argument value 'first' is invalid for argument 'id'. Expected a positive integer.",
  });
  expect(await h.db.prisma.account.findUnique({ where: { name: "numbers" } })).toBeNull();
});

test("a reader that stops early (schema:print | head) ends the output quietly: exit 0, nothing on stderr", async () => {
  const firstChunkThenClose = (command: string) =>
    new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [...cliArgs, command], { stdio: ["ignore", "pipe", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      child.stdout.once("data", () => child.stdout.destroy());
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stderr }));
    });
  // The OpenAPI document (megabytes) is far larger than a pipe's buffer, so the writer meets the closed pipe.
  expect(await firstChunkThenClose("openapi:print")).toEqual({ code: 0, stderr: "" });
  expect(await firstChunkThenClose("schema:print")).toEqual({ code: 0, stderr: "" });
});

test("keys:create --user takes only a user of the key's own account; the refusal creates nothing", async () => {
  const env = { DATABASE_URL: h.config.databaseUrl };
  const [alpha, bravo] = [client(h, await h.key("user-alpha")), client(h, await h.key("user-bravo"))];
  const own = (await alpha.post("/v2/users", { name: "Alpha Admin", email: "admin@alpha.test" })).body.data
    .id as number;
  const foreign = (await bravo.post("/v2/users", { name: "Bravo Secret", email: "secret@bravo.test" })).body.data
    .id as number;
  const keysBefore = await h.db.prisma.apiKey.count();

  expect(await refused("keys:create", "--account", "user-alpha", "--scopes", "*", "--user", String(foreign))).toEqual({
    code: 1,
    line: `error: Account "user-alpha" has no user ${foreign}: a key can act only as a user of its own account`,
  });
  expect(await refused("keys:create", "--account", "user-alpha", "--scopes", "*", "--user", "999999")).toEqual({
    code: 1,
    line: `error: Account "user-alpha" has no user 999999: a key can act only as a user of its own account`,
  });
  // A new account has no users: refusing must not leave the account behind.
  expect((await refused("keys:create", "--account", "user-new", "--scopes", "*", "--user", String(own))).code).toBe(1);
  expect(await h.db.prisma.account.findUnique({ where: { name: "user-new" } })).toBeNull();
  // Every caller of createApiKey is held to it, not only the CLI.
  await expect(createApiKey(h.db.store, { account: "user-alpha", scopes: "*", userId: foreign })).rejects.toThrow(
    /has no user/,
  );
  expect(await h.db.prisma.apiKey.count()).toBe(keysBefore);

  const { stdout } = await cli(env, "keys:create", "--account", "user-alpha", "--scopes", "*", "--user", String(own));
  const mine = client(h, stdout.trim().split("\n").at(-1)!);
  const rank = (await mine.post("/v2/ranks", { name: "Private" })).body.data.id as number;
  const record = await mine.post(`/v2/users/${own}/rank-records`, { rank_id: rank, type: 0, text: "Promoted" });
  expect(record.status, JSON.stringify(record.body)).toBe(200);
  const authored = await mine.get(`/v2/users/${own}/rank-records?include=author`);
  expect(authored.body.data.map((r: { author?: { name: string } | null }) => r.author?.name)).toEqual(["Alpha Admin"]);
});

test("accounts:subscription only reads without --status; an unknown account is an error and is not created", async () => {
  const env = { DATABASE_URL: h.config.databaseUrl };
  expect(await refused("accounts:subscription", "--account", "nobody")).toEqual({
    code: 1,
    line: 'error: No account named "nobody"',
  });
  expect(await refused("accounts:subscription", "--account", "nobody", "--status", "canceled")).toEqual({
    code: 1,
    line: 'error: No account named "nobody"',
  });
  expect(await h.db.prisma.account.findUnique({ where: { name: "nobody" } })).toBeNull();
  await cli(env, "accounts:create", "--name", "reader");
  expect((await cli(env, "accounts:subscription", "--account", "reader")).stdout.trim()).toBe(
    "Account reader: subscription active",
  );
  expect((await refused("accounts:subscription", "--account", "reader", "--status", "paused")).line).toBe(
    "error: option '--status <state>' argument 'paused' is invalid. Allowed choices are active, trialing, past_due, incomplete, incomplete_expired, canceled, unpaid, none.",
  );
});

test("keys:create checks scope names against the registry, naming the closest; * is accepted", async () => {
  const env = { DATABASE_URL: h.config.databaseUrl };
  const [typo, unknown] = await Promise.all([
    refused("keys:create", "--account", "scoped", "--scopes", "view:rank,view:ranks"),
    refused("keys:create", "--account", "scoped", "--scopes", "read:everything"),
  ]);
  expect(typo).toEqual({
    code: 1,
    line: 'error: Unknown scope "view:ranks": did you mean view:rank? (keys:create --help lists them all)',
  });
  expect(unknown.code).toBe(1);
  expect(unknown.line).toMatch(
    /^error: Unknown scope "read:everything": did you mean [a-z]+:[a-z]+( or [a-z]+:[a-z]+)*\? /,
  );
  expect(await h.db.prisma.account.findUnique({ where: { name: "scoped" } })).toBeNull();
  const all = await cli(env, "keys:create", "--account", "scoped", "--scopes", "*");
  expect(all.stdout.trim().split("\n").at(-1)).toMatch(/^mst_/);
});

test("keys:create refuses an expiry in the past or one that is not a date", async () => {
  const [past, nonsense, impossible] = await Promise.all([
    refused("keys:create", "--account", "expiring", "--scopes", "*", "--expires", "2020-01-01"),
    refused("keys:create", "--account", "expiring", "--scopes", "*", "--expires", "next week"),
    refused("keys:create", "--account", "expiring", "--scopes", "*", "--expires", "2099-02-30"),
  ]);
  expect(past).toEqual({
    code: 1,
    line: "error: option '--expires <date>' argument '2020-01-01' is invalid. That is in the past: a key must expire later.",
  });
  const notADate = (value: string) =>
    `error: option '--expires <date>' argument '${value}' is invalid. Expected an ISO 8601 date such as 2030-01-31 or 2030-01-31T12:00:00Z.`;
  expect(nonsense).toEqual({ code: 1, line: notADate("next week") });
  expect(impossible).toEqual({ code: 1, line: notADate("2099-02-30") });
  expect(await h.db.prisma.account.findUnique({ where: { name: "expiring" } })).toBeNull();
});

test("keys:list of an unknown account is an error; revoking a key twice says it already was", async () => {
  const env = { DATABASE_URL: h.config.databaseUrl };
  expect(await refused("keys:list", "--account", "ghost")).toEqual({
    code: 1,
    line: 'error: No account named "ghost"',
  });
  const created = await cli(env, "keys:create", "--account", "revoking", "--scopes", "view:rank");
  const id = /Created key (\d+)/.exec(created.stdout)![1];
  expect((await cli(env, "keys:revoke", id)).stdout.trim()).toMatch(
    new RegExp(`^Revoked key ${id} \\(mst_.{8}…\\) of account revoking$`),
  );
  const revokedAt = (await h.db.prisma.apiKey.findUniqueOrThrow({ where: { id: Number(id) } })).revokedAt!;
  expect(await refused("keys:revoke", id)).toEqual({
    code: 1,
    line: `error: Key ${id} was already revoked at ${revokedAt.toISOString()}`,
  });
  expect((await h.db.prisma.apiKey.findUniqueOrThrow({ where: { id: Number(id) } })).revokedAt).toEqual(revokedAt);
  const rows = (await cli(env, "keys:list", "--account", "revoking")).stdout
    .trim()
    .split("\n")
    .map((l) => l.split("\t"));
  expect(rows.map((r) => r[0])).toEqual(["id", id]);
  expect(rows[1][8]).toBe(revokedAt.toISOString());
});
