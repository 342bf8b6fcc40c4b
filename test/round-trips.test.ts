import { mayRunTwice } from "../src/db/transaction.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { client, seed, startHarness, testProvider, type Client, type Harness } from "./harness.ts";
import { openDatabase, type Database } from "../src/db/prisma.ts";
import { createApp, type App } from "../src/server/app.ts";
import { createApiKey } from "../src/auth/accounts.ts";
import { countingProxy } from "./support/counting-proxy.ts";

/**
 * A nested create looks its parent up beside the body's checks (src/graphql/operations.ts, `createRow`'s `alongside`):
 * on PostgreSQL the statements asked for within one tick of a transaction go out in one write
 * (src/db/read-drivers.ts, `postgresDirectTransaction`). Which answer wins when both fail is the same on both databases.
 */
describe("a nested create's parent and body checks", () => {
  let h: Harness;
  let api: Client;
  let ids: Awaited<ReturnType<typeof seed>>;

  beforeAll(async () => {
    h = await startHarness();
    api = client(h, await h.key());
    ids = await seed(api);
  });
  afterAll(() => h?.close());

  it("a missing parent answers 404 even when the body is invalid too, and nothing is written", async () => {
    const before = (await api.get(`/v2/rank-records?limit=1`)).body.meta.total;
    const missing = await api.post(`/v2/users/999999/rank-records`, { rank_id: 999_999, type: 0 });
    expect(missing.status).toBe(404);
    const invalid = await api.post(`/v2/users/${ids.user.id}/rank-records`, { rank_id: 999_999, type: 0 });
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.errors).toEqual({ rank_id: ["The selected rank id is invalid."] });
    expect((await api.get(`/v2/rank-records?limit=1`)).body.meta.total).toBe(before);
  });

  it("another account's parent is missing too", async () => {
    const other = client(h, await h.key("round-trips other"));
    const theirs = await seed(other);
    const reply = await api.post(`/v2/users/${theirs.user.id}/rank-records`, { rank_id: ids.corporal.id, type: 0 });
    expect(reply.status).toBe(404);
  });

  describe.runIf(testProvider === "postgresql")(
    "on PostgreSQL, through a proxy that counts what the service sends",
    () => {
      let proxy: Awaited<ReturnType<typeof countingProxy>>;
      let db: Database;
      let app: App;
      let key: string;
      const chunks = () => proxy.chunks();

      beforeAll(async () => {
        proxy = await countingProxy(h.config.databaseUrl);
        db = await openDatabase(proxy.url);
        app = createApp({ db, config: { ...h.config, databaseUrl: proxy.url } });
        key = (await createApiKey(db.store, { account: "alpha", scopes: "*" })).key;
      });
      afterAll(async () => {
        await app?.events.close();
        await db?.close();
        proxy?.close();
      });

      const post = (path: string, body: unknown) =>
        app.yoga.fetch(`http://muster.test${path}`, {
          method: "POST",
          body: JSON.stringify(body),
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        });

      it("a rank record takes four round trips: the key, then BEGIN with the user and the rank, the user's new rank with the record and its newsfeed item, and the events with COMMIT", async () => {
        // Twice first, with the same columns: every statement is prepared on the pool's connections before the one counted.
        for (let i = 0; i < 2; i++)
          expect(
            (
              await post(`/v2/users/${ids.user.id}/rank-records`, {
                rank_id: ids.corporal.id,
                type: 0,
                text: "warming",
              })
            ).status,
          ).toBe(200);
        const before = chunks();
        const reply = await post(`/v2/users/${ids.user.id}/rank-records`, {
          rank_id: ids.private_.id,
          type: 0,
          text: "counted",
        });
        expect(reply.status).toBe(200);
        expect(chunks() - before).toBe(4);
        const record = (await reply.json()).data;
        const feed = (
          await (
            await app.yoga.fetch(`http://muster.test/v2/newsfeed`, { headers: { authorization: `Bearer ${key}` } })
          ).json()
        ).data;
        expect(feed[0]).toMatchObject({
          subject_type: "App\\Models\\RankRecord",
          subject_id: record.id,
          text: "counted",
        });
        const user = (
          await (
            await app.yoga.fetch(`http://muster.test/v2/users/${ids.user.id}`, {
              headers: { authorization: `Bearer ${key}` },
            })
          ).json()
        ).data;
        expect(user.rank_id).toBe(ids.private_.id);
        expect(record).toMatchObject({ user_id: ids.user.id, rank_id: ids.private_.id, text: "counted" });
      });

      it("a record the database refuses in that write takes its user's new rank and its newsfeed item with it: 422, nothing written, the next one written", async () => {
        const admin = new pg.Client({ connectionString: h.config.databaseUrl });
        await admin.connect();
        const get = async (path: string) =>
          (
            await (
              await app.yoga.fetch(`http://muster.test${path}`, { headers: { authorization: `Bearer ${key}` } })
            ).json()
          ).data;
        try {
          // As if the rank were deleted between the check and the INSERT: the foreign key refuses the record.
          await admin.query(`CREATE FUNCTION refuse_record() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
          IF NEW."text" = 'refused' THEN RAISE EXCEPTION 'refused' USING ERRCODE = 'foreign_key_violation'; END IF; RETURN NEW; END $$`);
          await admin.query(
            `CREATE TRIGGER refuse_record BEFORE INSERT ON "RankRecord" FOR EACH ROW EXECUTE FUNCTION refuse_record()`,
          );
          const rank = (await get(`/v2/users/${ids.user.id}`)).rank_id;
          const feed = (await get(`/v2/newsfeed`))[0].id;
          const {
            rows: [{ events }],
          } = await admin.query(`SELECT count(*)::int AS events FROM "ChangeEvent"`);
          const other = rank === ids.corporal.id ? ids.private_.id : ids.corporal.id;
          for (let i = 0; i < 3; i++) {
            const before = chunks();
            const reply = await post(`/v2/users/${ids.user.id}/rank-records`, {
              rank_id: other,
              type: 0,
              text: "refused",
            });
            expect(reply.status).toBe(422);
            expect((await reply.json()).error).toMatchObject({
              type: "ValidationException",
              message: "The given data conflicts with existing records.",
            });
            expect(chunks() - before).toBe(4);
          }
          expect((await get(`/v2/users/${ids.user.id}`)).rank_id).toBe(rank);
          expect((await get(`/v2/newsfeed`))[0].id).toBe(feed);
          expect((await admin.query(`SELECT count(*)::int AS events FROM "ChangeEvent"`)).rows[0].events).toBe(events);
          const written = await post(`/v2/users/${ids.user.id}/rank-records`, {
            rank_id: other,
            type: 0,
            text: "accepted",
          });
          expect(written.status).toBe(200);
          expect((await get(`/v2/newsfeed`))[0]).toMatchObject({
            subject_id: (await written.json()).data.id,
            text: "accepted",
          });
        } finally {
          await admin.query(
            `DROP TRIGGER IF EXISTS refuse_record ON "RankRecord"; DROP FUNCTION IF EXISTS refuse_record()`,
          );
          await admin.end();
        }
      });

      const divide = `SELECT 10 / $1::int`;
      const add = `SELECT $1::int + 1`;
      it("a page of rank records with its authors, ranks and images takes three round trips: the key, the page, then the authors' latest records with the ranks' images in one write", async () => {
        const path = `/v2/users/${ids.user.id}/rank-records?include=author,rank.image&limit=5`;
        const get = () => app.yoga.fetch(`http://muster.test${path}`, { headers: { authorization: `Bearer ${key}` } });
        expect(
          (
            await post(`/v2/users/${ids.user.id}/rank-records`, {
              rank_id: ids.corporal.id,
              type: 0,
              author_id: ids.user.id,
            })
          ).status,
        ).toBe(200);
        // Until every statement is prepared on the connections it goes out on (a statement's first time there goes alone).
        for (let i = 0; i < 3; i++) expect((await get()).status).toBe(200);
        const before = chunks();
        const reply = await get();
        expect(reply.status).toBe(200);
        expect(chunks() - before).toBe(3);
        const rows = (await reply.json()).data;
        expect(rows.length).toBeGreaterThan(0);
        expect(rows[0].author).toMatchObject({ id: ids.user.id, last_rank_change_date: rows[0].created_at });
      });

      /** Each statement once, alone, so that the connection the next reads check out has both prepared. */
      const warmReads = async () => {
        for (const sql of [divide, add]) await db.read(sql, [1]);
      };

      it("reads asked for in one turn of the event loop share one write, each answered with its own rows", async () => {
        await warmReads();
        const before = chunks();
        expect(await Promise.all([db.read(divide, [5]), db.read(add, [2]), db.read(divide, [2])])).toEqual([
          [[2]],
          [[3]],
          [[5]],
        ]);
        expect(chunks() - before).toBe(1);
      });

      it("a read that fails answers with its error and the reads beside it with their own rows; the pool serves the next", async () => {
        for (let i = 0; i < 12; i++) {
          await warmReads();
          const settled = await Promise.allSettled([
            db.read(add, [i]),
            db.read(divide, [0]),
            db.read(add, [i + 1]),
            db.read(divide, [5]),
          ]);
          expect(settled[0]).toEqual({ status: "fulfilled", value: [[i + 1]] });
          expect(settled[1]).toMatchObject({ status: "rejected", reason: { message: "division by zero" } });
          expect(settled[2]).toEqual({ status: "fulfilled", value: [[i + 2]] });
          expect(settled[3]).toEqual({ status: "fulfilled", value: [[2]] });
        }
        expect(await Promise.all([db.read(add, [41]), db.read(divide, [10])])).toEqual([[[42]], [[1]]]);
      });

      it("more reads at once than one write takes are all answered, over several writes", async () => {
        await warmReads();
        const before = chunks();
        const values = Array.from({ length: 30 }, (_, i) => i);
        expect(await Promise.all(values.map((v) => db.read(add, [v])))).toEqual(values.map((v) => [[v + 1]]));
        expect(chunks() - before).toBeGreaterThanOrEqual(4);
      });

      it("connections lost while a read and a transaction run on them fail those with an error; the reads beside are sent again, and the next answered", async () => {
        await warmReads();
        const sleep = `SELECT pg_sleep($1::float8)`;
        const settled = Promise.allSettled([
          db.read(sleep, [1]),
          db.read(add, [1]),
          db.read(divide, [1]),
          db.store.transaction(
            mayRunTwice(async (tx) => void (await tx.sql.all(sleep, [1]))),
            { direct: true },
          ),
        ]);
        // As an administrator, or a server shutting down, would: the two connections running pg_sleep.
        const admin = new pg.Client({ connectionString: h.config.databaseUrl });
        await admin.connect();
        try {
          for (let terminated = 0; terminated < 2; ) {
            await new Promise((resolve) => setTimeout(resolve, 50));
            const { rows } = await admin.query(
              `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%pg_sleep%' AND state = 'active' AND pid <> pg_backend_pid()`,
            );
            terminated += rows.length;
          }
        } finally {
          await admin.end();
        }
        const [slow, added, divided, transaction] = await settled;
        const lost = { status: "rejected", reason: { message: expect.stringMatching(/terminat/i) } };
        expect(slow).toMatchObject(lost);
        expect(transaction).toMatchObject(lost);
        expect([added, divided]).toEqual([
          { status: "fulfilled", value: [[2]] },
          { status: "fulfilled", value: [[10]] },
        ]);
        expect(await Promise.all([db.read(add, [41]), db.read(divide, [10])])).toEqual([[[42]], [[1]]]);
        expect(
          await db.store.transaction(
            mayRunTwice((tx) => tx.sql.all(add, [1])),
            { direct: true },
          ),
        ).toEqual([[2]]);
      });

      /** Runs `work` in a direct transaction after preparing both statements on its connection, so that they can batch. */
      const prepared = (work: (all: (sql: string, params: unknown[]) => Promise<unknown[][]>) => Promise<void>) =>
        db.store.transaction(
          mayRunTwice(async (tx) => {
            await tx.sql.all(divide, [1]);
            await tx.sql.all(add, [1]);
            await work((sql, params) => tx.sql.all(sql, params));
          }),
          { direct: true },
        );

      it("statements asked for side by side in a transaction share one write, each answered with its own rows", async () => {
        await prepared(async (all) => {
          const before = chunks();
          expect(await Promise.all([all(divide, [5]), all(add, [2]), all(divide, [2])])).toEqual([[[2]], [[3]], [[5]]]);
          expect(chunks() - before).toBe(1);
        });
      });

      it("when one of them fails, it and the ones after it fail with its error, the ones before it answer; the transaction rolls back and the connections serve the next", async () => {
        for (let i = 0; i < 12; i++) {
          await expect(
            prepared(async (all) => {
              const before = chunks();
              const settled = await Promise.allSettled([all(add, [1]), all(divide, [0]), all(add, [2])]);
              expect(chunks() - before).toBe(1);
              expect(settled[0]).toEqual({ status: "fulfilled", value: [[2]] });
              for (const failed of settled.slice(1))
                expect(failed).toMatchObject({ status: "rejected", reason: { message: "division by zero" } });
              throw (settled[1] as PromiseRejectedResult).reason;
            }),
          ).rejects.toThrow("division by zero");
        }
        await prepared(async (all) => {
          expect(await Promise.all([all(add, [41]), all(divide, [10])])).toEqual([[[42]], [[1]]]);
        });
      });
    },
  );
});
