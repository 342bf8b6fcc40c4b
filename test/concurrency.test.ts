import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createClient } from "@libsql/client";
import { openDatabase, type Database } from "../src/db/prisma.ts";
import { createApp } from "../src/server/app.ts";
import { client, startHarness, type Client, type Harness, type Reply } from "./harness.ts";

/**
 * Many writers on the same rows at once, through the real pipeline (`yoga.fetch`): nothing is lost,
 * nothing is duplicated, every request gets a definite answer and none of them is a 500.
 */
let h: Harness;
let api: Client;
beforeAll(async () => {
  h = await startHarness();
  api = client(h, await h.key("concurrency"));
});
afterAll(() => h?.close());

const N = 50;
const times = <T>(n: number, work: (i: number) => Promise<T>) =>
  Promise.all(Array.from({ length: n }, (_, i) => work(i)));

/** No reply is a server error; each is 200 or one of `allowed`. */
function answered(replies: Reply[], allowed: number[] = []) {
  const wrong = replies.filter((r) => r.status !== 200 && !allowed.includes(r.status));
  expect(wrong.map((r) => ({ status: r.status, body: r.body }))).toEqual([]);
}
const ok = (r: Reply) => {
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const distinct = <T>(values: T[]) => new Set(values).size === values.length;

async function made(path: string, body: object) {
  return ok(await api.post(path, body)).data;
}

describe("creates", () => {
  test(`${N} parallel creates: every row exists once, ids and computed orders are unique`, async () => {
    const replies = await times(N, (i) => api.post("/v2/awards", { name: `Award ${i}` }));
    answered(replies);
    const rows = replies.map((r) => r.body.data);
    expect(distinct(rows.map((r) => r.id))).toBe(true);
    const listed = ok(await api.get("/v2/awards?limit=100")).data;
    expect(listed.map((r: { name: string }) => r.name).sort()).toEqual(rows.map((r) => r.name).sort());
    expect(listed.map((r: { order: number }) => r.order).sort((a: number, b: number) => a - b)).toEqual(
      Array.from({ length: N }, (_, i) => i + 1),
    );
  });

  test("parallel creates with the same unique value: exactly one wins, the others are a 422", async () => {
    const replies = await times(20, (i) => api.post("/v2/users", { name: `Twin ${i}`, email: "twin@example.com" }));
    answered(replies, [422]);
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    const users = ok(
      await api.post("/v2/users/search", { filters: [{ field: "email", operator: "=", value: "twin@example.com" }] }),
    ).data;
    expect(users).toHaveLength(1);
  });

  test("parallel batch creates are all or nothing each; computed orders stay unique across them", async () => {
    const batches = 20;
    const size = 10;
    const replies = await times(batches, (b) =>
      api.post("/v2/qualifications/batch", {
        resources: Array.from({ length: size }, (_, i) =>
          b % 2 === 1 && i === size - 1 ? { description: "no name" } : { name: `Q ${b}.${i}` },
        ),
      }),
    );
    answered(replies, [422]);
    replies.forEach((r, b) => expect(r.status, `batch ${b}`).toBe(b % 2 === 0 ? 200 : 422));
    const listed = ok(await api.get("/v2/qualifications?limit=100")).data;
    const names = listed.map((r: { name: string }) => r.name);
    const expected = Array.from({ length: batches }, (_, b) => b)
      .filter((b) => b % 2 === 0)
      .flatMap((b) => Array.from({ length: size }, (_, i) => `Q ${b}.${i}`));
    expect(names.sort()).toEqual(expected.sort());
    const orders = listed.map((r: { order: number }) => r.order);
    expect(distinct(orders)).toBe(true);
    for (const r of replies.filter((r) => r.status === 200)) {
      const own = r.body.data.map((row: { order: number }) => row.order);
      expect(own, "one batch's orders are consecutive").toEqual(own.map((_: number, i: number) => own[0] + i));
    }
  });
});

describe("updates", () => {
  test(`${N} parallel updates of one field: each lands, the final value is one of them`, async () => {
    const rank = await made("/v2/ranks", { name: "Start" });
    const replies = await times(N, (i) => api.patch(`/v2/ranks/${rank.id}`, { name: `Name ${i}` }));
    answered(replies);
    replies.forEach((r, i) => expect(r.body.data.name).toBe(`Name ${i}`));
    const final = ok(await api.get(`/v2/ranks/${rank.id}`)).data;
    expect(replies.map((r) => r.body.data.name)).toContain(final.name);
  });

  test(`${N} parallel updates of different fields of one row: no update undoes another`, async () => {
    const rank = await made("/v2/ranks", {
      name: "Start",
      description: "start",
      abbreviation: "S",
      paygrade: "E0",
      order: 0,
    });
    const fields = ["name", "description", "abbreviation", "paygrade", "order"] as const;
    const value = (i: number) =>
      fields[i % fields.length] === "order" ? 1000 + i : `${fields[i % fields.length]} ${i}`;
    const replies = await times(N, (i) => api.patch(`/v2/ranks/${rank.id}`, { [fields[i % fields.length]]: value(i) }));
    answered(replies);
    const final = ok(await api.get(`/v2/ranks/${rank.id}`)).data;
    for (const [f, field] of fields.entries()) {
      const written = Array.from({ length: N }, (_, i) => i)
        .filter((i) => i % fields.length === f)
        .map(value);
      expect(written, field).toContain(final[field]);
    }
  });

  test("parallel updates and deletes of one row: each update either lands or is a 404, never a 500", async () => {
    const rank = await made("/v2/ranks", { name: "Doomed" });
    const replies = await times(N, (i) =>
      i === N / 2 ? api.delete(`/v2/ranks/${rank.id}`) : api.patch(`/v2/ranks/${rank.id}`, { name: `Try ${i}` }),
    );
    answered(replies, [404]);
    expect(replies[N / 2].status).toBe(200);
    expect((await api.get(`/v2/ranks/${rank.id}`)).status).toBe(404);
  });
});

describe("links", () => {
  let units: number[];
  beforeAll(async () => {
    units = [];
    for (let i = 0; i < 5; i++) units.push((await made("/v2/units", { name: `Unit ${i}` })).id);
  });
  const group = async () => (await made("/v2/groups", { name: "Group" })).id as number;
  /** The group's link rows, straight from the database: (unit, order) per row. */
  const linkRows = async (groupId: number) =>
    (await h.db.prisma.groupUnit.findMany({ where: { groupId }, orderBy: { id: "asc" } })).map((r) => ({
      unit: r.unitId,
      order: r.order,
    }));
  const rotated = (i: number) => [...units.slice(i % units.length), ...units.slice(0, i % units.length)];

  test(`${N} parallel attaches of the same ids: one link row per id, each id reported attached once, orders unique`, async () => {
    const g = await group();
    const replies = await times(N, (i) => api.post(`/v2/groups/${g}/units/attach`, { resources: rotated(i) }));
    answered(replies);
    const rows = await linkRows(g);
    expect(rows.map((r) => r.unit).sort()).toEqual([...units].sort());
    expect(replies.flatMap((r) => r.body.attached).sort()).toEqual([...units].sort());
    expect(rows.map((r) => r.order).sort()).toEqual([1, 2, 3, 4, 5]);
  });

  test("parallel attaches with duplicates: every request links once more, with its own computed order", async () => {
    const g = await group();
    const replies = await times(20, () =>
      api.post(`/v2/groups/${g}/units/attach`, { resources: [units[0]], duplicates: true }),
    );
    answered(replies);
    const rows = await linkRows(g);
    expect(rows).toHaveLength(20);
    expect(rows.map((r) => r.order).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  test("parallel syncs: the final links are exactly one request's set, one row per id", async () => {
    const g = await group();
    const sets = Array.from({ length: 30 }, (_, i) => units.filter((_, u) => (i + 1) & (1 << u)));
    const replies = await times(sets.length, (i) => api.patch(`/v2/groups/${g}/units/sync`, { resources: sets[i] }));
    answered(replies);
    const rows = await linkRows(g);
    const final = rows.map((r) => r.unit).sort();
    expect(distinct(final)).toBe(true);
    expect(sets.map((s) => JSON.stringify([...s].sort()))).toContain(JSON.stringify(final));
  });

  test("parallel toggles: each flips the link once, so an odd number leaves it linked exactly once", async () => {
    const g = await group();
    const count = 21;
    const replies = await times(count, () => api.patch(`/v2/groups/${g}/units/toggle`, { resources: [units[1]] }));
    answered(replies);
    expect(replies.filter((r) => r.body.attached.length === 1)).toHaveLength(11);
    expect(replies.filter((r) => r.body.detached.length === 1)).toHaveLength(10);
    expect((await linkRows(g)).map((r) => r.unit)).toEqual([units[1]]);
  });

  test("parallel attaches, detaches and syncs mixed with reads: no server error, one row per id", async () => {
    const g = await group();
    const replies = await times(60, (i) => {
      switch (i % 4) {
        case 0:
          return api.post(`/v2/groups/${g}/units/attach`, { resources: rotated(i) });
        case 1:
          return api.delete(`/v2/groups/${g}/units/detach`, { resources: [units[i % units.length]] });
        case 2:
          return api.patch(`/v2/groups/${g}/units/sync`, { resources: rotated(i).slice(0, 3), detaching: false });
        default:
          return api.get(`/v2/groups/${g}?include=units`);
      }
    });
    answered(replies);
    const ids = (await linkRows(g)).map((r) => r.unit);
    expect(distinct(ids)).toBe(true);
  });
});

/**
 * Two service instances on one database file (two processes in production; two connections here):
 * SQLite's own locks are all that orders them, so write transactions must take the write lock when
 * they begin, and a busy database must be waited for, not reported.
 */
describe("two instances on one database", () => {
  let second: { db: Database; api: Client };
  beforeAll(async () => {
    const db = await openDatabase(h.config.databaseUrl);
    const app = createApp({ db, config: h.config });
    second = { db, api: client({ ...h, app, db }, await h.key("concurrency")) };
  });
  afterAll(() => second?.db.close());
  const either = (i: number) => (i % 2 ? second.api : api);

  test("parallel creates from both: computed orders unique, every row once", async () => {
    const replies = await times(N, (i) => either(i).post("/v2/positions", { name: `Position ${i}` }));
    answered(replies);
    const listed = ok(await api.get("/v2/positions?limit=100")).data;
    expect(listed).toHaveLength(N);
    expect(listed.map((r: { order: number }) => r.order).sort((a: number, b: number) => a - b)).toEqual(
      Array.from({ length: N }, (_, i) => i + 1),
    );
  });

  test("parallel attaches of the same ids from both: one link row per id", async () => {
    const units: number[] = [];
    for (let i = 0; i < 5; i++) units.push((await made("/v2/units", { name: `Shared unit ${i}` })).id);
    const g = (await made("/v2/groups", { name: "Shared group" })).id;
    const replies = await times(N, (i) => either(i).post(`/v2/groups/${g}/units/attach`, { resources: units }));
    answered(replies);
    const rows = await h.db.prisma.groupUnit.findMany({ where: { groupId: g } });
    expect(rows.map((r) => r.unitId).sort()).toEqual([...units].sort());
    expect(replies.flatMap((r) => r.body.attached).sort()).toEqual([...units].sort());
  });

  test("parallel batch creates from both while the other reads: all or nothing, no server error", async () => {
    const replies = await times(20, (b) =>
      b % 4 === 3
        ? either(b).get("/v2/specialties?limit=100")
        : either(b).post("/v2/specialties/batch", {
            resources: Array.from({ length: 20 }, (_, i) => ({ name: `S ${b}.${i}` })),
          }),
    );
    answered(replies);
    const listed = ok(await api.get("/v2/specialties?limit=100&page=1")).meta;
    expect(listed.total).toBe(15 * 20);
  });
});

/** Another process holding the write lock (a CLI command, a second instance mid-batch): writes wait for it. */
describe("a write lock held elsewhere", () => {
  /** Takes the write lock on another connection now; the promise returned settles once it is released. */
  const holdLock = async (ms: number) => {
    const other = createClient({ url: h.config.databaseUrl });
    const tx = await other.transaction("write");
    return {
      released: sleep(ms).then(async () => {
        await tx.commit();
        other.close();
      }),
    };
  };

  test("writes queued behind it all land once it is released, none is an error", async () => {
    if (h.db.provider !== "sqlite") return;
    const { released } = await holdLock(700);
    const started = Date.now();
    const replies = await times(10, (i) => api.post("/v2/ranks", { name: `Waited ${i}` }));
    await released;
    answered(replies);
    // Soon after, not once the garbage collector has reset the statements that failed busy.
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);
    expect(Date.now() - started).toBeLessThan(3000);
    const names = ok(
      await api.post("/v2/ranks/search", { filters: [{ field: "name", operator: "like", value: "Waited %" }] }),
    ).data;
    expect(names).toHaveLength(10);
  });

  test("a write that waits past the execution timeout is a 503, and is not written afterwards", async () => {
    if (h.db.provider !== "sqlite") return;
    const impatient = client(
      { ...h, app: createApp({ db: h.db, config: { ...h.config, executionTimeoutMs: 500 } }) },
      await h.key("concurrency"),
    );
    ok(await impatient.get("/v2/ranks")); // the key's first use is recorded before the lock is taken
    const { released } = await holdLock(1500);
    const reply = await impatient.post("/v2/ranks", { name: "Too late" });
    expect(reply.status, JSON.stringify(reply.body)).toBe(503);
    await released;
    expect(ok(await api.get("/v2/ranks?limit=100")).data.map((r: { name: string }) => r.name)).not.toContain(
      "Too late",
    );
  });
});

describe("records of one user written at once", () => {
  test(`${N} parallel rank records of one user: every one is written, and the user ends with the latest one's rank`, async () => {
    const ranks = await times(5, (i) => made("/v2/ranks", { name: `Parallel rank ${i}` }));
    const user = await made("/v2/users", {
      name: "Parallel promotions",
      email: `parallel-promotions-${Date.now()}@example.com`,
    });
    const replies = await times(N, (i) =>
      api.post(`/v2/users/${user.id}/rank-records`, { rank_id: ranks[i % ranks.length].id, type: 0 }),
    );
    answered(replies);
    const records = ok(await api.get(`/v2/users/${user.id}/rank-records?limit=100`)).data as Array<{
      id: number;
      rank_id: number;
    }>;
    expect(records).toHaveLength(N);
    const latest = records.reduce((a, b) => (b.id > a.id ? b : a));
    expect(ok(await api.get(`/v2/users/${user.id}`)).data.rank_id).toBe(latest.rank_id);
  });
});

// PostgreSQL runs writes side by side where nothing they check can change under them (src/data/independent-writes.ts).
describe("PostgreSQL: the write lock and writes that do not need it", () => {
  const advisoryKey = "120109953295730";
  /** A connection of our own with a transaction open on it: `run` a statement in it, `end` rolls it back. */
  const openTransaction = async (settings: string[] = []) => {
    const { default: pg } = await import("pg");
    const other = new pg.Client({ connectionString: h.config.databaseUrl });
    await other.connect();
    for (const setting of settings) await other.query(setting);
    await other.query("BEGIN");
    return {
      run: (sql: string, params: unknown[] = []) => other.query(sql, params),
      end: async () => {
        await other.query("ROLLBACK").catch(() => {});
        await other.end();
      },
    };
  };

  test("a rank record is written while another instance holds the write lock; a rank (computed order) waits for it", async () => {
    if (h.db.provider !== "postgresql") return;
    const rank = await made("/v2/ranks", { name: "Lock test rank" });
    const user = await made("/v2/users", { name: "Lock test user", email: `lock-test-${Date.now()}@example.com` });
    const holder = await openTransaction();
    await holder.run(`SELECT pg_advisory_xact_lock(${advisoryKey})`);
    try {
      const record = await api.post(`/v2/users/${user.id}/rank-records`, { rank_id: rank.id, type: 0 });
      expect(record.status, JSON.stringify(record.body)).toBe(200);
      let rankAnswered = false;
      const waiting = api.post("/v2/ranks", { name: "Behind the lock" }).then((r) => ((rankAnswered = true), r));
      await sleep(300);
      expect(rankAnswered).toBe(false);
      await holder.end();
      ok(await waiting);
    } finally {
      await holder.end();
    }
  });

  test("writes that need the lock queue in the process: one connection waits on the lock, not one per write", async () => {
    if (h.db.provider !== "postgresql") return;
    const holder = await openTransaction();
    await holder.run(`SELECT pg_advisory_xact_lock(${advisoryKey})`);
    try {
      // Each request has a store of its own (its row budget); the queue is the store's, shared by all of them.
      const writes = times(4, (i) => api.post("/v2/ranks", { name: `Queued ${i}` }));
      await sleep(500);
      const { rows } = await holder.run(
        "SELECT count(*)::int AS waiting FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
      );
      expect(rows[0].waiting).toBe(1);
      await holder.end();
      answered(await writes);
    } finally {
      await holder.end();
    }
  });

  test("a write PostgreSQL rolls back to break a deadlock is run again and lands once", async () => {
    if (h.db.provider !== "postgresql") return;
    const rank = await made("/v2/ranks", { name: "Deadlock rank" });
    const user = await made("/v2/users", { name: "Deadlock user", email: `deadlock-${Date.now()}@example.com` });
    // The other session waits long before looking for deadlocks, so the service's transaction is the one rolled back.
    const other = await openTransaction(["SET deadlock_timeout = '20s'"]);
    try {
      await other.run('SELECT 1 FROM "Rank" WHERE id = $1 FOR UPDATE', [rank.id]);
      // The service locks the user's row (the record's effect), then waits for the rank (the record's foreign key)…
      const reply = api.post(`/v2/users/${user.id}/rank-records`, { rank_id: rank.id, type: 0 });
      await sleep(300);
      // …while this waits for the user's row: a cycle PostgreSQL breaks after the service's deadlock_timeout (1 s).
      const blocked = other.run('UPDATE "User" SET "notes" = $1 WHERE id = $2', ["deadlock", user.id]);
      await blocked;
      await other.run("COMMIT");
      ok(await reply);
    } finally {
      await other.end();
    }
    const records = ok(await api.get(`/v2/users/${user.id}/rank-records`)).data;
    expect(records).toHaveLength(1);
    expect(ok(await api.get(`/v2/users/${user.id}`)).data).toMatchObject({ rank_id: rank.id, notes: "deadlock" });
  });
});
