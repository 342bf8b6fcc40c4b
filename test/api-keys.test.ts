/**
 * The API keys API (`/v2/api-keys`, GraphQL `apiKeys`): a key made through the API is shown once and stored as its
 * SHA-256, holds no scope its maker lacks, a publishable one holds only what a public page may and is bound to its
 * origins, a refused key stores nothing, and deleting a key revokes it on the next request.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, expect, test } from "vitest";
import { client, startHarness, type Client, type Harness } from "./harness.ts";

let h: Harness;
let admin: Client;

beforeAll(async () => {
  h = await startHarness();
  admin = client(h, await h.key("alpha"));
});
afterAll(() => h.close());

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const keyCount = () => h.db.prisma.apiKey.count();

test("a key made through the API is shown once, stored as its SHA-256, and works at once", async () => {
  const made = await admin.post("/v2/api-keys", { name: "Roster sync", scopes: ["view:user", "view:rank"] });
  expect(made.status).toBe(200);
  const { id, key, prefix, scopes, publishable, allowed_origins } = made.body.data;
  expect(key).toMatch(/^mst_[A-Za-z0-9_-]{40,}$/);
  expect(prefix).toBe(key.slice(0, 12));
  expect({ scopes, publishable, allowed_origins }).toEqual({
    scopes: ["view:user", "view:rank"],
    publishable: false,
    allowed_origins: null,
  });
  const row = await h.db.prisma.apiKey.findUniqueOrThrow({ where: { id } });
  expect(row.hash).toBe(sha256(key));
  expect(JSON.stringify(row)).not.toContain(key);

  const shown = await admin.get(`/v2/api-keys/${id}`);
  expect(shown.body.data.key).toBeNull();
  expect(shown.body.data).not.toHaveProperty("hash");
  const listed = await admin.graphql("{ apiKeys { nodes { name prefix scopes key } } }");
  expect(listed.body.data.apiKeys.nodes).toContainEqual({
    name: "Roster sync",
    prefix,
    scopes: ["view:user", "view:rank"],
    key: null,
  });

  const made2 = client(h, key);
  expect((await made2.get("/v2/users")).status).toBe(200);
  expect((await made2.get("/v2/awards")).status).toBe(403);
});

test("a key cannot be given a scope its maker does not hold, nor *", async () => {
  const maker = client(h, await h.key("alpha", "view:user,create:apikey"));
  const before = await keyCount();
  const refused = await maker.post("/v2/api-keys", { name: "Stronger", scopes: ["view:user", "update:user"] });
  expect(refused.status).toBe(422);
  expect(Object.keys(refused.body.error.errors)).toEqual(["scopes.1"]);
  expect(refused.body.error.errors["scopes.1"][0]).toContain("does not hold");
  const all = await maker.post("/v2/api-keys", { name: "All", scopes: ["*"] });
  expect(all.status).toBe(422);
  expect(Object.keys(all.body.error.errors)).toEqual(["scopes.0"]);
  const unknown = await maker.post("/v2/api-keys", { name: "Typo", scopes: ["view:usr"] });
  expect(unknown.status).toBe(422);
  expect(unknown.body.error.errors["scopes.0"][0]).toContain("view:user");
  expect(await keyCount()).toBe(before);
  const allowed = await maker.post("/v2/api-keys", { name: "Same", scopes: ["view:user"] });
  expect(allowed.status).toBe(200);
  // Without view:apikey it cannot list the account's keys, even the one it made.
  expect((await maker.get("/v2/api-keys")).status).toBe(403);
});

test("a publishable key holds only public view scopes and create:submission, and is bound to its origins", async () => {
  const before = await keyCount();
  const writes = await admin.post("/v2/api-keys", {
    name: "Page",
    publishable: true,
    allowed_origins: ["https://unit.example"],
    scopes: ["view:user", "create:user", "view:webhook"],
  });
  expect(writes.status).toBe(422);
  expect(Object.keys(writes.body.error.errors).sort()).toEqual(["scopes.1", "scopes.2"]);
  expect(writes.body.error.errors["scopes.1"][0]).toContain('"create:user"');
  const noOrigins = await admin.post("/v2/api-keys", { name: "Page", publishable: true, scopes: ["view:user"] });
  expect(noOrigins.status).toBe(422);
  expect(Object.keys(noOrigins.body.error.errors)).toEqual(["allowed_origins"]);
  const badOrigin = await admin.post("/v2/api-keys", {
    name: "Page",
    publishable: true,
    allowed_origins: ["https://unit.example/roster"],
    scopes: ["view:user"],
  });
  expect(badOrigin.status).toBe(422);
  expect(Object.keys(badOrigin.body.error.errors)).toEqual(["allowed_origins.0"]);
  const ordinaryWithOrigins = await admin.post("/v2/api-keys", {
    name: "Server",
    allowed_origins: ["https://unit.example"],
    scopes: ["view:user"],
  });
  expect(ordinaryWithOrigins.status).toBe(422);
  expect(await keyCount()).toBe(before);

  const made = await admin.post("/v2/api-keys", {
    name: "Page",
    publishable: true,
    allowed_origins: ["https://unit.example", "https://unit.example"],
    scopes: ["view:user", "view:rank", "create:submission"],
  });
  expect(made.status).toBe(200);
  expect(made.body.data.key).toMatch(/^mpk_/);
  expect(made.body.data.allowed_origins).toEqual(["https://unit.example"]);
  const fromPage = client(h, made.body.data.key, { origin: "https://unit.example" });
  const roster = await fromPage.get("/v2/users");
  expect(roster.status).toBe(200);
  expect(roster.headers.get("access-control-allow-origin")).toBe("https://unit.example");
  const elsewhere = await client(h, made.body.data.key, { origin: "https://other.example" }).get("/v2/users");
  expect(elsewhere.status).toBe(403);
  // It never reaches the account's keys, whatever it holds.
  expect((await fromPage.get("/v2/api-keys")).status).toBe(403);

  const flipped = await admin.patch(`/v2/api-keys/${made.body.data.id}`, { publishable: false });
  expect(flipped.status).toBe(422);
  expect(Object.keys(flipped.body.error.errors)).toEqual(["publishable"]);
  const widened = await admin.patch(`/v2/api-keys/${made.body.data.id}`, { scopes: ["view:user", "delete:user"] });
  expect(widened.status).toBe(422);
  expect((await h.db.prisma.apiKey.findUniqueOrThrow({ where: { id: made.body.data.id } })).scopes).toEqual([
    "view:user",
    "view:rank",
    "create:submission",
  ]);
});

test("deleting a key revokes it: its next request is a 401", async () => {
  const made = await admin.post("/v2/api-keys", { name: "Short-lived", scopes: ["view:user"] });
  const user = client(h, made.body.data.key);
  expect((await user.get("/v2/users")).status).toBe(200);
  expect((await admin.delete(`/v2/api-keys/${made.body.data.id}`)).status).toBe(200);
  expect((await user.get("/v2/users")).status).toBe(401);
});

test("keys are the account's own: another account's key is not found", async () => {
  const made = await admin.post("/v2/api-keys", { name: "Alpha's", scopes: ["view:user"] });
  const beta = client(h, await h.key("beta"));
  expect((await beta.get(`/v2/api-keys/${made.body.data.id}`)).status).toBe(404);
  expect((await beta.delete(`/v2/api-keys/${made.body.data.id}`)).status).toBe(404);
  expect((await client(h, made.body.data.key).get("/v2/users")).status).toBe(200);
});
