import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { createApiKey } from "../src/auth/accounts.ts";
import { migrate } from "../src/db/migrate.ts";
import { openDatabase, type Database } from "../src/db/prisma.ts";
import { createTestDatabase, testProvider } from "./harness.ts";
import { requireRedis, testRedisUrl } from "./services.ts";
import { spawnServer, type ServerProcess } from "./support/spawn-server.ts";
import { startReceiver, type Receiver } from "./support/webhook-receiver.ts";

// Webhook delivery by server processes (the built server, as `npm start` runs it) sharing one database and one Redis:
// on the PostgreSQL pass, the production set-up (two instances, FOR UPDATE SKIP LOCKED claims); on the SQLite pass,
// two processes on one file.
const REDIS_URL = testRedisUrl;
const TIMEOUT_MS = 1000;

const redis = await requireRedis();

redis.describe(`webhook delivery by two instances on one ${testProvider} database and Redis`, () => {
  let dir: string;
  let database: { url: string; drop(): Promise<void> };
  let db: Database;
  const servers: ServerProcess[] = [];
  const receivers: Receiver[] = [];

  /** An instance on the shared database (production: no demo data); WEBHOOK_TIMEOUT_MS=1000 makes its leases 5 s. */
  async function instance(): Promise<ServerProcess> {
    const server = await spawnServer({
      DATABASE_URL: database.url,
      REDIS_URL,
      REDIS_PREFIX: `muster-test:${path.basename(dir)}`,
      WEBHOOKS_ALLOW_PRIVATE: "true",
      WEBHOOK_POLL_MS: "100",
      WEBHOOK_RETRY_BASE_MS: "50",
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      RATE_LIMIT_PER_MINUTE: "100000",
      NODE_ENV: "production",
    });
    servers.push(server);
    return server;
  }

  async function receiver(): Promise<Receiver> {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  }

  async function account(name: string) {
    return createApiKey(db.store, { account: name, scopes: "*" });
  }

  const post = async (server: ServerProcess, key: string, path: string, body: unknown) => {
    const response = await fetch(`${server.base}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    return (await response.json()).data as { id: number };
  };
  const webhook = (server: ServerProcess, key: string, url: string) =>
    post(server, key, "/v2/webhooks", { url, events: ["*"] });
  const write = (server: ServerProcess, key: string, name: string) =>
    post(server, key, "/v2/ranks", { name, abbreviation: name.slice(0, 3) });

  /** The account's events in the order webhooks get them: (txid, id). */
  const eventOrder = async (accountId: number) =>
    (await db.prisma.changeEvent.findMany({ where: { accountId }, orderBy: [{ txid: "asc" }, { id: "asc" }] })).map(
      (e) => e.id,
    );

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "muster-webhooks-"));
    database = await createTestDatabase(dir);
    await migrate(database.url);
    db = await openDatabase(database.url);
  });

  afterAll(async () => {
    for (const server of servers) await server.stop();
    for (const r of receivers) await r.close();
    await db?.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("60 writes spread over both instances: each webhook gets every event exactly once, in order", async () => {
    const [a, b] = await Promise.all([instance(), instance()]);
    const { key, accountId } = await account("cluster");
    const first = await receiver();
    const second = await receiver();
    const hooks = [await webhook(a, key, first.url), await webhook(b, key, second.url)];

    const WRITES = 60;
    for (let batch = 0; batch < WRITES; batch += 6) {
      await Promise.all(Array.from({ length: 6 }, (_, i) => write((batch + i) % 2 ? b : a, key, `Rank ${batch + i}`)));
    }
    const order = await eventOrder(accountId);
    expect(order).toHaveLength(WRITES);
    for (const [i, r] of [first, second].entries()) {
      await r.until((list) => new Set(list.map((x) => x.headers["x-muster-delivery"])).size === WRITES);
      // Once the cursor is at the last event, nothing more of these can come.
      await expect
        .poll(() => db.prisma.webhook.findUniqueOrThrow({ where: { id: hooks[i].id } }).then((w) => w.cursorId), {
          timeout: 20_000,
        })
        .toBe(order.at(-1));
    }
    for (const [i, r] of [first, second].entries()) {
      const ids = r.received.map((x) => x.headers["x-muster-delivery"]);
      expect(ids).toEqual(order.map((id) => `wh${hooks[i].id}-ev${id}`));
      expect(await db.prisma.webhookDelivery.count({ where: { webhookId: hooks[i].id } })).toBe(WRITES);
    }
    // Each instance counts its own attempts; together, one per event and webhook.
    const delivered = await Promise.all(
      [a, b].map(async (s) => {
        const text = await (await fetch(`${s.base}/metrics`)).text();
        return Number(/^webhook_deliveries_total\{outcome="delivered"\} (\d+)$/m.exec(text)?.[1] ?? 0);
      }),
    );
    expect(delivered[0] + delivered[1]).toBe(2 * WRITES);
  });

  test("an instance killed (SIGKILL) after a write committed and before its delivery was recorded: another delivers it", async () => {
    for (const server of servers.splice(0)) await server.stop();
    const a = await instance();
    const { key } = await account("crash");
    const r = await receiver();
    // The first POST gets no answer: the instance that sent it is killed as it arrives.
    const killed = new Promise((resolve) => a.child.once("exit", resolve));
    r.answer = (_x, n) => {
      if (n > 0) return 200;
      a.child.kill("SIGKILL");
      return "hang";
    };
    const hook = await webhook(a, key, r.url);

    const rank = await write(a, key, "Survivor");
    await killed;
    expect(await db.prisma.webhookDelivery.count({ where: { webhookId: hook.id } })).toBe(0);

    // A new instance takes the webhook over once the dead one's lease runs out, and delivers the event again.
    await instance();
    const got = await r.until((list) => list.length === 2);
    expect(got.map((x) => x.body.record_id)).toEqual([rank.id, rank.id]);
    expect(got[1].headers["x-muster-delivery"]).toBe(got[0].headers["x-muster-delivery"]);
    await expect
      .poll(() =>
        db.prisma.webhookDelivery
          .findMany({ where: { webhookId: hook.id } })
          .then((log) => log.map((x) => [x.attempt, x.statusCode, x.succeeded])),
      )
      .toEqual([[1, 200, true]]);
  });
});
