import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { createTestDatabase, testProvider } from "./harness.ts";
import { loadConfig } from "../src/config.ts";
import { migrate } from "../src/db/migrate.ts";
import { openDatabase, type Database } from "../src/db/prisma.ts";
import { createApiKey } from "../src/auth/accounts.ts";
import { createApp, type App } from "../src/server/app.ts";

/**
 * On PostgreSQL a write's change events are its transaction's last statement and go out with its COMMIT, in one write
 * to the socket (src/db/read-drivers.ts, `allAtCommit`). Watched on the wire: the service talks to PostgreSQL through a
 * TCP relay that keeps what it sends, chunk by chunk.
 */
describe.skipIf(testProvider !== "postgresql")("the change events and the COMMIT in one round trip (PostgreSQL)", () => {
  let dir: string;
  let database: { url: string; drop(): Promise<void> };
  let relay: net.Server;
  const sockets = new Set<net.Socket>();
  /** What the service sent to PostgreSQL, one entry per chunk read by the relay. */
  let sent: Buffer[] = [];
  let db: Database;
  let app: App;
  let key: string;
  let admin: pg.Client;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "muster-commit-"));
    database = await createTestDatabase(dir);
    await migrate(database.url);
    const target = new URL(database.url);
    relay = net.createServer((client) => {
      const server = net.connect(Number(target.port || 5432), target.hostname);
      for (const s of [client, server]) sockets.add(s);
      client.on("data", (chunk: Buffer) => void sent.push(chunk));
      client.pipe(server).pipe(client);
      const close = () => (client.destroy(), server.destroy());
      client.on("error", close).on("close", close);
      server.on("error", close).on("close", close);
    });
    await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
    const relayed = new URL(database.url);
    relayed.host = `127.0.0.1:${(relay.address() as net.AddressInfo).port}`;
    db = await openDatabase(relayed.toString());
    app = createApp({ db, config: { ...loadConfig({}), logLevel: "silent", databaseUrl: relayed.toString(), storageDir: path.join(dir, "files") } });
    key = (await createApiKey(db.store, { account: "commit", scopes: "*" })).key;
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await app?.events.close();
    await db?.close();
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => relay?.close(resolve));
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const call = async (method: string, url: string, body?: unknown) => {
    const res = await app.yoga.fetch(`http://localhost${url}`, {
      method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  const text = (chunk: Buffer) => chunk.toString("latin1");

  test("a write sends its change events and COMMIT together, and announces the events as stored", async () => {
    const user = await call("POST", "/v2/users", { name: "Avery Stone", email: "avery@example.com" });
    const rank = await call("POST", "/v2/ranks", { name: "Sergeant", abbreviation: "SGT" });
    expect([user.status, rank.status]).toEqual([200, 200]);
    const announced: unknown[] = [];
    const subscription = (async () => {
      for await (const batch of app.events.pubsub.subscribe("committed")) {
        announced.push(batch);
        break;
      }
    })();
    sent = [];
    const created = await call("POST", `/v2/users/${user.body.data.id}/rank-records`, { rank_id: rank.body.data.id, type: 0, text: "Promoted" });
    expect(created.status).toBe(200);
    const commits = sent.filter((chunk) => text(chunk).includes("COMMIT"));
    expect(commits).toHaveLength(1);
    expect(text(commits[0]!)).toContain('INSERT INTO "ChangeEvent"');
    await subscription;
    const stored = await admin.query(`SELECT id, type, txid::text FROM "ChangeEvent" WHERE "recordId" = $1 AND resource = 'rankRecord'`, [created.body.data.id]);
    expect(stored.rows).toHaveLength(1);
    const events = (announced[0] as { events: Array<{ id: number; type: string; txid: string }> }).events;
    expect(events.find((e) => e.type === "rankrecord.created")).toMatchObject({ id: stored.rows[0].id, txid: stored.rows[0].txid });
  });

  test("when the database refuses the change events, nothing of the write is stored, and the next write goes through", async () => {
    await admin.query(`CREATE FUNCTION refuse_event() RETURNS trigger AS $$ BEGIN
      IF NEW."data"->>'text' = 'refused' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`);
    await admin.query(`CREATE TRIGGER refuse_event BEFORE INSERT ON "ChangeEvent" FOR EACH ROW EXECUTE FUNCTION refuse_event()`);
    const user = await call("POST", "/v2/users", { name: "Blake Moss", email: "blake@example.com" });
    const ranks = await Promise.all(["Corporal", "Captain"].map((name) => call("POST", "/v2/ranks", { name })));
    const before = await admin.query(`SELECT count(*)::int AS n FROM "RankRecord"`);
    const refused = await call("POST", `/v2/users/${user.body.data.id}/rank-records`, { rank_id: ranks[0]!.body.data.id, type: 0, text: "refused" });
    expect(refused.status).toBe(500);
    expect(refused.body.error).toMatchObject({ type: "HttpException", message: expect.stringContaining("server error") });
    expect((await admin.query(`SELECT count(*)::int AS n FROM "RankRecord"`)).rows[0].n).toBe(before.rows[0].n);
    expect((await admin.query(`SELECT "rankId" FROM "User" WHERE id = $1`, [user.body.data.id])).rows[0].rankId).toBeNull();
    const accepted = await call("POST", `/v2/users/${user.body.data.id}/rank-records`, { rank_id: ranks[1]!.body.data.id, type: 0, text: "accepted" });
    expect(accepted.status).toBe(200);
    expect((await admin.query(`SELECT "rankId" FROM "User" WHERE id = $1`, [user.body.data.id])).rows[0].rankId).toBe(ranks[1]!.body.data.id);
    expect((await admin.query(`SELECT count(*)::int AS n FROM "RankRecord"`)).rows[0].n).toBe(before.rows[0].n + 1);
  });
});
