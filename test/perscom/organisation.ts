import type { Harness } from "../harness.ts";
import { generateBody, pngBlob, type BodyContext } from "./bodies.ts";
import { flatten, type JsonSchema } from "./reference.ts";

/** A row of an answer, as the organisation reads it: its id, and a feed item's subject. */
type AnswerRow = { id?: unknown; subject_id?: unknown };

/** The members of a JSON answer read here. */
export interface ReplyBody {
  data?: AnswerRow | AnswerRow[];
  error?: { type?: string; message?: string; errors?: Record<string, unknown> };
}

export interface Reply {
  status: number;
  /** The parsed body: null when it is empty, undefined when it is not JSON. */
  body: ReplyBody | null | undefined;
  text: string;
}

/** A REST client bound to one key; bodies are JSON unless they are FormData. Non-JSON answers are kept as text. */
export class Api {
  constructor(
    private readonly h: Harness,
    private readonly key: string,
  ) {}

  async send(method: string, url: string, body?: unknown): Promise<Reply> {
    const headers: Record<string, string> = { accept: "application/json", authorization: `Bearer ${this.key}` };
    let payload: BodyInit | undefined;
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers["content-type"] = "application/json";
    }
    const response = await this.h.app.yoga.fetch(`http://muster.test${url}`, { method, headers, body: payload });
    const text = await response.text();
    let parsed: ReplyBody | null | undefined = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed, text };
  }
}

/** Preparing an operation's rows failed: the operation is reported as not served, with this cause. */
export class SetupError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** `404 NotFoundHttpException: The requested ...` from an error reply. */
export function describeReply(r: Reply): string {
  const error = r.body?.error;
  if (error) {
    const fields = error.errors ? ` ${JSON.stringify(error.errors)}` : "";
    return `${r.status} ${error.type ?? "?"}: ${error.message ?? ""}${fields}`.slice(0, 500);
  }
  return `${r.status} ${r.body === undefined ? `non-JSON body: ${r.text.slice(0, 200)}` : JSON.stringify(r.body).slice(0, 300)}`;
}

const templateOf = (url: string) => url.replace(/\/\d+(?=\/|\?|$)/g, "/{id}").replace(/\?.*$/, "");

/** The collections whose rows the seed creates at the top level (`POST /{version}/<collection>`). */
const TOP_LEVEL = [
  "announcements",
  "assignment-records",
  "attachments",
  "awards",
  "award-records",
  "calendars",
  "categories",
  "combat-records",
  "comments",
  "documents",
  "events",
  "forms",
  "groups",
  "images",
  "messages",
  "positions",
  "qualifications",
  "qualification-records",
  "ranks",
  "rank-records",
  "service-records",
  "specialties",
  "statuses",
  "submissions",
  "tasks",
  "units",
  "users",
] as const;
export const RECORDS = [
  "assignment-records",
  "award-records",
  "combat-records",
  "qualification-records",
  "rank-records",
  "service-records",
] as const;
/** Parents of the `{parent}/{id}/image` one-to-one routes. */
export const IMAGE_OWNERS = ["awards", "events", "groups", "qualifications", "ranks", "units"] as const;
export const CATEGORY_LINKS = ["awards", "documents", "forms", "qualifications", "ranks"] as const;

/** Which seeded row a foreign-key attribute names by default. */
const REFS: Record<string, string> = {
  user_id: "users",
  author_id: "admin",
  rank_id: "ranks",
  position_id: "positions",
  specialty_id: "specialties",
  unit_id: "units",
  status_id: "statuses",
  award_id: "awards",
  qualification_id: "qualifications",
  document_id: "documents",
  calendar_id: "calendars",
  form_id: "forms",
  model_id: "rank-records",
  submission_status_id: "pending",
};

/**
 * One organisation, seeded through the REST API itself: at least one row of every resource with
 * every relation linked, plus factories for fresh rows that destructive operations consume.
 */
export class Organisation {
  /** Seeded ids: by collection name (`ranks`, `rank-records`, ...) and a few named extras (`admin`, `other`, `pending`, `scratchForm`, `newsfeed`). */
  readonly ids: Record<string, number> = {};
  /** Seeded related rows of nested routes, by `<parent collection>/<relation>` (`users/tasks`, `ranks/image`, ...). */
  readonly links: Record<string, number> = {};
  /** Seed steps that failed, by name. */
  readonly seedErrors: Record<string, string> = {};
  /** Every request the seed and the factories sent that was answered 5xx. */
  readonly setup5xx: string[] = [];
  api!: Api;
  private counter = 100;

  constructor(
    private readonly h: Harness,
    readonly createSchemaOf: (collection: string) => JsonSchema,
  ) {}

  next = () => ++this.counter;

  need(name: string, from: Record<string, number> = this.ids): number {
    const id = from[name];
    if (id === undefined) {
      const step = Object.keys(this.seedErrors).find(
        (s) => s === name || s.startsWith(`${name} `) || s.endsWith(` ${name}`),
      );
      throw new SetupError(`seed "${name}" missing${step ? `: ${this.seedErrors[step]}` : ""}`);
    }
    return id;
  }

  link(name: string): number {
    return this.need(name, this.links);
  }

  context(refs: Record<string, number> = {}): BodyContext {
    return {
      next: this.next,
      ref: (attribute) => {
        if (refs[attribute] !== undefined) return refs[attribute];
        const seeded = REFS[attribute];
        if (!seeded) throw new SetupError(`no seeded row to send as ${attribute}`);
        return this.need(seeded);
      },
    };
  }

  /** A body for `schema`, with the custom value the seeded form requires on submissions. */
  body(
    schema: JsonSchema,
    overrides: Record<string, unknown> = {},
    refs: Record<string, number> = {},
  ): Record<string, unknown> {
    const custom = flatten(schema).title === "Submission" ? { callsign: `Viper ${this.counter}` } : {};
    return generateBody(schema, this.context(refs), { ...custom, ...overrides });
  }

  /** Sends a setup request; any 2xx is accepted, anything else is a SetupError. */
  async ok(method: string, url: string, body?: unknown): Promise<ReplyBody | null | undefined> {
    const r = await this.api.send(method, url, body);
    if (r.status >= 500) this.setup5xx.push(`${method} ${url} → ${describeReply(r)}`);
    if (r.status < 200 || r.status > 299)
      throw new SetupError(`setup ${method} ${templateOf(url)} → ${describeReply(r)}`, r.status);
    return r.body;
  }

  async okId(method: string, url: string, body?: unknown): Promise<number> {
    const data = (await this.ok(method, url, body))?.data;
    const id = Array.isArray(data) ? data[0]?.id : data?.id;
    if (typeof id !== "number") throw new SetupError(`setup ${method} ${templateOf(url)} → no data.id in the answer`);
    return id;
  }

  /** A fresh row of a collection (its create body from the reference request schema). */
  async create(collection: string, overrides: Record<string, unknown> = {}): Promise<number> {
    if (collection === "fields") return this.createField(overrides);
    if (collection === "newsfeed") return this.createNewsfeedItem();
    return this.okId("POST", `/v2/${collection}`, this.body(this.createSchemaOf(collection), overrides));
  }

  /** Fields have no top-level create in PERSCOM: they are made on a form (`POST /forms/{form}/fields`), here a scratch form. */
  async createField(overrides: Record<string, unknown> = {}): Promise<number> {
    return this.okId(
      "POST",
      `/v2/forms/${this.need("scratchForm")}/fields`,
      this.body(this.createSchemaOf("fields"), overrides),
    );
  }

  /** Newsfeed items are made by the service: a rank record for a fresh user announces itself. */
  async createNewsfeedItem(): Promise<number> {
    const user = await this.create("users");
    const record = await this.okId(
      "POST",
      "/v2/rank-records",
      this.body(this.createSchemaOf("rank-records"), { user_id: user }),
    );
    const feed = ((await this.ok("GET", "/v2/newsfeed?limit=5"))?.data ?? []) as AnswerRow[];
    const item = feed.find((i) => i.subject_id === record) ?? feed[0];
    if (typeof item?.id !== "number") throw new SetupError("setup GET /v2/newsfeed → no item for a new rank record");
    return item.id;
  }

  /** The image of a one-to-one image route, sent as JSON with a `data:` URI. */
  async createImage(owner: string, ownerId: number): Promise<number> {
    return this.okId("POST", `/v2/${owner}/${ownerId}/image`, this.body(this.createSchemaOf("images")));
  }

  async attach(parent: string, parentId: number, relation: string, resources: unknown): Promise<void> {
    await this.ok("POST", `/v2/${parent}/${parentId}/${relation}/attach`, { resources });
  }

  private async step(name: string, run: () => Promise<void>): Promise<void> {
    try {
      await run();
    } catch (e) {
      this.seedErrors[name] = e instanceof Error ? e.message : String(e);
    }
  }

  private async one(name: string, collection: string, overrides: () => Record<string, unknown> = () => ({})) {
    await this.step(name, async () => {
      this.ids[name] = await this.create(collection, overrides());
    });
  }

  async seed(): Promise<void> {
    const bootstrap = new Api(this.h, await this.h.key("alpha", "*"));
    this.api = bootstrap;
    await this.step("admin", async () => {
      this.ids.admin = await this.okId("POST", "/v2/users", { name: "Admin", email: "admin@example.com" });
    });
    this.api = new Api(this.h, await this.h.key("alpha", "*", this.ids.admin ?? null));

    await this.one("statuses", "statuses", () => ({ name: "Active", color: "#16a34a" }));
    await this.one("pending", "statuses", () => ({ name: "Pending", color: "#999" }));
    for (const c of [
      "ranks",
      "positions",
      "specialties",
      "units",
      "awards",
      "qualifications",
      "documents",
      "calendars",
      "announcements",
      "groups",
    ]) {
      await this.one(c, c);
    }
    await this.one("users", "users", () => ({
      name: "Ann Smith",
      email: "ann@example.com",
      rank_id: this.need("ranks"),
      position_id: this.need("positions"),
      specialty_id: this.need("specialties"),
      unit_id: this.need("units"),
      status_id: this.need("statuses"),
    }));
    await this.one("other", "users", () => ({ name: "Bob Jones", email: "bob@example.com" }));
    for (const [relation, collection] of [
      ["rank", "ranks"],
      ["position", "positions"],
      ["specialty", "specialties"],
      ["unit", "units"],
      ["status", "statuses"],
    ]) {
      if (this.ids[collection] !== undefined) this.links[`users/${relation}`] = this.ids[collection]!;
    }
    await this.one("events", "events");
    await this.one("messages", "messages");
    await this.one("images", "images");

    // Images of the one-to-one routes: one as multipart (a real upload), the others as data: URIs in JSON.
    await this.step("ranks/image", async () => {
      const form = new FormData();
      form.set("name", "Rank insignia");
      form.set("image", pngBlob(), "insignia.png");
      this.links["ranks/image"] = await this.okId("POST", `/v2/ranks/${this.need("ranks")}/image`, form);
    });
    for (const owner of IMAGE_OWNERS.filter((o) => o !== "ranks")) {
      await this.step(`${owner}/image`, async () => {
        this.links[`${owner}/image`] = await this.createImage(owner, this.need(owner));
      });
    }
    await this.step("groups/units", () => this.attach("groups", this.need("groups"), "units", [this.need("units")]));

    await this.one("forms", "forms", () => ({ name: "Enlistment", submission_status_id: this.need("pending") }));
    await this.step("forms/fields", async () => {
      const form = this.need("forms");
      this.links["forms/fields"] = await this.okId("POST", `/v2/forms/${form}/fields`, {
        name: "Callsign",
        key: "callsign",
        type: "text",
        required: true,
      });
      await this.okId("POST", `/v2/forms/${form}/fields`, { name: "Age", key: "age", type: "number" });
    });
    await this.one("scratchForm", "forms", () => ({ name: "Scratch" }));
    await this.step("users/fields", async () => {
      const field = await this.createField({ name: "Nickname" });
      await this.attach("users", this.need("users"), "fields", { [field]: { order: 1 } });
      this.links["users/fields"] = field;
    });
    await this.one("submissions", "submissions");
    if (this.ids.submissions !== undefined) this.links["forms/submissions"] = this.ids.submissions;
    await this.step("submissions/statuses", async () => {
      await this.attach("submissions", this.need("submissions"), "statuses", {
        [this.need("statuses")]: { text: "Received" },
      });
      this.links["submissions/statuses"] = this.need("statuses");
    });
    await this.step("tasks", async () => {
      const body = this.body(this.createSchemaOf("tasks"), { pivot: { due_at: "2031-01-01T00:00:00.000000Z" } });
      this.ids.tasks = await this.okId("POST", `/v2/users/${this.need("users")}/tasks`, body);
      this.links["users/tasks"] = this.ids.tasks;
    });
    await this.one("attachments", "attachments");
    await this.step("users/attachments", async () => {
      this.links["users/attachments"] = await this.okId(
        "POST",
        `/v2/users/${this.need("users")}/attachments`,
        this.body(this.createSchemaOf("attachments")),
      );
    });
    for (const records of RECORDS) {
      await this.one(records, records);
      if (this.ids[records] !== undefined) this.links[`users/${records}`] = this.ids[records]!;
    }
    await this.step("newsfeed", async () => {
      const feed = ((await this.ok("GET", "/v2/newsfeed"))?.data ?? []) as AnswerRow[];
      const item = feed.find((i) => i.subject_id === this.ids["rank-records"]) ?? feed[0];
      if (typeof item?.id !== "number")
        throw new SetupError("GET /v2/newsfeed lists no item after a rank record was created");
      this.ids.newsfeed = item.id;
      await this.attach("newsfeed", item.id, "likes", [this.need("users")]);
      this.links["newsfeed/likes"] = this.need("users");
    });
    await this.one("comments", "comments", () => ({
      model_type: "App\\Models\\RankRecord",
      model_id: this.need("rank-records"),
    }));
    await this.one("categories", "categories");
    for (const related of CATEGORY_LINKS) {
      await this.step(`categories/${related}`, async () => {
        await this.attach("categories", this.need("categories"), related, { [this.need(related)]: { order: 1 } });
        this.links[`categories/${related}`] = this.need(related);
      });
    }
    await this.step("users/status-records", async () => {
      await this.attach("users", this.need("users"), "status-records", { [this.need("statuses")]: { text: "Joined" } });
      this.links["users/status-records"] = this.need("statuses");
    });
  }
}

export const topLevelCollections: readonly string[] = TOP_LEVEL;
