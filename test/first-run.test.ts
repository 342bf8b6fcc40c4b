import { afterEach, expect, test } from "vitest";
import { openDatabase } from "../src/db/prisma.ts";
import { demoUsers } from "../src/http/first-run.ts";
import { spawnServer, type ServerProcess } from "./support/spawn-server.ts";
import { migrate } from "../src/db/migrate.ts";
import { createApiKey } from "../src/auth/accounts.ts";

const started: ServerProcess[] = [];
afterEach(async () => {
  for (const server of started.splice(0)) await server.stop();
});

const start = async (env: Record<string, string> = {}, prepare?: (url: string) => Promise<void>) => {
  const server = await spawnServer(env, prepare);
  started.push(server);
  return server;
};

test(
  "npm start on an empty database seeds a demo organisation and prints a key and URLs that work",
  { timeout: 90_000 },
  async () => {
    const server = await start({ NODE_ENV: "development" });
    const out = server.output();
    const key = /API key \(scope \*, shown once\): (mst_\S+)/.exec(out)?.[1];
    expect(key, out).toBeDefined();
    const graphiql = /GraphiQL:\s+(\S+)/.exec(out)![1];
    const docs = /API reference:\s+(\S+)/.exec(out)![1];
    expect(graphiql).toBe(`${server.base}/graphql`);
    expect(docs).toBe(`${server.base}/docs`);
    const auth = { authorization: `Bearer ${key}`, accept: "application/json" };

    const users = await fetch(`${server.base}/v2/users?include=rank,unit&limit=100`, { headers: auth });
    expect(users.status).toBe(200);
    const body = await users.json();
    expect(body.data).toHaveLength(demoUsers);
    expect(
      body.data.every(
        (u: { rank?: { name: string } | null; unit?: { name: string } | null }) => u.rank?.name && u.unit?.name,
      ),
    ).toBe(true);

    const graphql = await fetch(graphiql, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({
        query: "{ ranks(first: 100) { totalCount } rankRecords(first: 1) { totalCount nodes { rowId } } }",
      }),
    });
    const result = await graphql.json();
    expect(result.errors).toBeUndefined();
    expect(result.data.ranks.totalCount).toBeGreaterThan(5);
    expect(result.data.rankRecords.totalCount).toBeGreaterThanOrEqual(demoUsers);
    expect(result.data.rankRecords.nodes).toHaveLength(1);
    // GraphiQL is served to a browser at the printed URL.
    const page = await fetch(graphiql, { headers: { accept: "text/html" } });
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    expect(await page.text()).toMatch(/graphiql/i);
  },
);

test(
  "with NODE_ENV=production, or when an account exists, nothing is seeded and no key is printed",
  { timeout: 90_000 },
  async () => {
    const [production, existing] = await Promise.all([
      start({ NODE_ENV: "production" }),
      start({ NODE_ENV: "development" }, async (url) => {
        await migrate(url);
        const db = await openDatabase(url);
        await createApiKey(db.store, { account: "mine", scopes: "*" });
        await db.close();
      }),
    ]);
    expect(production.output()).not.toMatch(/First run|API key|mst_/);
    expect(production.output()).toContain(
      "No account yet: create one and its first key with: npm run cli -- keys:create",
    );
    const db = await openDatabase(production.databaseUrl);
    try {
      expect(await db.prisma.account.count()).toBe(0);
      expect(await db.prisma.user.count()).toBe(0);
    } finally {
      await db.close();
    }
    expect(existing.output()).not.toMatch(/First run|API key|No account yet/);
  },
);
