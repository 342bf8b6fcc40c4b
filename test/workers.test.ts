import { afterAll, beforeAll, expect, test } from "vitest";
import { spawnServer, type ServerProcess } from "./support/spawn-server.ts";

// `WORKERS=2 npm start`: two processes serve one port and one database; each answers, SIGTERM stops them all.
let server: ServerProcess;

beforeAll(async () => {
  server = await spawnServer({ WORKERS: "2", NODE_ENV: "production" });
}, 120_000);
afterAll(() => server?.stop());

test("two workers listen, share the database, and stop together on SIGTERM", async () => {
  const deadline = Date.now() + 60_000;
  while ((server.output().match(/listening on .*\(worker \d+\)/g) ?? []).length < 2 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const pids = new Set([...server.output().matchAll(/\(worker (\d+)\)/g)].map((m) => m[1]));
  expect(pids.size).toBe(2);
  const { createApiKey } = await import("../src/auth/accounts.ts");
  const { openDatabase } = await import("../src/db/prisma.ts");
  const db = await openDatabase(server.databaseUrl);
  const { key } = await createApiKey(db.prisma, { account: "workers", scopes: "*" });
  await db.close();
  const call = (method: string, body?: unknown) =>
    fetch(`${server.base}/v2/ranks`, {
      method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json", connection: "close" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const created = await Promise.all(Array.from({ length: 10 }, (_, i) => call("POST", { name: `Rank ${i}` })));
  expect(created.map((r) => r.status)).toEqual(Array(10).fill(200));
  const listed = await (await call("GET")).json();
  expect(listed.meta.total).toBe(10);
  const exited = new Promise<number | null>((resolve) => server.child.on("exit", (code) => resolve(code)));
  server.child.kill("SIGTERM");
  expect(await exited).toBe(0);
}, 120_000);
