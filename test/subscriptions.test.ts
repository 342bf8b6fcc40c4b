/**
 * GraphQL subscriptions over Server-Sent Events, through the app's own HTTP pipeline (`yoga.fetch`): each test opens
 * a stream, writes through REST with another request, and reads the typed payload the write pushed.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { decodeCursor } from "../src/events/feed.ts";
import { openSubscriptions } from "../src/graphql/subscriptions.ts";
import { client, startHarness, type Client, type Harness, type Reply } from "./harness.ts";
import { readEventStream, type EventStream } from "./support/event-stream.ts";

const PER_KEY = 3;

let h: Harness;
let key: string;
let api: Client;
let ids: { rank: number; corporal: number; user: number };

/** Opens a subscription over SSE: POST /graphql with `Accept: text/event-stream` (or GET with the query in the URL). */
async function subscribe(
  apiKey: string | null,
  query: string,
  variables?: Record<string, unknown>,
  method: "POST" | "GET" = "POST",
): Promise<EventStream> {
  const headers: Record<string, string> = { accept: "text/event-stream" };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  const url = new URL("http://muster.test/graphql");
  let body: string | undefined;
  if (method === "GET") {
    url.searchParams.set("query", query);
    if (variables) url.searchParams.set("variables", JSON.stringify(variables));
  } else {
    headers["content-type"] = "application/json";
    body = JSON.stringify({ query, variables });
  }
  return readEventStream(await h.app.yoga.fetch(url, { method, headers, body }));
}

const ok = async (p: Promise<Reply>) => {
  const r = await p;
  if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data;
};

const RANK_RECORDS = `subscription Changes($where: RecordChangedWhere) {
  rankRecordChanged(where: $where) {
    eventId type action cursor rowId deletedId changes data createdAt requestId
    rankRecord { rowId text type rank { name } user { name rank { name } } }
  }
}`;

beforeAll(async () => {
  h = await startHarness({ subscriptionsPerKey: PER_KEY });
  key = await h.key("alpha");
  api = client(h, await h.key("alpha"));
  const rank = await ok(api.post("/v2/ranks", { name: "Private", abbreviation: "PVT" }));
  const corporal = await ok(api.post("/v2/ranks", { name: "Corporal", abbreviation: "CPL" }));
  const user = await ok(api.post("/v2/users", { name: "Ann Smith", email: "ann@example.com", rank_id: rank.id }));
  ids = { rank: rank.id, corporal: corporal.id, user: user.id };
});

afterAll(async () => {
  await h?.close();
});

describe("change streams over SSE", () => {
  test("a rank record created through REST arrives as a typed payload, its rank and user (with the user's new rank) selected", async () => {
    const stream = await subscribe(key, RANK_RECORDS);
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const created = await ok(
      api.post("/v2/rank-records", { user_id: ids.user, rank_id: ids.corporal, type: 0, text: "Promoted" }),
    );
    const { data, errors } = await stream.next();
    expect(errors).toBeUndefined();
    const change = data.rankRecordChanged;
    expect(change).toMatchObject({
      type: "rankrecord.created",
      action: "CREATED",
      rowId: created.id,
      deletedId: null,
      changes: null,
      rankRecord: {
        rowId: created.id,
        text: "Promoted",
        rank: { name: "Corporal" },
        user: { name: "Ann Smith", rank: { name: "Corporal" } },
      },
    });
    expect(change.data).toMatchObject({ id: created.id, user_id: ids.user, rank_id: ids.corporal, text: "Promoted" });
    expect(decodeCursor(change.cursor)).toMatchObject({ id: change.eventId });
    expect(typeof change.requestId).toBe("string");
    // The cursor resumes the change feed right after this event: what follows it is the rank record's side effects, not itself.
    const after = await api.get(`/v2/changes?after=${encodeURIComponent(change.cursor)}`);
    expect(after.status).toBe(200);
    expect(JSON.stringify(after.body)).not.toContain(`"id":${change.eventId},`);
    await stream.close();
  });

  test("an update carries its changes and the record as it is when pushed; GET works as POST does", async () => {
    const user = await ok(api.post("/v2/users", { name: "Cal Smith", email: "cal@example.com", rank_id: ids.rank }));
    const stream = await subscribe(
      key,
      "subscription($ids: [Int!]) { userChanged(where: { rowIds: $ids }) { action changes user { name rankRecords { totalCount } } } }",
      { ids: [user.id] },
      "GET",
    );
    expect(stream.status).toBe(200);
    await ok(api.patch(`/v2/users/${user.id}`, { name: "Cal Jones" }));
    const first = (await stream.next()).data.userChanged;
    // The name changes the attributes computed from it too, as REST shows them.
    expect(first).toMatchObject({
      action: "UPDATED",
      changes: { name: { old: "Cal Smith", new: "Cal Jones" }, display_name: { old: "Cal Smith", new: "Cal Jones" } },
      user: { name: "Cal Jones", rankRecords: { totalCount: 0 } },
    });
    expect(Object.keys(first.changes).sort()).toEqual(["display_name", "name", "profile_photo_url"]);
    // A rank record sets the user's rank: the user's update is pushed, its records counted again (a count cached for
    // the first event would still say 0: each event runs with a context of its own).
    await ok(api.post("/v2/rank-records", { user_id: user.id, rank_id: ids.corporal, type: 0 }));
    const second = (await stream.next()).data.userChanged;
    expect(second).toEqual({
      action: "UPDATED",
      changes: { rank_id: { old: ids.rank, new: ids.corporal } },
      user: { name: "Cal Jones", rankRecords: { totalCount: 1 } },
    });
    await stream.close();
  });

  test("a deletion arrives with the row id, the global id and the last state, and a null record", async () => {
    const rank = await ok(api.post("/v2/ranks", { name: "Sergeant", abbreviation: "SGT" }));
    const stream = await subscribe(key, "subscription { rankChanged { action rowId deletedId data rank { name } } }");
    await ok(api.delete(`/v2/ranks/${rank.id}`));
    const change = (await stream.next()).data.rankChanged;
    expect(change).toMatchObject({
      action: "DELETED",
      rowId: rank.id,
      rank: null,
      data: { id: rank.id, name: "Sergeant" },
    });
    expect(Buffer.from(change.deletedId, "base64").toString()).toBe(`Rank:${rank.id}`);
    await stream.close();
  });

  test("where: only the actions and the row ids asked for are pushed", async () => {
    const deletions = await subscribe(
      key,
      "subscription { rankChanged(where: { actions: [DELETED] }) { action rowId } }",
    );
    const rank = await ok(api.post("/v2/ranks", { name: "Major", abbreviation: "MAJ" }));
    const other = await ok(api.post("/v2/ranks", { name: "Colonel", abbreviation: "COL" }));
    const oneRank = await subscribe(
      key,
      "subscription($ids: [Int!]) { rankChanged(where: { rowIds: $ids }) { action rowId } }",
      { ids: [other.id] },
    );
    await ok(api.patch(`/v2/ranks/${rank.id}`, { name: "Major General" }));
    await ok(api.patch(`/v2/ranks/${other.id}`, { name: "Colonel General" }));
    await ok(api.delete(`/v2/ranks/${rank.id}`));
    // The creations and the update came first, but only the deletion is pushed.
    expect((await deletions.next()).data.rankChanged).toEqual({ action: "DELETED", rowId: rank.id });
    expect((await oneRank.next()).data.rankChanged).toEqual({ action: "UPDATED", rowId: other.id });
    await ok(api.delete(`/v2/ranks/${other.id}`));
    expect((await oneRank.next()).data.rankChanged).toEqual({ action: "DELETED", rowId: other.id });
    expect((await deletions.next()).data.rankChanged).toEqual({ action: "DELETED", rowId: other.id });
    await Promise.all([deletions.close(), oneRank.close()]);
  });

  test("newsfeedItemAdded pushes the item a new announcement adds to the newsfeed", async () => {
    const stream = await subscribe(
      key,
      "subscription { newsfeedItemAdded { action type newsfeedItem { headline text } } }",
    );
    await ok(api.post("/v2/announcements", { title: "Muster at dawn", content: "Bring boots.", color: "info" }));
    expect((await stream.next()).data.newsfeedItemAdded).toEqual({
      action: "CREATED",
      type: "newsfeeditem.created",
      newsfeedItem: { headline: "Muster at dawn", text: "Bring boots." },
    });
    await stream.close();
  });
});

describe("who sees what", () => {
  test("account B never sees account A's events", async () => {
    const bravo = await h.key("bravo");
    const bravoApi = client(h, bravo);
    const stream = await subscribe(bravo, "subscription { rankChanged { rank { name } } }");
    await ok(api.post("/v2/ranks", { name: "Alpha's rank", abbreviation: "A" }));
    await ok(bravoApi.post("/v2/ranks", { name: "Bravo's rank", abbreviation: "B" }));
    // Alpha's event was published first: the first one bravo receives is its own.
    expect((await stream.next()).data.rankChanged.rank.name).toBe("Bravo's rank");
    await stream.close();
  });

  test("a key without view:rankrecord cannot subscribe to rank records, nor select users through them without view:user", async () => {
    const usersOnly = await h.key("alpha", "view:user");
    const refused = await subscribe(usersOnly, "subscription { rankRecordChanged { rowId } }");
    expect(refused.status).toBe(403);
    const { errors } = await refused.next();
    expect(errors[0].extensions.code).toBe("FORBIDDEN");
    expect(errors[0].message).toContain("view:rankrecord");
    expect(errors[0].extensions).toMatchObject({
      status: 403,
      request_id: refused.headers.get("x-perscom-request-id"),
    });
    await refused.completed();

    const recordsOnly = await h.key("alpha", "view:rankrecord");
    const throughUser = await subscribe(
      recordsOnly,
      "subscription { rankRecordChanged { rankRecord { user { name } } } }",
    );
    expect(throughUser.status).toBe(403);
    const relation = await throughUser.next();
    expect(relation.errors[0].extensions.code).toBe("FORBIDDEN");
    expect(relation.errors[0].message).toContain("view:user");

    const allowed = await subscribe(recordsOnly, "subscription { rankRecordChanged { rankRecord { rowId text } } }");
    expect(allowed.status).toBe(200);
    const created = await ok(
      api.post("/v2/rank-records", { user_id: ids.user, rank_id: ids.rank, type: 1, text: "Demoted" }),
    );
    expect((await allowed.next()).data.rankRecordChanged.rankRecord).toEqual({ rowId: created.id, text: "Demoted" });
    await allowed.close();
  });

  test("an EventSource, which cannot send headers, gives the key as ?apikey=", async () => {
    const url = `http://muster.test/graphql?apikey=${key}&query=${encodeURIComponent("subscription { rankChanged { rank { name } } }")}`;
    const stream = readEventStream(await h.app.yoga.fetch(url, { headers: { accept: "text/event-stream" } }));
    expect(stream.status).toBe(200);
    await ok(api.post("/v2/ranks", { name: "Lieutenant", abbreviation: "LT" }));
    expect((await stream.next()).data.rankChanged.rank.name).toBe("Lieutenant");
    await stream.close();
  });

  test("a subscription without a key is a 401", async () => {
    const stream = await subscribe(null, "subscription { rankChanged { rowId } }");
    expect(stream.status).toBe(401);
    expect((await stream.next()).errors[0].extensions.code).toBe("UNAUTHENTICATED");
  });
});

describe("limits", () => {
  test(`at most subscriptionsPerKey (${PER_KEY}) open per key: the next is a 429 until one closes`, async () => {
    const capped = await h.key("alpha");
    const open: EventStream[] = [];
    for (let i = 0; i < PER_KEY; i++) open.push(await subscribe(capped, "subscription { rankChanged { rowId } }"));
    expect(open.map((s) => s.status)).toEqual(Array(PER_KEY).fill(200));
    const keyId = (await h.db.prisma.apiKey.findFirstOrThrow({ orderBy: { id: "desc" } })).id;
    expect(openSubscriptions(h.app.events, keyId)).toBe(PER_KEY);

    const refused = await subscribe(capped, "subscription { userChanged { rowId } }");
    expect(refused.status).toBe(429);
    const { errors } = await refused.next();
    expect(errors[0].extensions.code).toBe("RATE_LIMITED");
    expect(errors[0].message).toContain("SUBSCRIPTIONS_PER_KEY");
    // Another key is not affected.
    const other = await subscribe(key, "subscription { rankChanged { rowId } }");
    expect(other.status).toBe(200);

    await open.pop()!.close();
    expect(openSubscriptions(h.app.events, keyId)).toBe(PER_KEY - 1);
    const again = await subscribe(capped, "subscription { rankChanged { rowId } }");
    expect(again.status).toBe(200);
    const rank = await ok(api.post("/v2/ranks", { name: "Ensign", abbreviation: "ENS" }));
    expect((await again.next()).data.rankChanged.rowId).toBe(rank.id);
    await Promise.all([...open, other, again].map((s) => s.close()));
    expect(openSubscriptions(h.app.events, keyId)).toBe(0);
  });

  test("a subscription pays one unit of the rate limit when it starts, none per event", async () => {
    const paying = await h.key("alpha");
    const before = await client(h, paying).graphql("{ me { rowId } }");
    const remaining = Number(before.headers.get("x-ratelimit-remaining"));
    const stream = await subscribe(paying, "subscription { rankChanged { rowId } }");
    expect(Number(stream.headers.get("x-ratelimit-remaining"))).toBe(remaining - 1);
    for (const name of ["One", "Two", "Three"]) await ok(api.post("/v2/ranks", { name, abbreviation: name }));
    for (let i = 0; i < 3; i++) await stream.next();
    const after = await client(h, paying).graphql("{ me { rowId } }");
    expect(Number(after.headers.get("x-ratelimit-remaining"))).toBe(remaining - 2);
    await stream.close();
  });
});

describe("the row budget (MAX_ROWS_PER_REQUEST) of a subscription", () => {
  let capped: Harness;
  afterAll(async () => {
    await capped?.close();
  });

  test("each event reads under a budget of its own: events that fit pass one after another, one that reads more is refused", async () => {
    capped = await startHarness({ maxRowsPerRequest: 6 });
    const cappedKey = await capped.key("alpha");
    const rest = client(capped, cappedKey);
    const rank = await ok(rest.post("/v2/ranks", { name: "Private", abbreviation: "PVT" }));
    const corporal = await ok(rest.post("/v2/ranks", { name: "Corporal", abbreviation: "CPL" }));
    const user = await ok(rest.post("/v2/users", { name: "Dee Smith", email: "dee@example.com", rank_id: rank.id }));
    for (let i = 0; i < 3; i++)
      await ok(rest.post("/v2/rank-records", { user_id: user.id, rank_id: rank.id, type: 0 }));
    const headers = {
      accept: "text/event-stream",
      authorization: `Bearer ${cappedKey}`,
      "content-type": "application/json",
    };
    const query =
      "subscription($ids: [Int!]) { userChanged(where: { rowIds: $ids }) { user { name rankRecords(first: 10) { nodes { rowId } } } } }";
    const stream = readEventStream(
      await capped.app.yoga.fetch("http://muster.test/graphql", {
        method: "POST",
        headers,
        body: JSON.stringify({ query, variables: { ids: [user.id] } }),
      }),
    );
    expect(stream.status).toBe(200);
    // Each event reads the user and their records: 1 + 3 rows, twice 4 for two events, more than 6 if they shared a budget.
    for (const name of ["Dee Jones", "Dee Brown"]) {
      await ok(rest.patch(`/v2/users/${user.id}`, { name }));
      const { data, errors } = await stream.next();
      expect(errors).toBeUndefined();
      expect(data.userChanged.user).toMatchObject({ name, rankRecords: { nodes: expect.any(Array) } });
      expect(data.userChanged.user.rankRecords.nodes).toHaveLength(3);
    }
    // A record of another rank changes the user's rank: 1 + 4, then 1 + 5 rows pass; 1 + 6 is more than 6 and that
    // event is refused, not truncated.
    for (const [records, rankId] of [
      [4, corporal.id],
      [5, rank.id],
    ]) {
      await ok(rest.post("/v2/rank-records", { user_id: user.id, rank_id: rankId, type: 0 }));
      const { data, errors } = await stream.next();
      expect(errors).toBeUndefined();
      expect(data.userChanged.user.rankRecords.nodes).toHaveLength(records);
    }
    await ok(rest.post("/v2/rank-records", { user_id: user.id, rank_id: corporal.id, type: 0 }));
    const refused = await stream.next();
    expect(refused.errors?.[0]?.message).toMatch(/more than 6 rows \(MAX_ROWS_PER_REQUEST\)/);
    expect(refused.data?.userChanged?.user ?? null).toBeNull();
    await stream.close();
  });
});

describe("a long-lived subscription holds no execution resources", () => {
  let slow: Harness;
  afterAll(async () => {
    await slow?.close();
  });

  test("it outlives the execution timeout and holds no concurrency place (one place only): queries run beside it", async () => {
    slow = await startHarness({ executionTimeoutMs: 1000, maxConcurrentOperations: 1 });
    const slowKey = await slow.key("alpha");
    const slowApi = client(slow, slowKey);
    const response = await slow.app.yoga.fetch("http://muster.test/graphql", {
      method: "POST",
      headers: { accept: "text/event-stream", "content-type": "application/json", authorization: `Bearer ${slowKey}` },
      body: JSON.stringify({ query: "subscription { rankChanged { rank { name } } }" }),
    });
    const stream = readEventStream(response);
    expect(stream.status).toBe(200);
    // Past the execution timeout (a query racing it would have been cut at 1 s)...
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // ...a query runs though the only place was taken first by the subscription...
    expect((await slowApi.graphql("{ ranks { totalCount } }")).body).toEqual({ data: { ranks: { totalCount: 0 } } });
    // ...and the stream still delivers.
    await ok(slowApi.post("/v2/ranks", { name: "Late", abbreviation: "LT" }));
    expect((await stream.next()).data.rankChanged.rank.name).toBe("Late");
    await stream.close();
  });
});
