import { afterAll, beforeAll, describe, expect, test } from "vitest";
import pg from "pg";
import { client, seed, startHarness, testProvider, type Client, type Harness } from "./harness.ts";
import { readEvents, START, type FeedPosition } from "../src/events/feed.ts";
import { POSTGRES_EVENT_HORIZON } from "../src/data/outbox.ts";
import type { ChangeEventRecord, CommittedEvents } from "../src/core/events.ts";
import { pruneEvents } from "../src/events/retention.ts";
import { Writable } from "node:stream";
import { createApp } from "../src/server/app.ts";

/**
 * The outbox (src/data/outbox.ts): every write that changes a record appends its events in the same transaction.
 * Read here straight from the table, in feed order; the webhook, subscription and change-feed suites read them through
 * their own surfaces.
 */
let h: Harness;
let api: Client;
let accountId: number;
let ids: Awaited<ReturnType<typeof seed>>;
/** Every batch the bus announced, in order. */
const announced: CommittedEvents[] = [];

beforeAll(async () => {
  h = await startHarness();
  api = client(h, await h.key("outbox"));
  ids = await seed(api);
  accountId = (await h.db.prisma.account.findFirstOrThrow({ where: { name: "outbox" } })).id;
  void (async () => {
    for await (const batch of h.app.events.subscribe()) announced.push(batch);
  })();
});
afterAll(() => h?.close());

/** Every event of the account written since `mark` (an event count), in feed order. */
async function eventsSince(mark: number): Promise<ChangeEventRecord[]> {
  const all = await readEvents(h.db, { accountId, after: START, limit: 10_000 });
  return all.slice(mark);
}
const count = async () => (await readEvents(h.db, { accountId, after: START, limit: 10_000 })).length;
const summary = (events: ChangeEventRecord[]) => events.map((e) => `${e.type} ${e.recordId}`);

describe("outbox", () => {
  test("a create records the record as REST shows it, with the request's ids; the seed's writes are all there", async () => {
    const all = await eventsSince(0);
    expect(all.filter((e) => e.type === "user.created").map((e) => e.recordId)).toEqual([ids.user.id, ids.other.id]);
    const mark = all.length;
    const r = await api.post("/v2/ranks", { name: "Sergeant", abbreviation: "SGT" });
    expect(r.status).toBe(200);
    const [event, ...more] = await eventsSince(mark);
    expect(more).toEqual([]);
    expect(event).toMatchObject({
      type: "rank.created",
      resource: "rank",
      recordId: r.body.data.id,
      changes: null,
      notify: true,
      accountId,
    });
    expect(event.data).toEqual(r.body.data);
    expect(event.requestId).toBe(r.headers.get("x-perscom-request-id"));
    expect(event.traceId).toBe(r.headers.get("x-perscom-trace-id"));
  });

  test("an event shows the record as REST does, computed attributes included, but those read from other rows", async () => {
    const mark = await count();
    const r = await api.post("/v2/users", { name: "Cara Diaz", email: "cara@example.com" });
    expect(r.status).toBe(200);
    const [event] = await eventsSince(mark);
    const { last_rank_change_date, last_assignment_change_date, ...shown } = r.body.data;
    expect(event.data).toEqual(shown);
    expect(event.data).toHaveProperty("profile_photo_url");
    expect(event.data).not.toHaveProperty("last_rank_change_date");
  });

  test("an update records old and new values of what changed; an update that changes nothing records nothing", async () => {
    const mark = await count();
    const r = await api.patch(`/v2/users/${ids.other.id}`, { name: "Robert Jones", email: "bob@example.com" });
    expect(r.status).toBe(200);
    const events = await eventsSince(mark);
    expect(summary(events)).toEqual([`user.updated ${ids.other.id}`]);
    // Attributes computed from the name change with it, as REST shows them.
    expect(events[0].changes).toMatchObject({
      name: { old: "Bob Jones", new: "Robert Jones" },
      display_name: { old: "Bob Jones", new: "Robert Jones" },
    });
    expect(Object.keys(events[0].changes!).sort()).toEqual(["display_name", "name", "profile_photo_url"]);
    expect(events[0].data).toMatchObject({ id: ids.other.id, name: "Robert Jones" });
    expect((await api.patch(`/v2/users/${ids.other.id}`, { name: "Robert Jones" })).status).toBe(200);
    expect(await eventsSince(mark)).toHaveLength(1);
  });

  test("a rank record records its side effects in order: the user's new rank, the record, the newsfeed item", async () => {
    const mark = await count();
    const r = await api.post("/v2/rank-records", {
      user_id: ids.user.id,
      rank_id: ids.corporal.id,
      type: 0,
      text: "Promoted",
    });
    expect(r.status).toBe(200);
    const events = await eventsSince(mark);
    expect(events.map((e) => e.type)).toEqual(["user.updated", "rankrecord.created", "newsfeeditem.created"]);
    expect(events[0].changes).toEqual({ rank_id: { old: ids.private_.id, new: ids.corporal.id } });
    expect(events[1].recordId).toBe(r.body.data.id);
    expect(events[2].data).toMatchObject({
      subject_type: "App\\Models\\RankRecord",
      subject_id: r.body.data.id,
      text: "Promoted",
    });
    expect(new Set(events.map((e) => e.requestId))).toEqual(new Set([r.headers.get("x-perscom-request-id")]));
  });

  test("rank records written side by side each get the newsfeed item that names them", async () => {
    const texts = Array.from({ length: 12 }, (_, i) => `side by side ${i}`);
    const replies = await Promise.all(
      texts.map((text, i) =>
        api.post("/v2/rank-records", {
          user_id: i % 2 ? ids.user.id : ids.other.id,
          rank_id: ids.corporal.id,
          type: 0,
          text,
        }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(texts.map(() => 200));
    const feed = (await api.get("/v2/newsfeed?limit=50")).body.data as Array<{ text: string; subject_id: number }>;
    const items = texts.map((text) => feed.filter((item) => item.text === text));
    expect(items.map((found) => found.length)).toEqual(texts.map(() => 1));
    expect(items.map((found) => found[0].subject_id)).toEqual(replies.map((r) => r.body.data.id));
  });

  test("a delete records a tombstone with the record's last state; a batch records one event per record in request order", async () => {
    let mark = await count();
    const created = await api.post("/v2/statuses/batch", {
      resources: [
        { name: "A", color: "#a00" },
        { name: "B", color: "#b00" },
        { name: "C", color: "#c00" },
      ],
    });
    expect(created.status).toBe(200);
    const statusIds = created.body.data.map((s: { id: number }) => s.id);
    expect(summary(await eventsSince(mark))).toEqual(statusIds.map((id: number) => `status.created ${id}`));
    mark = await count();
    const order = [statusIds[2], statusIds[0], statusIds[1]];
    expect((await api.delete("/v2/statuses/batch", { resources: order })).status).toBe(200);
    const deleted = await eventsSince(mark);
    expect(summary(deleted)).toEqual(order.map((id: number) => `status.deleted ${id}`));
    expect(deleted[0].data).toMatchObject({ id: statusIds[2], name: "C" });
  });

  test("a write that fails records nothing", async () => {
    const mark = await count();
    const r = await api.post("/v2/statuses/batch", { resources: [{ name: "D", color: "#d00" }, { color: "#fff" }] });
    expect(r.status).toBe(422);
    expect(await eventsSince(mark)).toEqual([]);
  });

  test("link operations record the link rows; a GraphQL mutation records like REST", async () => {
    const task = (await api.post("/v2/tasks", { title: "Clean rifles" })).body.data;
    let mark = await count();
    const attached = await api.post(`/v2/users/${ids.user.id}/tasks/attach`, { resources: [task.id] });
    expect(attached.status).toBe(200);
    const link = await eventsSince(mark);
    expect(link.map((e) => e.type)).toEqual(["taskassignment.created"]);
    expect(link[0].data).toMatchObject({ user_id: ids.user.id, task_id: task.id });
    mark = await count();
    expect((await api.delete(`/v2/users/${ids.user.id}/tasks/detach`, { resources: [task.id] })).status).toBe(200);
    expect((await eventsSince(mark)).map((e) => `${e.type} ${e.recordId}`)).toEqual([
      `taskassignment.deleted ${link[0].recordId}`,
    ]);
    mark = await count();
    const g = await api.graphql(
      `mutation { updateTask(rowId: ${task.id}, input: { title: "Clean all rifles" }) { task { title } } }`,
    );
    expect(g.body.errors).toBeUndefined();
    const events = await eventsSince(mark);
    expect(summary(events)).toEqual([`task.updated ${task.id}`]);
    expect(events[0].changes).toEqual({ title: { old: "Clean rifles", new: "Clean all rifles" } });
  });

  test("X-Perscom-Notifications: false records the events, marked to call no webhook", async () => {
    const mark = await count();
    const quiet = client(h, await h.key("outbox"), { "x-perscom-notifications": "false" });
    expect((await quiet.post("/v2/ranks", { name: "Major" })).status).toBe(200);
    const events = await eventsSince(mark);
    expect(events.map((e) => [e.type, e.notify])).toEqual([["rank.created", false]]);
  });

  test("committed events are announced on the bus, in order, one batch per transaction, for the account", async () => {
    const before = announced.length;
    const r = await api.post("/v2/ranks", { name: "Colonel" });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const batches = announced.slice(before);
    expect(batches).toHaveLength(1);
    expect(batches[0].accountId).toBe(accountId);
    expect(batches[0].events.map((e) => [e.type, e.recordId])).toEqual([["rank.created", r.body.data.id]]);
  });

  test("another account's writes land in its own events only", async () => {
    const mark = await count();
    const other = client(h, await h.key("outbox-other"));
    expect((await other.post("/v2/ranks", { name: "Theirs" })).status).toBe(200);
    expect(await eventsSince(mark)).toEqual([]);
  });

  test("events older than the retention period are pruned; newer ones stay", async () => {
    const all = await eventsSince(0);
    const old = all.slice(0, 3).map((e) => e.id);
    await h.db.prisma.changeEvent.updateMany({
      where: { id: { in: old } },
      data: { createdAt: new Date(Date.now() - 31 * 86_400_000) },
    });
    expect(await pruneEvents(h.db, { eventRetentionDays: 30 })).toBe(3);
    const left = (await eventsSince(0)).map((e) => e.id);
    expect(left).toEqual(all.slice(3).map((e) => e.id));
    expect(await pruneEvents(h.db, { eventRetentionDays: 30 })).toBe(0);
  });

  test("writes to one row committed side by side are read in the order they applied: each change starts where the last ended", async () => {
    const ranks: number[] = [];
    for (let i = 0; i < 6; i++) ranks.push((await api.post("/v2/ranks", { name: `Rank ${i}` })).body.data.id);
    const mark = await count();
    const writes = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        api.post(`/v2/users/${ids.other.id}/rank-records`, { rank_id: ranks[i % ranks.length], type: 0 }),
      ),
    );
    expect(writes.map((r) => r.status)).toEqual(writes.map(() => 200));
    const updates = (await eventsSince(mark)).filter((e) => e.type === "user.updated" && e.recordId === ids.other.id);
    expect(updates.length).toBeGreaterThan(0);
    for (let i = 1; i < updates.length; i++)
      expect(updates[i].changes!.rank_id.old).toBe(updates[i - 1].changes!.rank_id.new);
    const user = (await api.get(`/v2/users/${ids.other.id}`)).body.data;
    expect(updates.at(-1)!.data.rank_id).toBe(user.rank_id);
  });
});

describe.runIf(testProvider === "postgresql")("PostgreSQL: events of transactions committed out of order", () => {
  test("a transaction still open while a later-numbered one commits its event: a reader walking the feed gets both, the open one's once it commits", async () => {
    await h.key("horizon");
    const account = (await h.db.prisma.account.findFirstOrThrow({ where: { name: "horizon" } })).id;
    const insert = `INSERT INTO "ChangeEvent" ("accountId", "type", "resource", "recordId", "data", "requestId", "traceId", "notify", "txid", "createdAt")
      VALUES ($1, 'rank.created', 'rank', $2, '{}'::jsonb, 'test', 'test', true, ${POSTGRES_EVENT_HORIZON}, now()) RETURNING "id"`;
    const [first, second] = [
      new pg.Client({ connectionString: h.config.databaseUrl }),
      new pg.Client({ connectionString: h.config.databaseUrl }),
    ];
    await Promise.all([first.connect(), second.connect()]);
    try {
      // The first takes the lower transaction id and writes its event; the second writes and commits after it.
      await first.query("BEGIN");
      await first.query("SELECT pg_current_xact_id()");
      await first.query(insert, [account, 1]);
      await second.query("BEGIN");
      await second.query(insert, [account, 2]);
      await second.query("COMMIT");
      // A reader (a webhook's dispatcher, a change-feed client) reads now and moves its cursor past what it got.
      const during = await readEvents(h.db, { accountId: account, after: START, limit: 100 });
      const cursor: FeedPosition = during.length ? { txid: during.at(-1)!.txid, id: during.at(-1)!.id } : START;
      await first.query("COMMIT");
      const after = await readEvents(h.db, { accountId: account, after: cursor, limit: 100 });
      expect([...during, ...after].map((e) => e.recordId).sort()).toEqual([1, 2]);
      // Neither is shown while the first is open: the second's event sorts after the first's.
      expect(during).toEqual([]);
      expect(after.map((e) => e.recordId)).toEqual([1, 2]);
    } finally {
      await first.query("ROLLBACK").catch(() => undefined);
      await Promise.all([first.end(), second.end()]);
    }
  });
});

describe("with REDIS_URL set and Redis unreachable", () => {
  test("writes succeed and record their events; the failed announcement is logged once, and nothing is left unhandled", async () => {
    const lines: string[] = [];
    const logStream = new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) });
    const app = createApp({
      db: h.db,
      config: { ...h.config, redisUrl: "redis://127.0.0.1:1", logLevel: "warn" },
      logStream,
    });
    try {
      const writer = client({ ...h, app }, await h.key("no-redis"));
      for (const name of ["One", "Two"]) expect((await writer.post("/v2/ranks", { name })).status).toBe(200);
      // Long enough for a PUBLISH that fails to reject (vitest fails the run on an unhandled rejection).
      await new Promise((resolve) => setTimeout(resolve, 500));
      const account = (await h.db.prisma.account.findFirstOrThrow({ where: { name: "no-redis" } })).id;
      const events = await readEvents(h.db, { accountId: account, after: START, limit: 10 });
      expect(events.map((e) => e.type)).toEqual(["rank.created", "rank.created"]);
      expect(lines.filter((l) => l.includes("Redis is unreachable: committed events"))).toHaveLength(1);
    } finally {
      await app.events.close();
    }
  });
});
