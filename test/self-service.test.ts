import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { client, startHarness, type Client, type Harness } from "./harness.ts";
import { cliArgs } from "./support/built.ts";
import { readEventStream } from "./support/event-stream.ts";

/*
 * Self-service rights (issue 42, item 2, src/resources/self-service.ts): a signed-in person whose roles give nothing
 * (the built-in User role) reads their own user, its relations, records, submissions and tasks, changes their own
 * name, and submits forms as themselves; nothing of anyone else's, and nothing more. A person here is an SSO token's
 * subject, minted with jose as another site would; an API key holds exactly its scopes and no such right.
 */

const run = promisify(execFile);
let h: Harness;
let admin: Client;
let accountId: number;
let secret: string;
const ids = { me: 0, other: 0, myRank: 0, otherRank: 0, myRecord: 0, otherRecord: 0, form: 0, otherSubmission: 0 };
let me: Client;

async function tokenFor(sub: number, scopes: string[] = ["*"]): Promise<string> {
  return new SignJWT({ tenant: String(accountId), scopes })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(String(sub))
    .setIssuedAt()
    .setExpirationTime("5m")
    .sign(new TextEncoder().encode(secret));
}

async function made(path: string, body: unknown): Promise<number> {
  const reply = await admin.post(path, body);
  expect(reply.status, `${path}: ${JSON.stringify(reply.body).slice(0, 300)}`).toBe(200);
  return reply.body.data.id as number;
}

beforeAll(async () => {
  h = await startHarness();
  admin = client(h, await h.key("alpha"));
  accountId = (await h.db.store.prisma.account.findUniqueOrThrow({ where: { name: "alpha" } })).id;
  const { stdout } = await run(process.execPath, [...cliArgs, "sso:rotate", "--account", "alpha"], {
    env: { ...process.env, DATABASE_URL: h.config.databaseUrl },
  });
  secret = stdout.trim().split("\n").at(-1)!;
  ids.myRank = await made("/v2/ranks", { name: "Self Private" });
  ids.otherRank = await made("/v2/ranks", { name: "Self Captain" });
  ids.me = await made("/v2/users", { name: "Self Person", email: "self.person@example.com", rank_id: ids.myRank });
  ids.other = await made("/v2/users", { name: "Self Other", email: "self.other@example.com", rank_id: ids.otherRank });
  ids.myRecord = await made("/v2/rank-records", { user_id: ids.me, rank_id: ids.myRank, text: "mine", type: 0 });
  ids.otherRecord = await made("/v2/rank-records", {
    user_id: ids.other,
    rank_id: ids.otherRank,
    text: "theirs",
    type: 0,
  });
  ids.form = await made("/v2/forms", { name: "Self Leave Request", slug: "self-leave", is_public: false });
  ids.otherSubmission = await made("/v2/submissions", { form_id: ids.form, user_id: ids.other, data: {} });
  me = client(h, await tokenFor(ids.me));
});
afterAll(() => h.close());

describe("a person with no role permission", () => {
  test("reads their own user, its relations and records through GraphQL `me`", async () => {
    const reply = await me.graphql(
      `{ me { rowId name rank { name } roles { nodes { name } } rankRecords(first: 5) { totalCount nodes { text rank { name } } } } }`,
    );
    expect(reply.body.errors, JSON.stringify(reply.body.errors)).toBeUndefined();
    expect(reply.body.data.me).toEqual({
      rowId: ids.me,
      name: "Self Person",
      rank: { name: "Self Private" },
      roles: { nodes: [{ name: "User" }] },
      rankRecords: { totalCount: 1, nodes: [{ text: "mine", rank: { name: "Self Private" } }] },
    });
  });

  test("REST: their own rows only; another person's are not found", async () => {
    const users = await me.get("/v2/users");
    expect(users.status, JSON.stringify(users.body)).toBe(200);
    expect(users.body.data.map((u: { id: number }) => u.id)).toEqual([ids.me]);
    expect(users.body.meta.total).toBe(1);
    expect((await me.get(`/v2/users/${ids.me}?include=rank_records`)).body.data.rank_records).toEqual([
      expect.objectContaining({ id: ids.myRecord }),
    ]);
    expect((await me.get(`/v2/users/${ids.other}`)).status).toBe(404);
    const records = await me.get("/v2/rank-records");
    expect(records.body.data.map((r: { id: number }) => r.id)).toEqual([ids.myRecord]);
    expect((await me.get(`/v2/rank-records/${ids.otherRecord}`)).status).toBe(404);
    expect((await me.get(`/v2/users/${ids.other}/rank-records`)).status).toBe(404);
    const ranks = await me.get("/v2/ranks");
    expect(ranks.body.data.map((r: { id: number }) => r.id)).toEqual([ids.myRank]);
    expect((await me.get(`/v2/ranks/${ids.otherRank}`)).status).toBe(404);
    expect((await me.get(`/v2/submissions/${ids.otherSubmission}`)).status).toBe(404);
  });

  test("GraphQL: lists and nested lists hold their own rows", async () => {
    const reply = await me.graphql(
      `{ users { totalCount nodes { rowId rankRecords { nodes { rowId } } } } rankRecords { nodes { rowId user { rowId } } } ranks { nodes { rowId } } }`,
    );
    expect(reply.body.errors, JSON.stringify(reply.body.errors)).toBeUndefined();
    expect(reply.body.data).toEqual({
      users: { totalCount: 1, nodes: [{ rowId: ids.me, rankRecords: { nodes: [{ rowId: ids.myRecord }] } }] },
      rankRecords: { nodes: [{ rowId: ids.myRecord, user: { rowId: ids.me } }] },
      ranks: { nodes: [{ rowId: ids.myRank }] },
    });
  });

  test("changes their own name; not their rank, not someone else", async () => {
    const renamed = await me.patch(`/v2/users/${ids.me}`, { name: "Self Renamed" });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(renamed.body.data.name).toBe("Self Renamed");
    const promoted = await me.patch(`/v2/users/${ids.me}`, { rank_id: ids.otherRank });
    expect(promoted.status).toBe(403);
    expect(promoted.body.error.message).toMatch(/not rank_id/);
    expect((await me.patch(`/v2/users/${ids.other}`, { name: "Hijacked" })).status).toBe(404);
    const stored = await h.db.store.prisma.user.findMany({
      where: { id: { in: [ids.me, ids.other] } },
      orderBy: { id: "asc" },
    });
    expect(stored.map((u) => [u.name, u.rankId])).toEqual([
      ["Self Renamed", ids.myRank],
      ["Self Other", ids.otherRank],
    ]);
  });

  test("submits a form as themselves, never as another person", async () => {
    const submitted = await me.post("/v2/submissions", { form_id: ids.form, data: { reason: "leave" } });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    expect(submitted.body.data.user_id).toBe(ids.me);
    const forged = await me.post("/v2/submissions", { form_id: ids.form, user_id: ids.other, data: {} });
    expect(forged.status).toBe(403);
    const mine = await me.get("/v2/submissions");
    expect(mine.body.data.map((s: { id: number }) => s.id)).toEqual([submitted.body.data.id]);
  });

  test("marks their own task complete, and nothing else of it; not someone else's", async () => {
    const task = await made("/v2/tasks", { title: "Self Clean Rifles" });
    for (const user of [ids.me, ids.other])
      expect((await admin.post(`/v2/users/${user}/tasks/attach`, { resources: [task] })).status).toBe(200);
    const completedAt = "2026-12-03T10:00:00.000000Z";
    const done = await me.patch(`/v2/users/${ids.me}/tasks/${task}/pivot`, { pivot: { completed_at: completedAt } });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    const theirs = await me.patch(`/v2/users/${ids.other}/tasks/${task}/pivot`, {
      pivot: { completed_at: completedAt },
    });
    expect(theirs.status).toBe(404);
    const moved = await me.patch(`/v2/users/${ids.me}/tasks/${task}/pivot`, { pivot: { due_at: completedAt } });
    expect(moved.status).toBe(403);
    expect((await me.patch(`/v2/tasks/${task}`, { title: "Renamed" })).status).toBe(403);
    const stored = await h.db.store.prisma.taskAssignment.findMany({
      where: { taskId: task },
      orderBy: { userId: "asc" },
    });
    expect(stored.map((a) => [a.userId, a.completedAt?.toISOString() ?? null, a.dueAt])).toEqual([
      [ids.me, "2026-12-03T10:00:00.000Z", null],
      [ids.other, null, null],
    ]);
    expect((await me.get("/v2/tasks")).body.data.map((t: { id: number }) => t.id)).toEqual([task]);
  });

  test("likes and unlikes a newsfeed item as themselves, never as someone else", async () => {
    const item = (await admin.get("/v2/newsfeed")).body.data[0].id as number;
    const likers = async () =>
      (await h.db.store.prisma.newsfeedLike.findMany({ where: { newsfeedItemId: item } })).map((l) => l.userId);
    const liked = await me.post(`/v2/newsfeed/${item}/likes/attach`, { resources: [ids.me] });
    expect(liked.status, JSON.stringify(liked.body)).toBe(200);
    expect(await likers()).toEqual([ids.me]);
    expect((await me.post(`/v2/newsfeed/${item}/likes/attach`, { resources: [ids.other] })).status).toBe(403);
    expect((await me.patch(`/v2/newsfeed/${item}/likes/sync`, { resources: [ids.me] })).status).toBe(403);
    expect(await likers()).toEqual([ids.me]);
    expect((await me.delete(`/v2/newsfeed/${item}/likes/detach`, { resources: [ids.me] })).status).toBe(200);
    expect(await likers()).toEqual([]);
  });

  test("reads the messages sent to them, not another's; writes none", async () => {
    const mine = await made("/v2/messages", {
      message: "Self drill at 0600",
      channels: ["database"],
      recipients: [ids.other, ids.me],
    });
    const theirs = await made("/v2/messages", {
      message: "Self other only",
      channels: ["database"],
      recipients: [ids.other],
    });
    const listed = await me.get("/v2/messages");
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.data.map((m: { id: number }) => m.id)).toEqual([mine]);
    expect(listed.body.meta.total).toBe(1);
    expect((await me.get(`/v2/messages/${mine}`)).body.data).toEqual(
      expect.objectContaining({ id: mine, message: "Self drill at 0600", recipients: [ids.other, ids.me] }),
    );
    expect((await me.get(`/v2/messages/${theirs}`)).status).toBe(404);
    const graph = await me.graphql(`{ messages { totalCount nodes { rowId } } }`);
    expect(graph.body.errors, JSON.stringify(graph.body.errors)).toBeUndefined();
    expect(graph.body.data.messages).toEqual({ totalCount: 1, nodes: [{ rowId: mine }] });
    const one = await me.graphql(
      `{ mine: message(rowId: ${mine}) { rowId } theirs: message(rowId: ${theirs}) { rowId } }`,
    );
    expect(one.body.errors, JSON.stringify(one.body.errors)).toBeUndefined();
    expect(one.body.data).toEqual({ mine: { rowId: mine }, theirs: null });
    const searched = await me.post("/v2/messages/search", {});
    expect(searched.status, JSON.stringify(searched.body)).toBe(200);
    expect(searched.body.data.map((m: { id: number }) => m.id)).toEqual([mine]);
    const deleted = await me.graphql(`mutation { deleteMessage(rowId: ${mine}) { __typename } }`);
    expect(deleted.body.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    // The admin key sees both: the right narrows the person's reads, not the account's.
    const all = (await admin.get("/v2/messages")).body.data.map((m: { id: number }) => m.id);
    expect(all).toEqual(expect.arrayContaining([mine, theirs]));
    for (const [method, path, body] of [
      ["post", "/v2/messages", { message: "Self forged", channels: ["database"], recipients: [ids.me] }],
      ["patch", `/v2/messages/${mine}`, { message: "Self edited" }],
      ["patch", `/v2/messages/${theirs}`, { message: "Self edited" }],
      ["delete", `/v2/messages/${mine}`, undefined],
    ] as const) {
      const reply = await me.send(method.toUpperCase(), path, body);
      expect(reply.status, `${method} ${path}: ${JSON.stringify(reply.body)}`).toBe(403);
    }
    const stored = await h.db.store.prisma.message.findMany({
      where: { id: { in: [mine, theirs] } },
      orderBy: { id: "asc" },
    });
    expect(stored.map((m) => m.message)).toEqual(["Self drill at 0600", "Self other only"]);
    expect(await h.db.store.prisma.message.count({ where: { message: "Self forged" } })).toBe(0);
  });

  test("a filter through a relation reaches only their rows: another person's email cannot be probed", async () => {
    const unit = await made("/v2/units", { name: "Self Platoon" });
    expect((await admin.patch(`/v2/users/${ids.me}`, { unit_id: unit })).status).toBe(200);
    const peer = await made("/v2/users", { name: "Self Peer", email: "self.peer@example.com", unit_id: unit });
    try {
      const probe = (email: string) =>
        me.graphql(
          `query($email: String!) { units(where: { users: { some: { email: { equals: $email } } } }) { nodes { rowId } } }`,
          { email },
        );
      const mine = await probe("self.person@example.com");
      expect(mine.body.errors, JSON.stringify(mine.body.errors)).toBeUndefined();
      expect(mine.body.data.units.nodes).toEqual([{ rowId: unit }]);
      // The peer is in the same unit; its people, seen through a self-service right, are the person alone.
      expect((await probe("self.peer@example.com")).body.data.units.nodes).toEqual([]);
      const every = await me.graphql(
        `{ units(where: { users: { every: { email: { equals: "self.person@example.com" } } } }) { nodes { rowId } } }`,
      );
      expect(every.body.data.units.nodes).toEqual([{ rowId: unit }]);
    } finally {
      await admin.delete(`/v2/users/${peer}`);
      await admin.patch(`/v2/users/${ids.me}`, { unit_id: null });
    }
  });

  test("subscribing to a resource's changes needs its scope outright: a stream carries everyone's", async () => {
    const response = await h.app.yoga.fetch("http://muster.test/graphql", {
      method: "POST",
      headers: {
        accept: "text/event-stream",
        "content-type": "application/json",
        authorization: `Bearer ${await tokenFor(ids.me)}`,
      },
      body: JSON.stringify({ query: "subscription { userChanged { rowId } }" }),
    });
    const stream = readEventStream(response);
    try {
      const { errors } = await stream.next();
      expect(errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
      expect(errors?.[0]?.message).toMatch(/needs the view:user scope/);
    } finally {
      await stream.close();
    }
  });

  test("everything else needs a role permission", async () => {
    for (const [method, path, body] of [
      ["delete", `/v2/users/${ids.me}`, undefined],
      ["post", "/v2/users", { name: "New", email: "new.self@example.com" }],
      ["post", "/v2/ranks", { name: "Nope" }],
      ["patch", `/v2/ranks/${ids.myRank}`, { name: "Nope" }],
      ["post", "/v2/rank-records", { user_id: ids.me, rank_id: ids.otherRank, type: 0 }],
      ["get", "/v2/forms", undefined],
      ["get", "/v2/announcements", undefined],
      ["get", "/v2/webhooks", undefined],
      ["post", `/v2/users/${ids.me}/roles/attach`, { resources: [1] }],
    ] as const) {
      const reply = await me.send(method.toUpperCase(), path, body);
      expect(reply.status, `${method} ${path}: ${JSON.stringify(reply.body)}`).toBe(403);
    }
    const graph = await me.graphql(`{ forms { nodes { rowId } } }`);
    expect(graph.body.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
  });
});

describe("what the rights are not", () => {
  test("an API key for the same person holds exactly its scopes", async () => {
    const key = client(h, await h.key("alpha", "view:rank", ids.me));
    expect((await key.get("/v2/users")).status).toBe(403);
    expect((await key.get(`/v2/users/${ids.me}`)).status).toBe(403);
  });

  test("a role's permission is held outright: the whole account, not only their own", async () => {
    const role = await made("/v2/roles", { name: "Self Viewer", permissions: ["view:user", "view:rankrecord"] });
    await admin.post(`/v2/users/${ids.me}/roles/attach`, { resources: [role] });
    try {
      const users = await me.get("/v2/users");
      expect(users.body.data.map((u: { id: number }) => u.id)).toEqual(expect.arrayContaining([ids.me, ids.other]));
      expect((await me.get(`/v2/rank-records/${ids.otherRecord}`)).status).toBe(200);
      // Viewing everyone is not changing them: update:user is still only their own profile.
      expect((await me.patch(`/v2/users/${ids.other}`, { name: "Hijacked" })).status).toBe(404);
    } finally {
      expect((await admin.delete(`/v2/roles/${role}`)).status).toBe(200);
    }
    expect((await me.get(`/v2/rank-records/${ids.otherRecord}`)).status).toBe(404);
  });
});
