/**
 * Publishable keys (issue 43, point 1): whatever its scopes, a publishable key sees no field the registry marks
 * `private` (absent on REST, in includes too; `null` with `FORBIDDEN` on GraphQL), cannot filter, sort or search on
 * one, never reaches the account's configuration, correspondence, the change feed or subscriptions, and submits only
 * public forms. Through `yoga.fetch`, on the test database.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { client, startHarness, type Client, type Harness } from "./harness.ts";
import { createApiKey } from "../src/auth/accounts.ts";
import { isPublishableScope } from "../src/resources/publishable.ts";
import { publishableScopes } from "../src/resources/scopes.ts";
import { knownScopes } from "../src/resources/scopes.ts";
import { readEventStream } from "./support/event-stream.ts";

const PRIVATE_USER_KEYS = [
  "email",
  "email_verified_at",
  "notes",
  "notes_updated_at",
  "last_seen_at",
  "discord_user_id",
  "facebook_user_id",
  "github_user_id",
  "google_user_id",
];

/** What a key row edited by hand might hold: every verb of every resource a publishable key never reaches. */
const everyNeverPublicScope = knownScopes.filter((s) => !isPublishableScope(s));

describe("publishable keys", () => {
  let h: Harness;
  let admin: Client;
  let pub: Client;
  let keyId: number;
  let pubKey: string;
  const ids = { user: 0, rank: 0, unit: 0, publicForm: 0, privateForm: 0 };
  beforeAll(async () => {
    h = await startHarness();
    admin = client(h, await h.key("alpha"));
    ids.rank = (await admin.post("/v2/ranks", { name: "Private", abbreviation: "PVT" })).body.data.id;
    ids.unit = (await admin.post("/v2/units", { name: "First Squad" })).body.data.id;
    const user = await admin.post("/v2/users", {
      unit_id: ids.unit,
      name: "Ada Vance",
      email: "ada@example.com",
      notes: "Met at the range",
      rank_id: ids.rank,
    });
    expect(user.status).toBe(200);
    ids.user = user.body.data.id;
    ids.publicForm = (await admin.post("/v2/forms", { name: "Enlist", slug: "enlist", is_public: true })).body.data.id;
    ids.privateForm = (await admin.post("/v2/forms", { name: "Leave", slug: "leave", is_public: false })).body.data.id;
    const made = await createApiKey(h.db.store, {
      account: "alpha",
      scopes: publishableScopes.join(","),
      publishable: true,
      origins: ["https://unit.example"],
    });
    keyId = made.id;
    pubKey = made.key;
    pub = client(h, made.key);
  });
  afterAll(() => h.close());

  test("REST leaves the private fields out, at the top level and in every include", async () => {
    const list = await pub.get("/v2/users?include=rank");
    expect(list.status).toBe(200);
    const [row] = list.body.data;
    expect(row.name).toBe("Ada Vance");
    expect(row.rank.name).toBe("Private");
    for (const key of PRIVATE_USER_KEYS) expect(row, key).not.toHaveProperty(key);
    const shown = await pub.get(`/v2/users/${ids.user}`);
    for (const key of PRIVATE_USER_KEYS) expect(shown.body.data, key).not.toHaveProperty(key);
    const included = await pub.get(`/v2/units/${ids.unit}?include=users`);
    expect(included.body.data.users).toHaveLength(1);
    for (const key of PRIVATE_USER_KEYS) expect(included.body.data.users[0], key).not.toHaveProperty(key);
    // An ordinary key still sees them.
    expect((await admin.get(`/v2/users/${ids.user}`)).body.data.email).toBe("ada@example.com");
  });

  test("GraphQL answers a private field null with FORBIDDEN at its path, the rest of the data kept", async () => {
    const answer = await pub.graphql("{ users { nodes { name email notes rank { name } } } }");
    expect(answer.body.data.users.nodes).toEqual([
      { name: "Ada Vance", email: null, notes: null, rank: { name: "Private" } },
    ]);
    const paths = answer.body.errors.map((e: { path: unknown[] }) => e.path.join("."));
    expect(paths.sort()).toEqual(["users.nodes.0.email", "users.nodes.0.notes"]);
    for (const error of answer.body.errors) expect(error.extensions.code).toBe("FORBIDDEN");
    const ordinary = await admin.graphql("{ users { nodes { email } } }");
    expect(ordinary.body.errors).toBeUndefined();
    expect(ordinary.body.data.users.nodes[0].email).toBe("ada@example.com");
  });

  test("filters, sorts and GraphQL where/orderBy on a private field are refused naming it; search skips them", async () => {
    const filtered = await pub.post("/v2/users/search", {
      filters: [{ field: "email", operator: "=", value: "ada@example.com" }],
    });
    expect(filtered.status).toBe(422);
    expect(filtered.body.error.errors["filters.0.field"][0]).toContain("email field is private");
    const sorted = await pub.post("/v2/users/search", { sort: [{ field: "notes", direction: "asc" }] });
    expect(sorted.status).toBe(422);
    expect(sorted.body.error.errors["sort.0.field"][0]).toContain("notes field is private");
    const viaRank = await pub.post("/v2/rank-records/search", {
      filters: [{ field: "user.email", operator: "=", value: "ada@example.com" }],
    });
    expect(viaRank.status).toBe(422);
    expect(viaRank.body.error.errors["filters.0.field"][0]).toContain("user.email field is private");
    // The search matches on the name, never on the email.
    const byName = await pub.post("/v2/users/search", { search: { value: "Vance" } });
    expect(byName.body.data).toHaveLength(1);
    const byEmail = await pub.post("/v2/users/search", { search: { value: "ada@example" } });
    expect(byEmail.status).toBe(200);
    expect(byEmail.body.data).toHaveLength(0);
    expect((await admin.post("/v2/users/search", { search: { value: "ada@example" } })).body.data).toHaveLength(1);

    const where = await pub.graphql('{ users(where: { email: { equals: "ada@example.com" } }) { totalCount } }');
    expect(where.body.errors[0].extensions.code).toBe("VALIDATION");
    expect(where.body.errors[0].message).toContain("email field is private");
    const order = await pub.graphql("{ users(orderBy: [{ lastSeenAt: asc }]) { totalCount } }");
    expect(order.body.errors[0].message).toContain("lastSeenAt field is private");
    const nested = await pub.graphql(
      '{ units(where: { users: { some: { notes: { contains: "range" } } } }) { totalCount } }',
    );
    expect(nested.body.errors[0].message).toContain("notes field is private");
  });

  test("even with every scope written into its row, it never reaches configuration, correspondence or the feed", async () => {
    await h.db.prisma.apiKey.update({
      where: { id: keyId },
      data: { scopes: ["*", ...everyNeverPublicScope, ...publishableScopes] },
    });
    try {
      for (const path of [
        "/v2/webhooks",
        "/v2/roles",
        "/v2/settings",
        "/v2/messages",
        "/v2/submissions",
        "/v2/oauth-clients",
        "/v2/changes",
      ]) {
        const refused = await pub.get(path);
        expect([401, 403], path).toContain(refused.status);
      }
      expect((await pub.post("/v2/ranks", { name: "Sneaky" })).status).toBe(403);
      const feed = await pub.graphql("{ changes { totalCount } }");
      expect(feed.body.errors[0].extensions.code).toBe("FORBIDDEN");
      // It still reads what it may.
      expect((await pub.get("/v2/ranks")).status).toBe(200);
    } finally {
      await h.db.prisma.apiKey.update({
        where: { id: keyId },
        data: { scopes: [...publishableScopes] },
      });
    }
    const feed = await pub.get("/v2/changes");
    expect(feed.status).toBe(403);
    const stream = readEventStream(
      await h.app.yoga.fetch("http://muster.test/graphql", {
        method: "POST",
        headers: { accept: "text/event-stream", authorization: `Bearer ${pubKey}`, "content-type": "application/json" },
        body: JSON.stringify({ query: "subscription { rankChanged { rowId } }" }),
      }),
    );
    const { errors } = await stream.next();
    expect(errors[0].extensions.code).toBe("FORBIDDEN");
    expect(errors[0].message).toContain("publishable key");
    await stream.close();
  });

  test("create:submission reaches public forms only: another form is a 422 naming form_id", async () => {
    const onPrivate = await pub.post("/v2/submissions", { form_id: ids.privateForm, user_id: ids.user });
    expect(onPrivate.status).toBe(422);
    expect(onPrivate.body.error.errors.form_id[0]).toContain("not public");
    const graphql = await pub.graphql(
      "mutation($input: CreateSubmissionInput!) { createSubmission(input: $input) { submission { rowId } } }",
      { input: { formId: ids.privateForm, userId: ids.user } },
    );
    expect(graphql.body.errors[0].extensions.code).toBe("VALIDATION");
    expect(graphql.body.errors[0].message).toContain("not public");
    expect(await h.db.prisma.submission.count()).toBe(0);
    const onPublic = await pub.post("/v2/submissions", { form_id: ids.publicForm, user_id: ids.user });
    expect(onPublic.status).toBe(200);
    expect(await h.db.prisma.submission.count()).toBe(1);
    // An ordinary key with create:submission is not limited to public forms.
    const ordinary = client(h, await h.key("alpha", "create:submission"));
    expect((await ordinary.post("/v2/submissions", { form_id: ids.privateForm, user_id: ids.user })).status).toBe(200);
  });
});
