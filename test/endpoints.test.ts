import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { existsSync } from "node:fs";
import { client, seed, startHarness, type Client, type Harness } from "./harness.ts";
import { createApp } from "../src/server/app.ts";
import { setMaintenance } from "../src/http/maintenance.ts";
import { storedFilePath } from "../src/files/storage.ts";

let h: Harness;
let api: Client;
let s: Awaited<ReturnType<typeof seed>>;
let newsfeedId: number;
let imageId: number;

const png = () =>
  new Blob([Buffer.from("89504e470d0a1a0a0000000d4948445200000001000000010806000000", "hex")], { type: "image/png" });

beforeAll(async () => {
  h = await startHarness();
  api = client(h, await h.key("alpha", "*"));
  s = await seed(api);
  await api.post(`/v2/users/${s.user.id}/rank-records`, {
    rank_id: s.corporal.id,
    type: 0,
    text: "Promoted",
    document_id: s.document.id,
  });
  newsfeedId = (await api.get("/v2/newsfeed")).body.data[0].id;
  await api.post(`/v2/users/${s.user.id}/fields/attach`, { resources: [s.field.id, s.field2.id] });
  await api.post(`/v2/users/${s.user.id}/status-records/attach`, { resources: { [s.active.id]: { text: "Joined" } } });
  await api.post(`/v2/categories/${s.category.id}/forms/attach`, { resources: [s.form.id] });
  const form = new FormData();
  form.set("name", "Badge");
  form.set("image", png(), "badge.png");
  const upload = await api.post(`/v2/qualifications/${s.qualification.id}/image`, form);
  expect(upload.status).toBe(200);
  imageId = upload.body.data.id;
});
afterAll(() => h.close());

describe("1. PATCH /users/{user}/rank/{rank}", () => {
  test("edits the user's current rank, embeds its image, and the change is read back", async () => {
    const user = (await api.get(`/v2/users/${s.user.id}`)).body.data;
    const r = await api.patch(`/v2/users/${s.user.id}/rank/${user.rank_id}?include=image`, {
      name: "Corporal First",
      paygrade: "E-4",
      rank: { id: 99 },
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      id: user.rank_id,
      name: "Corporal First",
      paygrade: "E-4",
      label: `Rank: ${user.rank_id}`,
      image: null,
    });
    expect((await api.get(`/v2/ranks/${user.rank_id}`)).body.data.name).toBe("Corporal First");
  });
  test("404 when {rank} is not the user's current rank; 422 on a bad name", async () => {
    expect((await api.patch(`/v2/users/${s.user.id}/rank/${s.private_.id}`, { name: "X" })).status).toBe(404);
    const user = (await api.get(`/v2/users/${s.user.id}`)).body.data;
    const bad = await api.patch(`/v2/users/${s.user.id}/rank/${user.rank_id}`, { name: "x".repeat(256) });
    expect(bad.status).toBe(422);
    expect(bad.body.error.errors.name[0]).toMatch(/greater than 255/);
    const wrongType = await api.patch(`/v2/users/${s.user.id}/rank/${user.rank_id}`, { name: 12 });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.error.errors.name).toEqual(["The name field must be a string."]);
  });
});

describe("2. PATCH /users/{user}/fields/batch", () => {
  test("updates the user's fields in one go and returns them", async () => {
    const r = await api.patch(`/v2/users/${s.user.id}/fields/batch`, {
      resources: {
        [s.field.id]: { help: "Your radio name", pivot: { order: 9 } },
        [s.field2.id]: { placeholder: "18" },
      },
    });
    expect(r.status).toBe(200);
    expect(
      r.body.data
        .map((f: { id: number; help: string | null; placeholder: string | null }) => [f.id, f.help, f.placeholder])
        .sort(),
    ).toEqual(
      [
        [s.field.id, "Your radio name", null],
        [s.field2.id, null, "18"],
      ].sort(),
    );
    expect((await api.get(`/v2/users/${s.user.id}/fields/${s.field.id}`)).body.data.help).toBe("Your radio name");
  });
  test("validates attributes like any other write, and rejects fields not linked to the user", async () => {
    const bad = await api.patch(`/v2/users/${s.user.id}/fields/batch`, {
      resources: { [s.field.id]: { type: "nonsense" } },
    });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.error.errors)).toEqual([`resources.${s.field.id}.type`]);
    const unlinked = await api.patch(`/v2/users/${s.other.id}/fields/batch`, {
      resources: { [s.field.id]: { help: "x" } },
    });
    expect(unlinked.status).toBe(422);
    expect((await api.get(`/v2/users/${s.user.id}/fields/${s.field.id}`)).body.data.help).toBe("Your radio name");
    expect((await api.patch(`/v2/users/999999/fields/batch`, { resources: {} })).status).toBe(404);
    expect((await api.patch(`/v2/users/${s.user.id}/fields/batch`, {})).status).toBe(422);
  });
});

describe("3. PATCH /categories/{category}/forms/{form}", () => {
  test("updates the form and its pivot, with every include", async () => {
    const r = await api.patch(
      `/v2/categories/${s.category.id}/forms/${s.form.id}?include=fields,submissions,submissions.*,tags`,
      {
        description: "<p>Join</p>",
        pivot: { order: 5 },
      },
    );
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      id: s.form.id,
      description: "<p>Join</p>",
      pivot: { category_id: s.category.id, form_id: s.form.id, order: 5 },
    });
    expect(r.body.data.fields.map((f: { key: string }) => f.key)).toEqual(["callsign", "age"]);
    expect(r.body.data).toHaveProperty("submissions");
    expect(r.body.data.tags).toEqual([]);
    expect((await api.get(`/v2/forms/${s.form.id}`)).body.data.description).toBe("<p>Join</p>");
  });
  test("404 for a form not in the category; 422 for a taken slug", async () => {
    const other = (await api.post("/v2/forms", { name: "Other", slug: "other", is_public: true })).body.data;
    expect((await api.patch(`/v2/categories/${s.category.id}/forms/${other.id}`, { name: "x" })).status).toBe(404);
    const taken = await api.patch(`/v2/categories/${s.category.id}/forms/${s.form.id}`, { slug: "other" });
    expect(taken.status).toBe(422);
    expect(taken.body.error.errors.slug).toEqual(["The slug has already been taken."]);
  });
});

describe("4. POST /categories/{category}/forms", () => {
  test("creates a form in the category with its pivot order", async () => {
    const r = await api.post(`/v2/categories/${s.category.id}/forms?include=fields,tags`, {
      name: "Leave",
      slug: "leave",
      is_public: true,
      pivot: { order: 3 },
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      name: "Leave",
      slug: "leave",
      is_public: true,
      pivot: { order: 3 },
      fields: [],
      tags: [],
    });
    const listed = (await api.get(`/v2/categories/${s.category.id}/forms`)).body.data.map(
      (f: { slug: string }) => f.slug,
    );
    expect(listed).toContain("leave");
  });
  test("422 names every missing field", async () => {
    const r = await api.post(`/v2/categories/${s.category.id}/forms`, { description: "no name" });
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({
      type: "ValidationException",
      message: "The name field is required. (and 2 more errors)",
    });
    expect(Object.keys(r.body.error.errors).sort()).toEqual(["is_public", "name", "slug"]);
  });
});

describe("5. POST /users/{user}/tasks", () => {
  test("creates and assigns a task; the assignment is shown when included", async () => {
    const r = await api.post(`/v2/users/${s.user.id}/tasks?include=assignment,attachments`, {
      title: "Complete basic training",
      form_id: s.form.id,
      pivot: { due_at: "2030-01-01T00:00:00.000000Z" },
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ title: "Complete basic training", form_id: s.form.id, attachments: [] });
    expect(r.body.data.assignment).toMatchObject({
      user_id: s.user.id,
      due_at: "2030-01-01T00:00:00.000000Z",
      status: "assigned",
      past_due: false,
    });
    const tasks = (await api.get(`/v2/users/${s.user.id}/tasks`)).body.data;
    expect(tasks.map((t: { id: number }) => t.id)).toContain(r.body.data.id);
    expect(tasks[0]).not.toHaveProperty("assignment");
  });
  test("422 without a title or with an unknown form", async () => {
    const r = await api.post(`/v2/users/${s.user.id}/tasks`, { form_id: 424242 });
    expect(r.status).toBe(422);
    expect(r.body.error.errors).toEqual({
      title: ["The title field is required."],
      form_id: ["The selected form id is invalid."],
    });
  });
});

describe("6. POST /categories/{category}/qualifications", () => {
  test("creates a qualification in the category; order is computed when omitted and kept when given", async () => {
    const a = await api.post(`/v2/categories/${s.category.id}/qualifications?include=image`, { name: "Pilot" });
    expect(a.status).toBe(200);
    expect(a.body.data).toMatchObject({ name: "Pilot", order: 2, image: null, pivot: { category_id: s.category.id } });
    const b = await api.post(`/v2/categories/${s.category.id}/qualifications`, { name: "Diver", order: 40 });
    expect(b.body.data.order).toBe(40);
    expect((await api.get(`/v2/qualifications/${b.body.data.id}`)).body.data.name).toBe("Diver");
  });
  test("422 without a name", async () => {
    expect((await api.post(`/v2/categories/${s.category.id}/qualifications`, {})).status).toBe(422);
  });
});

describe("7. DELETE /users/{user}/status-records/batch", () => {
  test("removes the user's status records, never the shared statuses", async () => {
    await client(h, await h.key()).post(`/v2/users/${s.other.id}/status-records/attach`, { resources: [s.active.id] });
    const r = await api.delete(`/v2/users/${s.user.id}/status-records/batch?include=record`, {
      resources: [s.active.id],
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(1);
    expect(r.body.data[0]).toMatchObject({
      id: s.active.id,
      name: "Active",
      record: { text: "Joined", user_id: s.user.id },
    });
    expect((await api.get(`/v2/users/${s.user.id}/status-records`)).body.data).toEqual([]);
    expect((await api.get(`/v2/statuses/${s.active.id}`)).status).toBe(200);
    expect(
      (await api.get(`/v2/users/${s.other.id}/status-records`)).body.data.map((x: { id: number }) => x.id),
    ).toEqual([s.active.id]);
  });
  test("422 for statuses the user has no record of; 404 for a missing user", async () => {
    expect(
      (await api.delete(`/v2/users/${s.user.id}/status-records/batch`, { resources: [s.pending.id] })).status,
    ).toBe(422);
    expect((await api.delete(`/v2/users/999999/status-records/batch`, { resources: [s.pending.id] })).status).toBe(404);
  });
});

describe("8. POST /newsfeed/{newsfeed}/likes/attach", () => {
  test("likes a newsfeed item once per user", async () => {
    const r = await api.post(`/v2/newsfeed/${newsfeedId}/likes/attach?include=rank`, {
      resources: [s.user.id, s.other.id],
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ attached: [s.user.id, s.other.id] });
    expect((await api.post(`/v2/newsfeed/${newsfeedId}/likes/attach`, { resources: [s.user.id] })).body).toEqual({
      attached: [],
    });
    const likes = (await api.get(`/v2/newsfeed/${newsfeedId}/likes`)).body.data.map((u: { id: number }) => u.id);
    expect(likes).toEqual([s.user.id, s.other.id]);
  });
  test("404 for a missing item; 422 without resources or with unknown users", async () => {
    expect((await api.post(`/v2/newsfeed/999999/likes/attach`, { resources: [s.user.id] })).status).toBe(404);
    expect((await api.post(`/v2/newsfeed/${newsfeedId}/likes/attach`, {})).status).toBe(422);
    expect((await api.post(`/v2/newsfeed/${newsfeedId}/likes/attach`, { resources: [888888] })).status).toBe(422);
  });
});

describe("9. PATCH /forms/{form}/fields/sync", () => {
  test("attaches, detaches and reorders in one call", async () => {
    const extra = (await api.post(`/v2/forms/${s.form.id}/fields`, { name: "Notes", key: "notes", type: "textarea" }))
      .body.data;
    const r = await api.patch(`/v2/forms/${s.form.id}/fields/sync`, {
      resources: { [s.field2.id]: { order: 1 }, [s.field.id]: { order: 2 } },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ attached: [], detached: [extra.id], updated: [s.field.id, s.field2.id] });
    const fields = (await api.get(`/v2/forms/${s.form.id}/fields`)).body.data.map((f: { key: string }) => f.key);
    expect(fields).toEqual(["age", "callsign"]);
  });
  test("404 for a missing form; 422 for a malformed resources item", async () => {
    expect((await api.patch(`/v2/forms/999999/fields/sync`, { resources: [] })).status).toBe(404);
    expect((await api.patch(`/v2/forms/${s.form.id}/fields/sync`, { resources: ["abc"] })).status).toBe(422);
  });
});

describe("10. PATCH /users/{user}/fields/{field}/pivot", () => {
  test("updates the pivot order", async () => {
    const r = await api.patch(`/v2/users/${s.user.id}/fields/${s.field2.id}/pivot`, { pivot: { order: 7 } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ updated: [s.field2.id] });
    const shown = await api.get(`/v2/users/${s.user.id}/fields/${s.field2.id}?include=fields`);
    expect(shown.body.data.fields.order).toBe(7);
  });
  test("404 for a field not linked to the user; 422 without a pivot", async () => {
    const loose = (await api.post(`/v2/forms/${s.form.id}/fields`, { name: "Loose", key: "loose", type: "text" })).body
      .data;
    expect((await api.patch(`/v2/users/${s.user.id}/fields/${loose.id}/pivot`, { pivot: { order: 1 } })).status).toBe(
      404,
    );
    expect((await api.patch(`/v2/users/${s.user.id}/fields/${s.field2.id}/pivot`, { order: 1 })).status).toBe(422);
    expect(
      (await api.patch(`/v2/users/${s.user.id}/fields/${s.field2.id}/pivot`, { pivot: { order: "x" } })).status,
    ).toBe(422);
  });
});

describe("11. POST /submissions", () => {
  test("stores custom values and starts with the form's submission status", async () => {
    const r = await api.post(
      `/v2/submissions?include=comments,comments.*,form,form.*,user,user.*,statuses,statuses.record`,
      {
        form_id: s.form.id,
        user_id: s.user.id,
        callsign: "Viper",
        unknown_key: "dropped",
      },
    );
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      form_id: s.form.id,
      user_id: s.user.id,
      callsign: "Viper",
      read_at: null,
      comments: [],
    });
    expect(r.body.data).not.toHaveProperty("unknown_key");
    expect(r.body.data.form).toMatchObject({ id: s.form.id, fields: expect.any(Array) });
    expect(r.body.data.user).toMatchObject({ id: s.user.id, rank: expect.any(Object) });
    expect(r.body.data.statuses).toEqual([
      expect.objectContaining({ id: s.pending.id, record: expect.objectContaining({ submission_id: r.body.data.id }) }),
    ]);
    expect((await api.get(`/v2/submissions/${r.body.data.id}`)).body.data.callsign).toBe("Viper");
  });
  test("422 for missing ids or a missing required custom field", async () => {
    const r = await api.post(`/v2/submissions`, {});
    expect(r.body.error.errors).toEqual({
      form_id: ["The form id field is required."],
      user_id: ["The user id field is required."],
    });
    const missing = await api.post(`/v2/submissions`, { form_id: s.form.id, user_id: s.user.id });
    expect(missing.status).toBe(422);
    expect(missing.body.error.errors).toEqual({ callsign: ["The Callsign field is required."] });
  });
});

describe("12. DELETE /specialties/{specialty}", () => {
  test("deletes the specialty, returns it with its includes, and frees its users", async () => {
    await api.patch(`/v2/users/${s.other.id}`, { specialty_id: s.specialty.id });
    const r = await api.delete(
      `/v2/specialties/${s.specialty.id}?include=assignment_records,assignment_records.*,users`,
    );
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      id: s.specialty.id,
      name: "Medic",
      assignment_records: [],
      users: [expect.objectContaining({ id: s.other.id })],
    });
    expect((await api.get(`/v2/specialties/${s.specialty.id}`)).status).toBe(404);
    expect((await api.get(`/v2/users/${s.other.id}`)).body.data.specialty_id).toBeNull();
    expect((await api.delete(`/v2/specialties/${s.specialty.id}`)).status).toBe(404);
  });
});

describe("13. DELETE /qualifications/{qualification}/image/{image}", () => {
  test("404 when {image} is not the qualification's image", async () => {
    expect((await api.delete(`/v2/qualifications/${s.qualification.id}/image/${imageId + 1000}`)).status).toBe(404);
  });
  test("deletes the image row and its stored file", async () => {
    const before = (await api.get(`/v2/images/${imageId}`)).body.data;
    const file = storedFilePath(h.config, before.path)!;
    expect(existsSync(file)).toBe(true);
    const download = await h.app.yoga.fetch(before.image_url);
    expect(download.status).toBe(200);
    const r = await api.delete(`/v2/qualifications/${s.qualification.id}/image/${imageId}`);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      id: imageId,
      model_type: "App\\Models\\Qualification",
      model_id: s.qualification.id,
      name: "Badge",
    });
    expect(existsSync(file)).toBe(false);
    expect((await api.get(`/v2/qualifications/${s.qualification.id}?include=image`)).body.data.image).toBeNull();
    expect((await api.delete(`/v2/qualifications/${s.qualification.id}/image/${imageId}`)).status).toBe(404);
  });
});

describe("14. GET /users/{user}/rank-records", () => {
  test("lists the user's rank records newest first with every include", async () => {
    const record = (await api.get(`/v2/users/${s.user.id}/rank-records`)).body.data[0];
    await api.post("/v2/comments", {
      comment: "Well done",
      model_type: "App\\Models\\RankRecord",
      model_id: record.id,
    });
    const r = await api.get(
      `/v2/users/${s.user.id}/rank-records?include=attachments,author,author.*,comments,comments.*,document,rank,rank.image`,
    );
    expect(r.status).toBe(200);
    expect(r.body.meta).toMatchObject({ current_page: 1, from: 1, to: 1, total: 1, per_page: 15, last_page: 1 });
    expect(r.body.data[0]).toMatchObject({
      user_id: s.user.id,
      type: 0,
      text: "Promoted",
      attachments: [],
      author: null,
      document: { id: s.document.id, name: "Promotion order" },
      rank: { id: s.corporal.id, image: null },
      comments: [
        expect.objectContaining({
          comment: "Well done",
          commentable: expect.objectContaining({ id: record.id, text: "Promoted" }),
        }),
      ],
    });
  });
  test("a rank record sets the user's rank", async () => {
    await api.post(`/v2/users/${s.other.id}/rank-records`, { rank_id: s.private_.id, type: 2 });
    expect((await api.get(`/v2/users/${s.other.id}`)).body.data.rank_id).toBe(s.private_.id);
  });
});

describe("15. GET /comments", () => {
  test("lists comments with author and commentable", async () => {
    const authored = client(h, await h.key("alpha", "*", s.user.id));
    const record = (
      await api.post(`/v2/users/${s.other.id}/rank-records`, { rank_id: s.corporal.id, type: 0, text: "Up" })
    ).body.data;
    const posted = await authored.post("/v2/comments", {
      comment: "Second",
      model_type: "App\\Models\\RankRecord",
      model_id: record.id,
    });
    expect(posted.status).toBe(200);
    const r = await api.get(`/v2/comments?include=author,commentable`);
    expect(r.status).toBe(200);
    const second = r.body.data.find((c: { comment: string }) => c.comment === "Second");
    expect(second).toMatchObject({
      author_id: s.user.id,
      author: { id: s.user.id, name: "Ann Smith" },
      commentable: { id: record.id, text: "Up", user_id: s.other.id },
    });
  });
  test("unknown include values are 422 naming the value and the allowed ones", async () => {
    const r = await api.get(`/v2/comments?include=author,secrets`);
    expect(r.status).toBe(422);
    expect(r.body.error.errors.include[0]).toContain("secrets");
    expect(r.body.error.errors.include[0]).toContain("author, commentable");
  });
});

/** One well-formed request per operation, for the statuses every operation answers alike. */
const requests = (): Array<[string, string, string, unknown, string]> => [
  ["1", "PATCH", `/v2/users/${s.user.id}/rank/${s.corporal.id}`, { name: "R" }, "update:rank"],
  ["2", "PATCH", `/v2/users/${s.user.id}/fields/batch`, { resources: {} }, "update:field"],
  ["3", "PATCH", `/v2/categories/${s.category.id}/forms/${s.form.id}`, { name: "F" }, "update:form"],
  [
    "4",
    "POST",
    `/v2/categories/${s.category.id}/forms`,
    { name: "N", slug: `n${Date.now()}`, is_public: true },
    "create:form",
  ],
  ["5", "POST", `/v2/users/${s.user.id}/tasks`, { title: "T" }, "create:task"],
  ["6", "POST", `/v2/categories/${s.category.id}/qualifications`, { name: "Q" }, "create:qualification"],
  ["7", "DELETE", `/v2/users/${s.user.id}/status-records/batch`, { resources: [] }, "delete:status"],
  ["8", "POST", `/v2/newsfeed/${newsfeedId}/likes/attach`, { resources: [] }, "update:newsfeed"],
  ["9", "PATCH", `/v2/forms/${s.form.id}/fields/sync`, { resources: {}, detaching: false }, "update:form"],
  ["10", "PATCH", `/v2/users/${s.user.id}/fields/${s.field2.id}/pivot`, { pivot: { order: 1 } }, "update:field"],
  ["11", "POST", `/v2/submissions`, { form_id: s.form.id, user_id: s.user.id, callsign: "C" }, "create:submission"],
  ["12", "DELETE", `/v2/specialties/999999`, undefined, "delete:specialty"],
  ["13", "DELETE", `/v2/qualifications/${s.qualification.id}/image/1`, undefined, "delete:image"],
  ["14", "GET", `/v2/users/${s.user.id}/rank-records`, undefined, "view:rankrecord"],
  ["15", "GET", `/v2/comments`, undefined, "view:comment"],
];

describe("statuses every operation shares", () => {
  test("401 without a key, with an unknown key, or with another account's X-Perscom-Id", async () => {
    const key = await h.key();
    for (const [n, method, url, body] of requests()) {
      for (const c of [client(h, null), client(h, "mst_not-a-key"), client(h, key, { "x-perscom-id": "424242" })]) {
        const r = await c.send(method, url, body);
        expect([n, r.status, r.body.error.type]).toEqual([n, 401, "AuthenticationException"]);
        expect(r.body.error.request_id).toMatch(/^[0-9a-f-]{36}$/);
        expect(r.headers.get("x-perscom-request-id")).toBe(r.body.error.request_id);
      }
    }
  });
  test("403 with a key lacking the operation's scope; the scope alone is enough", async () => {
    const none = client(h, await h.key("alpha", "view:settings"));
    for (const [n, method, url, body, scope] of requests()) {
      const r = await none.send(method, url, body);
      expect([n, r.status, r.body.error.type]).toEqual([n, 403, "HttpException"]);
      const scoped = client(h, await h.key("alpha", scope === "view:rankrecord" ? "view:rankrecord,view:user" : scope));
      expect([n, (await scoped.send(method, url, body)).status]).not.toEqual([n, 403]);
    }
  });
  test("402 for an account without a subscription when subscriptions are enforced", async () => {
    const enforced = createApp({ db: h.db, config: { ...h.config, subscriptionsEnforced: true } });
    const lapsed = await h.key("lapsed");
    await h.db.prisma.account.update({ where: { name: "lapsed" }, data: { subscriptionStatus: "incomplete" } });
    const paying = await h.key("alpha");
    for (const [n, method, url, body] of requests()) {
      const send = (key: string) =>
        enforced.yoga.fetch(`http://muster.test${url}`, {
          method,
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      const r = await send(lapsed);
      expect([n, r.status, (await r.json()).error.message]).toEqual([
        n,
        402,
        "A valid subscription is required to complete this request.",
      ]);
      expect([n, (await send(paying)).status]).not.toEqual([n, 402]);
    }
  });
  test("503 for every operation in maintenance, and back afterwards", async () => {
    await setMaintenance(h.db.prisma, true);
    try {
      for (const [n, method, url, body] of requests()) {
        const r = await api.send(method, url, body);
        expect([n, r.status, r.body.error.message]).toEqual([
          n,
          503,
          "The API is currently down for maintenance. Please check back later.",
        ]);
        expect([n, r.headers.get("retry-after")]).toEqual([n, "60"]);
      }
      // GraphQL clients get a GraphQL response: errors with the code in extensions, no REST error body.
      const graphql = await api.graphql("{ ranks { nodes { id } } }");
      expect(graphql.status).toBe(503);
      expect(graphql.headers.get("retry-after")).toBe("60");
      expect(graphql.body.error).toBeUndefined();
      expect(graphql.body.errors).toEqual([
        expect.objectContaining({
          message: "The API is currently down for maintenance. Please check back later.",
          extensions: expect.objectContaining({ code: "MAINTENANCE", status: 503, request_id: expect.any(String) }),
        }),
      ]);
    } finally {
      await setMaintenance(h.db.prisma, false);
    }
    expect((await api.get("/v2/comments")).status).toBe(200);
  });
});
