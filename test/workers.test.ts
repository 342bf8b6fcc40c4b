import { afterAll, beforeAll, expect, test } from "vitest";
import { spawnServer, type ServerProcess } from "./support/spawn-server.ts";

// `WORKERS=2 npm start` without Redis: two processes serve one port and one database; they count requests and rate
// limits together (through the primary), and SIGTERM stops them all. The primary hands connections to the workers in
// turn, so requests sent one connection each alternate between the two.
const LIMIT = 60;
let server: ServerProcess;

beforeAll(async () => {
  server = await spawnServer({ WORKERS: "2", NODE_ENV: "production", RATE_LIMIT_PER_MINUTE: String(LIMIT) });
}, 120_000);
afterAll(() => server?.stop());

async function newKey(account: string) {
  const { createApiKey } = await import("../src/auth/accounts.ts");
  const { openDatabase } = await import("../src/db/prisma.ts");
  const db = await openDatabase(server.databaseUrl);
  const { key } = await createApiKey(db.store, { account, scopes: "*" });
  await db.close();
  return key;
}

/** One request on a connection of its own: the next one goes to the other worker. */
const call = (key: string, method: string, path: string, body?: unknown) =>
  fetch(`${server.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", connection: "close" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** The sum of a counter's samples whose labels include all of `labels`. */
function total(text: string, name: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    const sample = new RegExp(`^${name}\\{(.*)\\} (\\S+)$`).exec(line);
    if (sample && Object.entries(labels).every(([k, v]) => sample[1].includes(`${k}="${v}"`))) sum += Number(sample[2]);
  }
  return sum;
}

test("both workers serve", () => {
  const pids = new Set([...server.output().matchAll(/Muster worker (\d+) ready/g)].map((m) => m[1]));
  expect(pids.size).toBe(2);
});

test("/metrics counts the requests of both workers in one answer", async () => {
  const key = await newKey("metrics");
  const answered = await Promise.all(Array.from({ length: 10 }, () => call(key, "GET", "/v2/ranks/999999")));
  expect(answered.map((r) => r.status)).toEqual(Array(10).fill(404));
  for (let i = 0; i < 2; i++) {
    const metrics = await fetch(`${server.base}/metrics`, { headers: { connection: "close" } });
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(total(text, "http_requests_total", { route: "/v2/ranks/{rank}", method: "GET", status: "404" })).toBe(10);
    expect(total(text, "graphql_operations_total", { operation: "Rest_rank" })).toBe(10);
  }
});

test(`RATE_LIMIT_PER_MINUTE=${LIMIT} is one allowance for both workers: ${LIMIT} answered, then 429`, async () => {
  const key = await newKey("limited");
  const statuses: number[] = [];
  for (let i = 0; i < LIMIT + 4; i++) statuses.push((await call(key, "GET", "/v2/ranks")).status);
  expect(statuses).toEqual([...Array(LIMIT).fill(200), ...Array(4).fill(429)]);
});

test("the workers share the database, and stop together on SIGTERM", async () => {
  const key = await newKey("workers");
  const created = await Promise.all(
    Array.from({ length: 10 }, (_, i) => call(key, "POST", "/v2/ranks", { name: `Rank ${i}` })),
  );
  expect(created.map((r) => r.status)).toEqual(Array(10).fill(200));
  const listed = await (await call(key, "GET", "/v2/ranks")).json();
  expect(listed.meta.total).toBe(10);
  const exited = new Promise<number | null>((resolve) => server.child.on("exit", (code) => resolve(code)));
  server.child.kill("SIGTERM");
  expect(await exited).toBe(0);
}, 120_000);
