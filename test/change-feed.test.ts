/**
 * The change feed (issue 18, point 4): `GET /{v1,v2}/changes` and the GraphQL connection `changes`. A scripted
 * session of real API writes (creates, an update, a batch, a many-to-many attach and sync, a rank record whose hook
 * updates its user, deletes) is replayed by walking the feed from the start a small page at a time: every event in
 * order, with tombstones for deletions; a cursor resumes after its event; `types` and `resources` narrow it; another
 * account and a key without `view:rankrecord` see only what they may; bad input is a 422 naming the field, and a
 * cursor older than the retention period a 410 (CURSOR_EXPIRED in GraphQL).
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { client, startHarness, type Client, type Harness, type Reply } from "./harness.ts";
import { decodeCursor, encodeCursor } from "../src/events/feed.ts";

interface Item {
  id: number;
  event: string;
  created: string;
  request_id: string | null;
  trace_id: string | null;
  resource: string;
  record_id: number;
  data: Record<string, unknown>;
  changes: Record<string, { old: unknown; new: unknown }> | null;
  cursor: string;
}

/** A ChangeEvent node as the GraphQL walk selects it. */
interface ChangeNode {
  id: string;
  rowId: number;
  type: string;
  action: string;
  resource: string;
  recordId: number;
  data: Record<string, unknown>;
  changes: Item["changes"];
  requestId: string | null;
  traceId: string | null;
  actor: { type: string; keyId: number | null } | null;
  automationRunId: number | null;
  depth: number;
  createdAt: string;
  cursor: string;
}

const DAY = 86_400_000;

let h: Harness;
let A: Client;
let B: Client;
/** Key of account A that may view ranks and users, but not rank records, groups or units. */
let narrow: Client;
/** Key of account A that may view nothing. */
let blind: Client;

/** The scripted session: each write request's id, and what it did. */
const session: Array<{ request: string; what: string }> = [];
const ids: Record<string, number> = {};

async function write<T = { data: { id: number } }>(what: string, reply: Promise<Reply>): Promise<T> {
  const r = await reply;
  expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(200);
  session.push({ request: r.headers.get("x-perscom-request-id")!, what });
  return r.body;
}

/** The whole feed as `api` sees it, walked `limit` events at a time from `after`. */
async function walk(
  api: Client,
  limit: number,
  query = "",
  after?: string,
): Promise<{ items: Item[]; pages: number; cursor: string }> {
  const items: Item[] = [];
  let cursor = after;
  for (let pages = 1; ; pages++) {
    const r = await api.get(`/v2/changes?limit=${limit}${query}${cursor ? `&after=${cursor}` : ""}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data.length).toBeLessThanOrEqual(limit);
    items.push(...r.body.data);
    expect(typeof r.body.meta.next_cursor).toBe("string");
    cursor = r.body.meta.next_cursor;
    if (!r.body.meta.has_more) return { items, pages, cursor: cursor! };
    expect(pages).toBeLessThan(500);
  }
}

const summary = (items: Item[]) => items.map((i) => `${i.event}#${i.record_id}`);

beforeAll(async () => {
  h = await startHarness();
  A = client(h, await h.key("alpha"));
  B = client(h, await h.key("beta"));
  narrow = client(h, await h.key("alpha", "view:rank view:user"));
  blind = client(h, await h.key("alpha", "create:rank"));

  const rank = await write("create rank", A.post("/v2/ranks", { name: "Private", abbreviation: "PVT" }));
  ids.rank = rank.data.id;
  const user = await write("create user", A.post("/v2/users", { name: "Ann Smith", email: "ann@example.com" }));
  ids.user = user.data.id;
  await write("update rank", A.patch(`/v2/ranks/${ids.rank}`, { name: "Private First Class" }));
  const batch = await write<{ data: Array<{ id: number }> }>(
    "batch create ranks",
    A.post("/v2/ranks/batch", { resources: [{ name: "Corporal" }, { name: "Sergeant" }] }),
  );
  [ids.corporal, ids.sergeant] = batch.data.map((r) => r.id);
  ids.group = (await write("create group", A.post("/v2/groups", { name: "First Platoon" }))).data.id;
  ids.unit1 = (await write("create unit 1", A.post("/v2/units", { name: "Alpha Squad" }))).data.id;
  ids.unit2 = (await write("create unit 2", A.post("/v2/units", { name: "Bravo Squad" }))).data.id;
  await write("attach unit 1", A.post(`/v2/groups/${ids.group}/units/attach`, { resources: [ids.unit1] }));
  await write("sync to unit 2", A.patch(`/v2/groups/${ids.group}/units/sync`, { resources: [ids.unit2] }));
  const record = await write(
    "rank record",
    A.post(`/v2/users/${ids.user}/rank-records`, { rank_id: ids.corporal, type: 0, text: "Promoted" }),
  );
  ids.record = record.data.id;
  await write("delete rank", A.delete(`/v2/ranks/${ids.sergeant}`));
  // Through GraphQL: the same writes, the same events.
  const created = await A.graphql(`mutation { createRank(input: { name: "Lieutenant" }) { rank { rowId } } }`);
  expect(created.body.errors).toBeUndefined();
  session.push({ request: created.headers.get("x-perscom-request-id")!, what: "graphql create rank" });
  ids.lieutenant = created.body.data.createRank.rank.rowId;
  await write("batch delete ranks", A.delete("/v2/ranks/batch", { resources: [ids.lieutenant, ids.rank] }));

  await write("account B creates a rank", B.post("/v2/ranks", { name: "Beta rank" }));
});

afterAll(async () => {
  await h?.close();
});

describe("the feed replays a scripted session", () => {
  let all: Item[];
  beforeAll(async () => {
    ({ items: all } = await walk(A, 100));
  });

  test("walked two events a page, it gives every event once, in order, the same as in one page", async () => {
    const paged = await walk(A, 2);
    expect(paged.pages).toBeGreaterThan(5);
    expect(paged.items).toEqual(all);
    expect(new Set(all.map((i) => i.id)).size).toBe(all.length);
    // v1 answers alike.
    const v1 = await A.get("/v1/changes?limit=100");
    expect(v1.body.data).toEqual(all);
  });

  test("each write request's events come together, in the order of the requests; reads record nothing", () => {
    const requests = session.filter((s) => s.what !== "account B creates a rank").map((s) => s.request);
    const order = [...new Set(all.map((i) => i.request_id))];
    expect(order).toEqual(requests);
    for (const item of all) expect(item.trace_id).toEqual(expect.any(String));
  });

  const of = (what: string) => all.filter((i) => i.request_id === session.find((s) => s.what === what)!.request);

  test("creates carry the record as REST shows it", () => {
    expect(summary(of("create rank"))).toEqual([`rank.created#${ids.rank}`]);
    const [created] = of("create rank");
    expect(created).toMatchObject({
      resource: "rank",
      changes: null,
      data: { id: ids.rank, name: "Private", abbreviation: "PVT" },
    });
    expect(Date.parse(created.created)).not.toBeNaN();
    // A new person is linked to the default roles in the same write.
    expect(summary(of("create user"))).toEqual([
      `user.created#${ids.user}`,
      expect.stringMatching(/^userrole\.created#\d+$/),
    ]);
  });

  test("an update carries the changed columns, old → new", () => {
    const [updated] = of("update rank");
    expect(updated).toMatchObject({
      event: "rank.updated",
      record_id: ids.rank,
      data: { name: "Private First Class" },
    });
    expect(updated.changes).toEqual({ name: { old: "Private", new: "Private First Class" } });
  });

  test("a batch gives one event per row, in request order", () => {
    expect(summary(of("batch create ranks"))).toEqual([`rank.created#${ids.corporal}`, `rank.created#${ids.sergeant}`]);
    expect(summary(of("batch delete ranks"))).toEqual([`rank.deleted#${ids.lieutenant}`, `rank.deleted#${ids.rank}`]);
  });

  test("attach and sync on a many-to-many relation record the link rows", () => {
    const attached = of("attach unit 1");
    expect(attached.map((i) => i.event)).toEqual(["groupunit.created"]);
    expect(attached[0].data).toMatchObject({ group_id: ids.group, unit_id: ids.unit1 });
    const synced = of("sync to unit 2");
    expect(synced.map((i) => i.event).sort()).toEqual(["groupunit.created", "groupunit.deleted"]);
    expect(synced.find((i) => i.event === "groupunit.deleted")!.data).toMatchObject({ unit_id: ids.unit1 });
    expect(synced.find((i) => i.event === "groupunit.created")!.data).toMatchObject({ unit_id: ids.unit2 });
  });

  test("a rank record's side effect on its user is an event of its own, in the same request", () => {
    const events = of("rank record");
    expect(events.filter((i) => i.event === "rankrecord.created").map((i) => i.record_id)).toEqual([ids.record]);
    const user = events.filter((i) => i.event === "user.updated");
    expect(user.map((i) => i.record_id)).toEqual([ids.user]);
    expect(user[0].changes!.rank_id).toEqual({ old: null, new: ids.corporal });
    expect(user[0].data.rank_id).toBe(ids.corporal);
  });

  test("a deletion is a tombstone: the type, the record id and its last state", () => {
    const [deleted] = of("delete rank");
    expect(deleted).toMatchObject({
      event: "rank.deleted",
      resource: "rank",
      record_id: ids.sergeant,
      changes: null,
      data: { id: ids.sergeant, name: "Sergeant" },
    });
    expect(summary(of("graphql create rank"))).toEqual([`rank.created#${ids.lieutenant}`]);
  });

  test("resuming from an event's cursor gives only the events after it", async () => {
    for (const at of [0, 4, all.length - 2]) {
      const rest = await walk(A, 3, "", all[at].cursor);
      expect(rest.items).toEqual(all.slice(at + 1));
    }
  });

  test("at the end, next_cursor resumes there: nothing until something new is written, then only that", async () => {
    const end = await walk(A, 5);
    const again = await A.get(`/v2/changes?after=${end.cursor}`);
    expect(again.body).toEqual({ data: [], meta: { next_cursor: expect.any(String), has_more: false } });
    await write("create rank after the walk", A.post("/v2/ranks", { name: "Captain" }));
    const next = await A.get(`/v2/changes?after=${again.body.meta.next_cursor}`);
    expect(next.body.data.map((i: Item) => i.event)).toEqual(["rank.created"]);
    expect(next.body.data[0].data.name).toBe("Captain");
    expect(next.body.data[0].id).toBeGreaterThan(all.at(-1)!.id);
    all.push(next.body.data[0]);
  });

  test("types and resources narrow the feed", async () => {
    const deletions = await walk(A, 2, "&types=rank.deleted");
    expect(deletions.items).toEqual(all.filter((i) => i.event === "rank.deleted"));
    expect(deletions.items).toHaveLength(3);
    const two = await walk(A, 100, "&types=rank.created,user.updated");
    expect(two.items).toEqual(all.filter((i) => i.event === "rank.created" || i.event === "user.updated"));
    const repeated = await walk(A, 100, "&types=rank.created&types=user.updated");
    expect(repeated.items).toEqual(two.items);
    const records = await walk(A, 100, "&resources=rankRecord,user");
    expect(records.items).toEqual(all.filter((i) => i.resource === "rankRecord" || i.resource === "user"));
    const both = await walk(A, 100, "&resources=user&types=user.updated,rank.created");
    expect(both.items).toEqual(all.filter((i) => i.event === "user.updated"));
  });
});

describe("who sees what", () => {
  test("account B sees its own events only, and A none of B's", async () => {
    const b = await walk(B, 10);
    expect(summary(b.items)).toEqual([expect.stringMatching(/^rank\.created#/)]);
    expect(b.items[0].data.name).toBe("Beta rank");
    const a = await walk(A, 100);
    expect(a.items.some((i) => i.data.name === "Beta rank")).toBe(false);
    // A's cursor in B's feed is only a position: B still sees only its own events.
    const crossed = await walk(B, 10, "", a.items[0].cursor);
    expect(crossed.items.every((i) => i.data.name === "Beta rank")).toBe(true);
  });

  test("a key without view:rankrecord sees no rank-record events, nor those of links it may not view", async () => {
    const full = (await walk(A, 100)).items;
    const seen = (await walk(narrow, 3)).items;
    expect(seen).toEqual(full.filter((i) => i.resource === "rank" || i.resource === "user"));
    expect(seen.some((i) => i.event === "user.updated")).toBe(true);
    // Asking for them explicitly does not help.
    const asked = await narrow.get("/v2/changes?types=rankrecord.created");
    expect(asked.status).toBe(200);
    expect(asked.body.data).toEqual([]);
    const nothing = await walk(blind, 10);
    expect(nothing.items).toEqual([]);
  });

  test("without a key: 401", async () => {
    const r = await client(h, null).get("/v2/changes");
    expect(r.status).toBe(401);
  });
});

describe("bad input", () => {
  const expect422 = async (url: string, field: string) => {
    const r = await A.get(url);
    expect(r.status, `${url}: ${JSON.stringify(r.body)}`).toBe(422);
    expect(Object.keys(r.body.error.errors)).toEqual([field]);
    expect(r.body.error.type).toBe("ValidationException");
  };

  test("a cursor that is not one, an unknown type or resource, a limit outside 1..max: 422 naming the field", async () => {
    await expect422("/v2/changes?after=not-a-cursor", "after");
    await expect422(`/v2/changes?after=${Buffer.from("c1:0:1:x").toString("base64url")}`, "after");
    await expect422("/v2/changes?after=%E2%9C%93", "after");
    await expect422("/v2/changes?types=rank.created,rank.exploded", "types");
    await expect422("/v2/changes?types=webhook.test", "types");
    await expect422("/v2/changes?resources=spaceship", "resources");
    await expect422("/v2/changes?limit=0", "limit");
    await expect422(`/v2/changes?limit=${h.config.maxPageSize + 1}`, "limit");
    await expect422("/v2/changes?limit=-3", "limit");
    await expect422("/v2/changes?limit=ten", "limit");
  });

  test("a cursor older than the retention period: 410, so the client re-crawls", async () => {
    const old = encodeCursor({
      txid: "0",
      id: 1,
      createdAt: new Date(Date.now() - (h.config.eventRetentionDays + 1) * DAY),
    });
    const r = await A.get(`/v2/changes?after=${old}`);
    expect(r.status).toBe(410);
    expect(r.body.error).toMatchObject({
      type: "GoneHttpException",
      message: expect.stringMatching(/retention period/),
      request_id: expect.any(String),
    });
    expect(r.body.error.errors).toBeUndefined();
  });

  test("a cursor still inside the retention period resumes, and the end of the feed gives a fresh one", async () => {
    const last = (await walk(A, 100)).items.at(-1)!;
    const position = decodeCursor(last.cursor)!;
    const aging = encodeCursor({
      txid: position.txid,
      id: position.id,
      createdAt: new Date(Date.now() - (h.config.eventRetentionDays - 1) * DAY),
    });
    const r = await A.get(`/v2/changes?after=${aging}`);
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual([]);
    const fresh = decodeCursor(r.body.meta.next_cursor)!;
    expect({ txid: fresh.txid, id: fresh.id }).toEqual({ txid: position.txid, id: position.id });
    expect(fresh.createdAt).toBeGreaterThan(Date.now() - DAY);
  });
});

describe("GraphQL: changes", () => {
  const PAGE = `query Page($first: Int, $after: String, $where: ChangeEventWhere) {
    changes(first: $first, after: $after, where: $where) {
      pageInfo { hasNextPage hasPreviousPage endCursor }
      edges { cursor node { id rowId type action resource recordId data changes requestId traceId actor { type keyId } automationRunId depth createdAt cursor } }
    }
  }`;

  async function walkGraph(api: Client, first: number, where?: object) {
    const nodes: ChangeNode[] = [];
    let after: string | null = null;
    for (let pages = 1; pages < 500; pages++) {
      const r = await api.graphql(PAGE, { first, after, where });
      expect(r.body.errors, JSON.stringify(r.body.errors)).toBeUndefined();
      const { pageInfo, edges } = r.body.data.changes;
      for (const edge of edges) expect(edge.cursor).toBe(edge.node.cursor);
      nodes.push(...edges.map((e: { node: ChangeNode }) => e.node));
      after = pageInfo.endCursor;
      if (!pageInfo.hasNextPage) return nodes;
    }
    throw new Error("the feed did not end");
  }

  test("walked three at a time, it lists what REST lists, with actions and tombstones", async () => {
    const rest = (await walk(A, 100)).items;
    const nodes = await walkGraph(A, 3);
    expect(
      nodes.map((n) => ({
        id: n.rowId,
        event: n.type,
        created: new Date(n.createdAt).toISOString(),
        request_id: n.requestId,
        trace_id: n.traceId,
        resource: n.resource,
        record_id: n.recordId,
        data: n.data,
        changes: n.changes,
        // The feed's writes are all made with API keys: the typed actor is REST's, field by field.
        actor: n.actor && { type: n.actor.type.toLowerCase(), key_id: n.actor.keyId },
        automation_run_id: n.automationRunId,
        depth: n.depth,
        cursor: n.cursor,
      })),
    ).toEqual(rest);
    for (const n of nodes) expect(n.action).toBe(n.type.split(".")[1].toUpperCase());
    const tombstone = nodes.find((n) => n.action === "DELETED" && n.resource === "rank")!;
    expect(tombstone.data.id).toBe(tombstone.recordId);
    // The global id finds the event again.
    const found = await A.graphql(`query($id: ID!) { node(id: $id) { id ... on ChangeEvent { rowId type } } }`, {
      id: tombstone.id,
    });
    expect(found.body.data.node).toEqual({ id: tombstone.id, rowId: tombstone.rowId, type: tombstone.type });
    const hidden = await narrow.graphql(`query($id: ID!) { node(id: $id) { id } }`, {
      id: nodes.find((n) => n.resource === "rankRecord")!.id,
    });
    expect(hidden.body.data.node).toBeNull();
    const foreign = await B.graphql(`query($id: ID!) { node(id: $id) { id } }`, { id: tombstone.id });
    expect(foreign.body.data.node).toBeNull();
  });

  test("where narrows; account B and a narrow key see what REST shows them", async () => {
    const deleted = await walkGraph(A, 2, { types: ["rank.deleted"] });
    expect(deleted.map((n) => n.action)).toEqual(["DELETED", "DELETED", "DELETED"]);
    const counts =
      await narrow.graphql(`{ all: changes(first: 1) { totalCount } deleted: changes(first: 1, where: { types: ["rank.deleted"] }) { totalCount }
      records: changes(first: 1, where: { resources: ["rankRecord"] }) { totalCount } }`);
    expect(counts.body.data).toEqual({
      all: { totalCount: (await walk(narrow, 100)).items.length },
      deleted: { totalCount: 3 },
      records: { totalCount: 0 },
    });
    const records = await walkGraph(A, 10, { resources: ["rankRecord"] });
    expect(records.map((n) => n.type)).toEqual(["rankrecord.created"]);
    expect((await walkGraph(B, 10)).map((n) => n.data.name)).toEqual(["Beta rank"]);
    expect((await walkGraph(narrow, 10)).map((n) => n.rowId)).toEqual((await walk(narrow, 100)).items.map((i) => i.id));
  });

  test("last reads the newest events, and before pages back", async () => {
    const rest = (await walk(A, 100)).items;
    const newest = await A.graphql(
      `{ changes(last: 2) { pageInfo { hasPreviousPage hasNextPage startCursor endCursor } nodes { rowId } } }`,
    );
    const page = newest.body.data.changes;
    expect(page.nodes.map((n: { rowId: number }) => n.rowId)).toEqual(rest.slice(-2).map((i) => i.id));
    expect(page.pageInfo).toMatchObject({
      hasPreviousPage: true,
      hasNextPage: false,
      startCursor: rest.at(-2)!.cursor,
    });
    // endCursor resumes after the newest event: nothing follows.
    expect((await A.get(`/v2/changes?after=${page.pageInfo.endCursor}`)).body.data).toEqual([]);
    const before = await A.graphql(`query($before: String) { changes(last: 3, before: $before) { nodes { rowId } } }`, {
      before: page.pageInfo.startCursor,
    });
    expect(before.body.data.changes.nodes.map((n: { rowId: number }) => n.rowId)).toEqual(
      rest.slice(-5, -2).map((i) => i.id),
    );
  });

  test("bad arguments: VALIDATION naming the argument; an expired cursor: CURSOR_EXPIRED (410)", async () => {
    const refused = async (query: string, variables: Record<string, unknown>, key: string) => {
      const r = await A.graphql(query, variables);
      expect(r.status).toBe(200);
      expect(r.body.data.changes).toBeNull();
      expect(r.body.errors[0].extensions).toMatchObject({ code: "VALIDATION", status: 422 });
      expect(Object.keys(r.body.errors[0].extensions.errors)).toEqual([key]);
    };
    await refused(`query($after: String) { changes(after: $after) { nodes { id } } }`, { after: "nope" }, "after");
    await refused(`{ changes(where: { types: ["rank.vanished"] }) { nodes { id } } }`, {}, "where.types");
    await refused(`{ changes(where: { resources: ["nothing"] }) { nodes { id } } }`, {}, "where.resources");
    await refused(`{ changes(first: ${h.config.maxPageSize + 1}) { nodes { id } } }`, {}, "first");
    await refused(`{ changes(first: -1) { nodes { id } } }`, {}, "first");
    const expired = encodeCursor({
      txid: "0",
      id: 1,
      createdAt: new Date(Date.now() - (h.config.eventRetentionDays + 2) * DAY),
    });
    const r = await A.graphql(`query($after: String) { changes(after: $after) { nodes { id } } }`, { after: expired });
    expect(r.body.data.changes).toBeNull();
    expect(r.body.errors[0].extensions).toMatchObject({ code: "CURSOR_EXPIRED", status: 410 });
    expect(r.body.errors[0].path).toEqual(["changes"]);
  });
});
