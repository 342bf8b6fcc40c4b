import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { client, seed, startHarness, type Client, type Harness, type Reply } from "./harness.ts";

let h: Harness;
let api: Client;
let data: Awaited<ReturnType<typeof seed>>;
let me: { id: number; name: string };

const ok = async (reply: Promise<Reply>) => {
  const r = await reply;
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
};

beforeAll(async () => {
  h = await startHarness();
  const admin = client(h, await h.key());
  me = (await ok(admin.post("/v2/users", { name: "Key Holder", email: "holder@example.com" }))).data;
  api = client(h, await h.key("alpha", "*", me.id));
  data = await seed(api);
});
afterAll(() => h.close());

describe("records change the people they are about", () => {
  test("a rank record sets the user's rank, with the key's user as author", async () => {
    const record = (
      await ok(api.post(`/v2/users/${data.other.id}/rank-records`, { rank_id: data.corporal.id, type: 0 }))
    ).data;
    expect(record.author_id).toBe(me.id);
    expect((await ok(api.get(`/v2/users/${data.other.id}`))).data.rank_id).toBe(data.corporal.id);
  });

  test("a primary assignment record sets position, specialty, unit and status; a secondary one changes nothing", async () => {
    const position = (await ok(api.post("/v2/positions", { name: "Rifleman" }))).data;
    const unit = (await ok(api.post("/v2/units", { name: "1st Squad" }))).data;
    await ok(
      api.post("/v2/assignment-records", {
        user_id: data.other.id,
        type: "primary",
        position_id: position.id,
        unit_id: unit.id,
        specialty_id: data.specialty.id,
        status_id: data.active.id,
      }),
    );
    const user = (await ok(api.get(`/v2/users/${data.other.id}`))).data;
    expect(user).toMatchObject({
      position_id: position.id,
      unit_id: unit.id,
      specialty_id: data.specialty.id,
      status_id: data.active.id,
    });

    const other = (await ok(api.post("/v2/positions", { name: "Medic" }))).data;
    await ok(api.post("/v2/assignment-records", { user_id: data.other.id, type: "secondary", position_id: other.id }));
    expect((await ok(api.get(`/v2/users/${data.other.id}`))).data.position_id).toBe(position.id);
  });

  test("a new submission gets its form's submission status", async () => {
    const submission = (
      await ok(
        api.post(`/v2/submissions?include=statuses`, {
          form_id: data.form.id,
          user_id: data.user.id,
          callsign: "Ghost",
        }),
      )
    ).data;
    expect(submission.statuses.map((s: { id: number }) => s.id)).toEqual([data.pending.id]);
    expect(submission.callsign).toBe("Ghost");
  });

  test("author defaults to the key's user on every resource that has one, and is kept when given", async () => {
    const comment = (await ok(api.post("/v2/comments", { comment: "Well done" }))).data;
    expect(comment.author_id).toBe(me.id);
    const given = (await ok(api.post("/v2/documents", { name: "Orders", content: "x", author_id: data.user.id }))).data;
    expect(given.author_id).toBe(data.user.id);
  });
});

describe("order", () => {
  test("is computed after the last one when omitted and kept when given", async () => {
    const first = (await ok(api.post("/v2/qualifications", { name: "First" }))).data;
    const second = (await ok(api.post("/v2/qualifications", { name: "Second" }))).data;
    expect(second.order).toBe(first.order + 1);
    const placed = (await ok(api.post("/v2/qualifications", { name: "Placed", order: 42 }))).data;
    expect(placed.order).toBe(42);
    const names = (await ok(api.get("/v2/qualifications?limit=100"))).data.map((q: { name: string }) => q.name);
    expect(names.indexOf("Placed")).toBeGreaterThan(names.indexOf("Second"));
  });
});

describe("labels", () => {
  test("every record carries `<Type>: <id>`", async () => {
    const cases: Array<[string, RegExp]> = [
      ["/v2/users", /^User: \d+$/],
      ["/v2/ranks", /^Rank: \d+$/],
      ["/v2/rank-records", /^Rank Record: \d+$/],
      ["/v2/assignment-records", /^Assignment Record: \d+$/],
      ["/v2/forms", /^Form: \d+$/],
      ["/v2/submissions", /^Submission: \d+$/],
    ];
    for (const [path, pattern] of cases) {
      const rows = (await ok(api.get(path))).data as Array<{ label: string; id: number }>;
      expect(rows.length, path).toBeGreaterThan(0);
      for (const row of rows) expect(row.label, path).toMatch(pattern);
    }
  });
});

describe("account commands and settings", () => {
  test("POST /cache answers okay with clear:cache and 403 without it", async () => {
    expect((await client(h, await h.key("alpha", "clear:cache")).post("/v2/cache")).body).toEqual({ status: "okay" });
    expect((await client(h, await h.key("alpha", "view:settings")).post("/v2/cache")).status).toBe(403);
  });

  test("a new account starts with its settings, grouped", async () => {
    const settings = (await ok(client(h, await h.key("fresh", "view:settings")).get("/v2/settings?limit=100")))
      .data as Array<{ group: string; name: string; payload: unknown }>;
    expect(settings.find((s) => s.group === "organization" && s.name === "name")?.payload).toBe("fresh");
    expect(new Set(settings.map((s) => s.group))).toEqual(
      new Set([
        "organization",
        "dashboard",
        "registration",
        "user",
        "notifications",
        "fields",
        "onboarding",
        "permission",
      ]),
    );
  });
});

describe("/me", () => {
  test("is the key's user, even for a key without view:user", async () => {
    const bare = client(h, await h.key("alpha", "view:rank", me.id));
    const reply = await ok(bare.get("/v2/me"));
    expect(reply.data.map((u: { id: number }) => u.id)).toEqual([me.id]);
    expect(reply.meta.total).toBe(1);
  });

  test("a key that belongs to no user gets an empty list", async () => {
    const machine = client(h, await h.key("alpha", "view:rank"));
    expect((await ok(machine.get("/v2/me"))).data).toEqual([]);
  });
});

describe("roster", () => {
  test("groups → units → users, with each user's rank, position and status", async () => {
    const group = (await ok(api.post("/v2/groups", { name: "Alpha Company" }))).data;
    const unit = (await ok(api.post("/v2/units", { name: "2nd Squad" }))).data;
    await ok(api.post(`/v2/groups/${group.id}/units/attach`, { resources: [unit.id] }));
    await ok(api.patch(`/v2/users/${data.user.id}`, { unit_id: unit.id }));

    const roster = await ok(api.get("/v2/roster"));
    const entry = roster.data.find((g: { id: number }) => g.id === group.id);
    expect(entry.units.map((u: { id: number }) => u.id)).toEqual([unit.id]);
    const person = entry.units[0].users.find((u: { id: number }) => u.id === data.user.id);
    expect(person.rank).toMatchObject({ id: data.private_.id, name: "Private" });
    expect(person.status).toMatchObject({ id: data.active.id });

    const one = await ok(api.get(`/v2/roster/${group.id}`));
    expect(one.data.units[0].users.map((u: { id: number }) => u.id)).toContain(data.user.id);
    expect((await client(h, await h.key("alpha", "view:user")).get("/v2/roster")).status).toBe(403);
  });
});

describe("newsfeed", () => {
  test("lists what happened in the account, newest first, and can be liked", async () => {
    await ok(
      api.post(`/v2/users/${data.user.id}/rank-records`, { rank_id: data.corporal.id, type: 0, text: "Well earned" }),
    );
    await ok(api.post("/v2/announcements", { title: "Muster tonight", content: "<p>20:00</p>", color: "info" }));
    const feed = (await ok(api.get("/v2/newsfeed"))).data as Array<{
      id: number;
      subject_type: string;
      headline: string;
    }>;
    expect(feed[0].subject_type).toBe("App\\Models\\Announcement");
    expect(feed.some((item) => item.subject_type === "App\\Models\\RankRecord" && /Corporal/.test(item.headline))).toBe(
      true,
    );

    const item = feed[0];
    expect(
      await ok(api.post(`/v2/newsfeed/${item.id}/likes/attach`, { resources: [data.user.id, data.other.id] })),
    ).toEqual({ attached: [data.user.id, data.other.id] });
    const likes = await ok(api.get(`/v2/newsfeed/${item.id}/likes`));
    expect(likes.data.map((u: { id: number }) => u.id).sort()).toEqual([data.user.id, data.other.id].sort());
  });
});

describe("what PERSCOM gets wrong, done right", () => {
  test("nested search works", async () => {
    const reply = await ok(
      api.post(`/v2/users/${data.user.id}/rank-records/search`, {
        filters: [{ field: "rank_id", value: data.corporal.id }],
      }),
    );
    expect(reply.data.length).toBeGreaterThan(0);
    expect(
      reply.data.every(
        (r: { rank_id: number; user_id: number }) => r.rank_id === data.corporal.id && r.user_id === data.user.id,
      ),
    ).toBe(true);
  });

  test("category relations list, show and update their items", async () => {
    await ok(
      api.post(`/v2/categories/${data.category.id}/forms/attach`, { resources: { [data.form.id]: { order: 3 } } }),
    );
    const listed = await ok(api.get(`/v2/categories/${data.category.id}/forms`));
    expect(listed.data).toEqual([
      expect.objectContaining({ id: data.form.id, pivot: expect.objectContaining({ order: 3 }) }),
    ]);
    const updated = await ok(
      api.patch(`/v2/categories/${data.category.id}/forms/${data.form.id}`, {
        description: "Join us",
        pivot: { order: 5 },
      }),
    );
    expect(updated.data).toMatchObject({ description: "Join us", pivot: { order: 5 } });
  });

  test("an event cannot end before it starts", async () => {
    const calendar = (await ok(api.post("/v2/calendars", { name: "Ops", color: "#2563eb" }))).data;
    const bad = await api.post("/v2/events", {
      name: "Op",
      calendar_id: calendar.id,
      all_day: false,
      starts: "2026-12-01T20:00:00Z",
      ends: "2026-12-01T18:00:00Z",
    });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.error.errors)).toContain("ends");
    const good = await ok(
      api.post("/v2/events", {
        name: "Op",
        calendar_id: calendar.id,
        all_day: false,
        starts: "2026-12-01T18:00:00Z",
        ends: "2026-12-01T20:00:00Z",
        registration_enabled: false,
      }),
    );
    expect(good.data).toMatchObject({ registration_enabled: false, author_id: me.id });
  });

  test("dissociating a record from its user keeps the record, without a user", async () => {
    const record = (
      await ok(api.post(`/v2/users/${data.user.id}/rank-records`, { rank_id: data.private_.id, type: 1 }))
    ).data;
    const released = (await ok(api.delete(`/v2/users/${data.user.id}/rank-records/${record.id}/dissociate`))).data;
    expect(released).toMatchObject({ id: record.id, user_id: null });
    expect(
      (await ok(api.get(`/v2/users/${data.user.id}/rank-records?limit=100`))).data.map((r: { id: number }) => r.id),
    ).not.toContain(record.id);
    expect((await ok(api.get(`/v2/rank-records/${record.id}`))).data.user_id).toBeNull();
    expect(
      (await ok(api.post(`/v2/users/${data.other.id}/rank-records/associate`, { related_key: record.id }))).data
        .user_id,
    ).toBe(data.other.id);
  });
});
