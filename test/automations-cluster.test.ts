import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { createApiKey } from "../src/auth/accounts.ts";
import { migrate } from "../src/db/migrate.ts";
import { openDatabase, type Database } from "../src/db/prisma.ts";
import type { AutomationAction } from "../src/resources/automation-actions.ts";
import { createTestDatabase, testProvider } from "./harness.ts";
import { requireRedis, testRedisUrl } from "./services.ts";
import { spawnServer, type ServerProcess } from "./support/spawn-server.ts";
import { startReceiver, type Receiver } from "./support/webhook-receiver.ts";

// Automations run by server processes (the built server, as `npm start` runs it) sharing one database and one Redis:
// on the PostgreSQL pass, the production set-up (two instances, FOR UPDATE SKIP LOCKED claims); on the SQLite pass,
// two processes on one file.
const TIMEOUT_MS = 1000;

const redis = await requireRedis();

redis.describe(`automations run by two instances on one ${testProvider} database and Redis`, () => {
  let dir: string;
  let database: { url: string; drop(): Promise<void> };
  let db: Database;
  const servers: ServerProcess[] = [];
  const receivers: Receiver[] = [];

  /** An instance on the shared database; WEBHOOK_TIMEOUT_MS=1000 makes its automations' leases 5 s. */
  async function instance(): Promise<ServerProcess> {
    const server = await spawnServer({
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl,
      REDIS_PREFIX: `muster-test:${path.basename(dir)}`,
      WEBHOOKS_ALLOW_PRIVATE: "true",
      AUTOMATION_POLL_MS: "100",
      AUTOMATION_RETRY_BASE_MS: "50",
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

  const send = async (server: ServerProcess, key: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    return JSON.parse(text).data;
  };

  /** An automation on `rank.created`, created through the API of `server` with the key: it sees what is written after. */
  const automation = (server: ServerProcess, key: string, actions: AutomationAction[]): Promise<{ id: number }> =>
    send(server, key, "POST", "/v2/automations", { name: "cluster", triggers: ["rank.created"], actions });

  /** Every kind of action, the webhook last: message, increment, a created record, a POST. */
  const everyAction = (userId: number, url: string): AutomationAction[] => [
    { type: "message", to: { kind: "users", user_ids: [userId] }, text: "Rank {{ data.name }} created" },
    { type: "update", target: "record", increment: { order: 1000 } },
    { type: "update", create: "statuses", values: { name: "For {{ data.name }}", color: "#123456" } },
    { type: "webhook", url, body: { content: "Rank {{ data.name }}" } },
  ];

  const runsOf = (automationId: number) =>
    db.prisma.automationRun.findMany({ where: { automationId }, orderBy: { id: "asc" } });
  const jsonOf = (value: unknown) => (typeof value === "string" ? JSON.parse(value) : value);

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "muster-automations-"));
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

  test("30 writes spread over both instances: each action performed once per event", async () => {
    const [a, b] = await Promise.all([instance(), instance()]);
    const key = await createApiKey(db.store, { account: "cluster", scopes: "*" });
    const user = await send(a, key.key, "POST", "/v2/users", { name: "Ann Smith", email: "ann@example.com" });
    const r = await receiver();
    const auto = await automation(a, key.key, everyAction(user.id, r.url));

    const WRITES = 30;
    const ranks: { id: number; name: string; order: number }[] = [];
    for (let batch = 0; batch < WRITES; batch += 6) {
      ranks.push(
        ...(await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            send((batch + i) % 2 ? b : a, key.key, "POST", "/v2/ranks", { name: `R${batch + i}`, abbreviation: "R" }),
          ),
        )),
      );
    }
    await expect
      .poll(async () => (await runsOf(auto.id)).filter((x) => x.status === "succeeded").length, { timeout: 30_000 })
      .toBe(WRITES);
    const runs = await runsOf(auto.id);
    expect(runs).toHaveLength(WRITES);
    const messages = await db.prisma.message.findMany({ where: { accountId: key.accountId } });
    expect(messages.map((m) => m.message).sort()).toEqual(ranks.map((x) => `Rank ${x.name} created`).sort());
    const statuses = await db.prisma.status.findMany({ where: { accountId: key.accountId } });
    expect(statuses.map((s) => s.name).sort()).toEqual(ranks.map((x) => `For ${x.name}`).sort());
    for (const rank of ranks) {
      const now = await db.prisma.rank.findUniqueOrThrow({ where: { id: rank.id } });
      expect(now.order).toBe(rank.order + 1000);
    }
    expect(r.received).toHaveLength(WRITES);
    expect(new Set(r.received.map((x) => x.headers["x-muster-delivery"])).size).toBe(WRITES);
    // The events the actions wrote are the runs', one level deep.
    const written = await db.prisma.changeEvent.findMany({
      where: { accountId: key.accountId, automationRunId: { not: null } },
    });
    expect(written).toHaveLength(3 * WRITES);
    expect(new Set(written.map((e) => e.depth))).toEqual(new Set([1]));
  });

  test("a schedule due on both instances runs once per due time", async () => {
    // The two instances of the test before, both running automations.
    expect(servers).toHaveLength(2);
    const b = servers[1];
    const key = await createApiKey(db.store, { account: "schedules", scopes: "*" });
    const r = await receiver();
    const auto = await send(b, key.key, "POST", "/v2/automations", {
      name: "digest",
      triggers: [],
      schedule: "* * * * *",
      actions: [{ type: "webhook", url: r.url, body: { due: "{{ schedule.due_at }}" } }],
    });
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    const dues = [3, 2, 1].map((n) => new Date(minute - n * 60 * 60_000));
    for (const [i, due] of dues.entries()) {
      await db.prisma.automation.update({ where: { id: auto.id }, data: { nextRunAt: due } });
      await r.until((list) => list.length === i + 1);
      await expect
        .poll(async () =>
          (await db.prisma.automation.findUniqueOrThrow({ where: { id: auto.id } })).nextRunAt!.getTime(),
        )
        .toBeGreaterThan(Date.now());
    }
    // Time for a second instance to have sent one more, had it run a due time twice.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(r.received.map((x) => JSON.parse(x.raw).due)).toEqual(dues.map((d) => d.toISOString()));
    expect((await runsOf(auto.id)).map((x) => [x.scheduledFor?.toISOString(), x.status])).toEqual(
      dues.map((d) => [d.toISOString(), "succeeded"]),
    );
  });

  test("SIGKILL of the instance during a run: the run completes after a restart, nothing written twice", async () => {
    for (const server of servers.splice(0)) await server.stop();
    const a = await instance();
    const key = await createApiKey(db.store, { account: "crash", scopes: "*" });
    const user = await send(a, key.key, "POST", "/v2/users", { name: "Bob Jones", email: "bob@example.com" });
    const r = await receiver();
    // The webhook, the last action, gets no answer the first time: the instance that sent it is killed as it arrives.
    const killed = new Promise((resolve) => a.child.once("exit", resolve));
    r.answer = (_x, n) => {
      if (n > 0) return 200;
      a.child.kill("SIGKILL");
      return "hang";
    };
    const auto = await automation(a, key.key, everyAction(user.id, r.url));
    const rank = await send(a, key.key, "POST", "/v2/ranks", { name: "Survivor", abbreviation: "SUR" });
    await killed;
    const [interrupted] = await runsOf(auto.id);
    expect(interrupted.status).toBe("running");
    expect(await db.prisma.automationEffect.count({ where: { runId: interrupted.id } })).toBe(3);

    // A new instance takes the automation over once the dead one's lease runs out and finishes the run.
    await instance();
    await expect
      .poll(async () => (await runsOf(auto.id)).map((x) => x.status), { timeout: 30_000 })
      .toEqual(["succeeded"]);
    const [done] = await runsOf(auto.id);
    expect(done.id).toBe(interrupted.id);
    expect(jsonOf(done.outcomes).map((o: { status: string }) => o.status)).toEqual([
      "done",
      "done",
      "done",
      "succeeded",
    ]);
    expect(await db.prisma.message.count({ where: { accountId: key.accountId } })).toBe(1);
    expect(await db.prisma.status.count({ where: { accountId: key.accountId, name: "For Survivor" } })).toBe(1);
    expect((await db.prisma.rank.findUniqueOrThrow({ where: { id: rank.id } })).order).toBe(rank.order + 1000);
    // The webhook was sent again, with the same delivery id, so that the receiver can drop the repeat.
    expect(r.received).toHaveLength(2);
    expect(r.received[1].headers["x-muster-delivery"]).toBe(r.received[0].headers["x-muster-delivery"]);
    expect(await db.prisma.automationEffect.count({ where: { runId: done.id } })).toBe(4);
  });
});
