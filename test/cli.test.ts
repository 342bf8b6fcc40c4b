import { afterAll, beforeAll, expect, test } from "vitest";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { client, startHarness, type Harness } from "./harness.ts";

const run = promisify(execFile);
let h: Harness;

const cli = (env: NodeJS.ProcessEnv, ...args: string[]) =>
  run(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], { env: { ...process.env, ...env } });

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
