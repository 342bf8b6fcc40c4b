import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { client, seed, startHarness, type Client, type Harness, type Reply } from "./harness.ts";

let h: Harness;
let api: Client;
let s: Awaited<ReturnType<typeof seed>>;

const data = async (p: Promise<Reply>) => {
  const r = await p;
  if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data;
};
const newestHeadline = async () => (await api.get("/v2/newsfeed")).body.data[0];

beforeAll(async () => {
  h = await startHarness();
  api = client(h, await h.key("alpha", "*"));
  s = await seed(api);
});
afterAll(() => h.close());

describe("records", () => {
  test("each record type lands on the user's newsfeed with a headline naming the user", async () => {
    const award = await data(api.post("/v2/awards", { name: "Medal of Honor" }));
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ["award-records", { award_id: award.id }, /^Ann Smith was awarded the Medal of Honor$/],
      ["combat-records", { text: "Led the assault" }, /^Ann Smith received a new combat record$/],
      [
        "qualification-records",
        { qualification_id: s.qualification.id },
        /^Ann Smith earned the Marksman qualification$/,
      ],
      ["service-records", { text: "Two years" }, /^Ann Smith received a new service record$/],
      [
        "training-records",
        { instructor_id: s.other.id, text: "Basic" },
        /^Ann Smith completed training with Bob Jones$/,
      ],
      [
        "assignment-records",
        { type: "secondary", text: "Attached" },
        /^Ann Smith received a new secondary assignment$/,
      ],
    ];
    for (const [path, body, headline] of cases) {
      const record = await data(api.post(`/v2/users/${s.user.id}/${path}`, body));
      expect(record).toMatchObject({ user_id: s.user.id });
      const item = await newestHeadline();
      expect(item).toMatchObject({ subject_id: record.id, event: "created" });
      expect(item.headline).toMatch(headline);
      expect((await api.get(`/v2/${path}/${record.id}`)).body.data.id).toBe(record.id);
    }
    const user = (await api.get(`/v2/users/${s.user.id}?include=award_records,award_records.award,training_records`))
      .body.data;
    expect(user.award_records[0].award.name).toBe("Medal of Honor");
    expect(user.training_records[0]).toMatchObject({ instructor_id: s.other.id });
  });

  test("combat and service records need text; award and qualification records their award or qualification", async () => {
    for (const [path, field] of [
      ["combat-records", "text"],
      ["service-records", "text"],
      ["award-records", "award_id"],
      ["qualification-records", "qualification_id"],
    ]) {
      const r = await api.post(`/v2/users/${s.user.id}/${path}`, {});
      expect(r.status).toBe(422);
      expect(r.body.error.errors).toHaveProperty(field);
    }
    const r = await api.post("/v2/training-records", { user_id: s.user.id });
    expect(Object.keys(r.body.error.errors)).toEqual(["instructor_id"]);
  });
});

describe("events", () => {
  test("ends may not come before starts, on create and on update; interval and channels are checked lists", async () => {
    const calendar = await data(api.post("/v2/calendars", { name: "Operations", color: "#2563eb" }));
    const base = { name: "Op Thunder", calendar_id: calendar.id, all_day: false, starts: "2030-05-01T18:00:00Z" };
    const early = await api.post("/v2/events", { ...base, ends: "2030-05-01T17:00:00Z" });
    expect(early.status).toBe(422);
    expect(early.body.error.errors).toHaveProperty("ends");
    const bad = await api.post("/v2/events", {
      ...base,
      ends: "2030-05-01T20:00:00Z",
      notifications_interval: ["pt1h", "soon"],
    });
    expect(bad.body.error.errors).toHaveProperty("notifications_interval");
    const event = await data(
      api.post("/v2/events", { ...base, ends: "2030-05-01T20:00:00Z", notifications_channels: "mail" }),
    );
    expect(event).toMatchObject({
      author_id: null,
      all_day: false,
      notifications_channels: ["mail"],
      registration_enabled: true,
    });
    expect((await api.patch(`/v2/events/${event.id}`, { ends: "2030-04-30T00:00:00Z" })).status).toBe(422);
    expect((await api.patch(`/v2/events/${event.id}`, { starts: "2030-05-01T19:00:00Z" })).status).toBe(200);
    const shown = (await api.get(`/v2/calendars/${calendar.id}?include=events`)).body.data;
    expect(shown.events.map((e: { id: number }) => e.id)).toEqual([event.id]);
  });

  test("JSON columns of a closed shape are typed in GraphQL (enum lists in and out); REST keeps its wire values and messages", async () => {
    const calendar = await data(api.post("/v2/calendars", { name: "Typed", color: "#2563eb" }));
    const made = await api.graphql(
      `mutation($input: CreateEventInput!) { createEvent(input: $input) { event { rowId notificationsChannels notificationsInterval } } }`,
      {
        input: {
          name: "Op Typed",
          calendarId: calendar.id,
          allDay: false,
          starts: "2030-05-01T18:00:00Z",
          ends: "2030-05-01T20:00:00Z",
          notificationsChannels: ["MAIL", "SMS"],
          notificationsInterval: "PT1H",
        },
      },
    );
    expect(made.body.errors, JSON.stringify(made.body.errors)).toBeUndefined();
    const event = made.body.data.createEvent.event;
    expect(event).toMatchObject({ notificationsChannels: ["MAIL", "SMS"], notificationsInterval: ["PT1H"] });
    expect((await data(api.get(`/v2/events/${event.rowId}`))).notifications_channels).toEqual(["mail", "sms"]);
    const refused = await api.graphql(
      `mutation($input: CreateEventInput!) { createEvent(input: $input) { event { rowId } } }`,
      {
        input: {
          name: "Op Bad",
          calendarId: calendar.id,
          allDay: false,
          starts: "2030-05-01T18:00:00Z",
          ends: "2030-05-01T20:00:00Z",
          notificationsChannels: ["mail"],
        },
      },
    );
    expect(refused.body.errors?.length).toBeGreaterThan(0);
    const rest = await api.post("/v2/events", {
      name: "Op Rest",
      calendar_id: calendar.id,
      all_day: false,
      starts: "2030-05-01T18:00:00Z",
      ends: "2030-05-01T20:00:00Z",
      notifications_channels: 5,
    });
    expect(rest.status).toBe(422);
    expect(rest.body.error.errors).toEqual({
      notifications_channels: ["The selected notifications channels is invalid."],
    });
  });
});

describe("announcements and messages", () => {
  test("an announcement is put on the newsfeed; named colours are stored as PERSCOM shows them", async () => {
    const a = await data(
      api.post("/v2/announcements", { title: "Drill tonight", content: "<p>20:00</p>", color: "success" }),
    );
    expect(a).toMatchObject({ color: "#16a34a", enabled: true, global: false, label: `Announcement: ${a.id}` });
    expect(await newestHeadline()).toMatchObject({
      subject_type: "App\\Models\\Announcement",
      subject_id: a.id,
      headline: "Drill tonight",
    });
    expect((await api.patch(`/v2/announcements/${a.id}`, { color: "mauve" })).body.data.color).toBe("#2563eb");
  });

  test("a message is at most 255 characters when created, goes over known channels, to users of the account", async () => {
    const long = await api.post("/v2/messages", { message: "x".repeat(256), channels: "mail" });
    expect(long.body.error.errors).toHaveProperty("message");
    const channel = await api.post("/v2/messages", { message: "Hi", channels: ["pigeon"] });
    expect(channel.body.error.errors).toHaveProperty("channels");
    const stranger = await api.post("/v2/messages", { message: "Hi", channels: "mail", recipients: [999999] });
    expect(stranger.body.error.errors).toHaveProperty("recipients");
    const m = await data(
      api.post("/v2/messages", { message: "Hi", channels: "discord_public", recipients: [s.user.id, s.user.id] }),
    );
    expect(m).toMatchObject({ channels: ["discord_public"], recipients: [s.user.id], repeats: false, sent_at: null });
  });
});

describe("users", () => {
  test("display name, photo URLs and the new provider ids", async () => {
    const u = await data(api.patch(`/v2/users/${s.other.id}`, { github_user_id: "bobj", google_user_id: "123" }));
    expect(u).toMatchObject({
      display_name: "Bob Jones",
      github_user_id: "bobj",
      google_user_id: "123",
      facebook_user_id: null,
      cover_photo_url: null,
    });
    expect(u.profile_photo_url).toBe("https://ui-avatars.com/api/?name=B+J&color=2563eb&background=eff6ff");
    // Each word's first code point, encoded where it is not an ASCII letter or digit; runs of spaces are one.
    const renamed = await data(
      api.patch(`/v2/users/${s.other.id}`, { name: "  Élodie  van der 9Berg \u{1F600}x &co" }),
    );
    expect(renamed.profile_photo_url).toBe(
      "https://ui-avatars.com/api/?name=%C3%89+v+d+9+%F0%9F%98%80+%26&color=2563eb&background=eff6ff",
    );
    await data(api.patch(`/v2/users/${s.other.id}`, { name: "Bob Jones" }));
    expect(u).toMatchObject({ online: false, last_rank_change_date: null, last_assignment_change_date: null });
  });

  test("the last rank and primary assignment changes are the newest such records' dates, read for a whole page at once", async () => {
    const rank = await data(
      api.post(`/v2/users/${s.other.id}/rank-records`, {
        rank_id: s.corporal.id,
        type: 0,
        created_at: "2030-02-03T04:05:06Z",
      }),
    );
    await data(
      api.post(`/v2/users/${s.other.id}/assignment-records`, { type: "secondary", created_at: "2030-03-01T00:00:00Z" }),
    );
    await data(
      api.post(`/v2/users/${s.other.id}/assignment-records`, { type: "primary", created_at: "2030-01-01T00:00:00Z" }),
    );
    const users = (await api.get("/v2/users")).body.data;
    const bob = users.find((x: { id: number }) => x.id === s.other.id);
    expect(bob).toMatchObject({
      last_rank_change_date: rank.created_at,
      last_assignment_change_date: "2030-01-01T00:00:00.000000Z",
    });
    expect(rank.created_at).toBe("2030-02-03T04:05:06.000000Z");
  });

  test("/me lists the key's own user whatever its scopes, and nothing for a key without one", async () => {
    const mine = client(h, await h.key("alpha", "view:rank", s.user.id));
    const me = (await mine.get("/v2/me")).body;
    expect(me.data.map((u: { id: number }) => u.id)).toEqual([s.user.id]);
    expect(me.meta.total).toBe(1);
    expect((await api.get("/v2/me")).body.data).toEqual([]);
  });

  test("the user's current unit is reached through /users/{user}/unit", async () => {
    const unit = await data(api.post("/v2/units", { name: "Alpha Company" }));
    await data(api.patch(`/v2/users/${s.other.id}`, { unit_id: unit.id }));
    expect((await api.get(`/v2/users/${s.other.id}/unit?include=image`)).body.data).toMatchObject({
      id: unit.id,
      image: null,
    });
    expect((await api.get(`/v2/users/${s.user.id}/position`)).status).toBe(404);
  });
});

describe("groups and the roster", () => {
  test("the roster shows visible groups with their units and people embedded", async () => {
    const unit = await data(api.post("/v2/units", { name: "Bravo Company" }));
    await data(api.patch(`/v2/users/${s.user.id}`, { unit_id: unit.id }));
    const shown = await data(api.post("/v2/groups", { name: "Line" }));
    const hidden = await data(api.post("/v2/groups", { name: "Reserve", hidden: true }));
    await api.post(`/v2/groups/${shown.id}/units/attach`, { resources: { [unit.id]: { order: 2 } } });
    const roster = (await api.get("/v2/roster")).body.data;
    expect(roster.map((g: { id: number }) => g.id)).toEqual([shown.id]);
    expect(roster[0].units[0]).toMatchObject({ id: unit.id, pivot: { order: 2 } });
    expect(roster[0].units[0].users[0]).toMatchObject({ id: s.user.id, rank: { name: "Private" } });
    expect((await api.get(`/v2/roster/${hidden.id}`)).status).toBe(404);
    const visible = (await api.post("/v2/groups/search", { scopes: [{ name: "visible" }] })).body.data.map(
      (g: { id: number }) => g.id,
    );
    expect(visible).toEqual([shown.id]);
  });
});

const png = () =>
  new Blob([Buffer.from("89504e470d0a1a0a0000000d4948445200000001000000010806000000", "hex")], { type: "image/png" });
const imageForm = (name: string) => {
  const form = new FormData();
  form.set("name", name);
  form.set("image", png(), `${name}.png`);
  return form;
};

describe("image sub-resources", () => {
  test("awards, groups, ranks and units hold one image; an event's image is listed as a collection", async () => {
    const award = await data(api.post("/v2/awards", { name: "Star" }));
    const group = await data(api.post("/v2/groups", { name: "HQ" }));
    const unit = await data(api.post("/v2/units", { name: "Signals" }));
    for (const [path, owner] of [
      ["awards", award],
      ["groups", group],
      ["ranks", s.corporal],
      ["units", unit],
    ] as const) {
      const image = await data(api.post(`/v2/${path}/${owner.id}/image`, imageForm(path)));
      expect(image).toMatchObject({ model_id: owner.id, name: path });
      expect((await api.post(`/v2/${path}/${owner.id}/image`, imageForm("again"))).status).toBe(409);
      expect((await api.get(`/v2/${path}/${owner.id}/image`)).body.data.id).toBe(image.id);
    }
    const calendar = await data(api.post("/v2/calendars", { name: "Ceremonies", color: "#ffffff" }));
    const event = await data(
      api.post("/v2/events", {
        name: "Parade",
        calendar_id: calendar.id,
        all_day: true,
        starts: "2032-01-01",
        ends: "2032-01-01",
      }),
    );
    const image = await data(api.post(`/v2/events/${event.id}/image`, imageForm("parade")));
    const listed = (await api.get(`/v2/events/${event.id}/image`)).body;
    expect(listed.data.map((i: { id: number }) => i.id)).toEqual([image.id]);
    expect((await api.get(`/v2/events/${event.id}?include=image`)).body.data.image.id).toBe(image.id);
  });
});

describe("search scopes", () => {
  test("tags picks forms by tag id or name; datePeriod picks the events that overlap it; enabled/disabled announcements", async () => {
    const calendar = await data(api.post("/v2/calendars", { name: "Training", color: "#000000" }));
    const event = (starts: string, ends: string) =>
      data(api.post("/v2/events", { name: starts, calendar_id: calendar.id, all_day: true, starts, ends }));
    const may = await event("2031-05-01", "2031-05-03");
    await event("2031-06-01", "2031-06-02");
    const found = await api.post("/v2/events/search", {
      scopes: [{ name: "datePeriod", parameters: ["2031-05-02", "2031-05-10"] }],
    });
    expect(found.body.data.map((e: { id: number }) => e.id)).toEqual([may.id]);
    expect(
      (await api.post("/v2/events/search", { scopes: [{ name: "datePeriod", parameters: ["soon", "later"] }] })).status,
    ).toBe(422);

    const off = await data(
      api.post("/v2/announcements", { title: "Old", content: "x", color: "#000000", enabled: false }),
    );
    const disabled = await api.post("/v2/announcements/search", { scopes: [{ name: "disabled" }] });
    expect(disabled.body.data.map((a: { id: number }) => a.id)).toEqual([off.id]);

    const tags = await api.post("/v2/forms/search", { scopes: [{ name: "tags", parameters: ["recruiting"] }] });
    expect(tags.status).toBe(200);
    expect(tags.body.data).toEqual([]);
  });
});
