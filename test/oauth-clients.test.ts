/**
 * The OAuth clients API (`/v2/oauth-clients`, GraphQL `oauthClients`) and `clients:create`: what a client is made with,
 * what is refused (422, nothing stored), and the secret shown once and stored only as its SHA-256.
 */
import { createHash } from "node:crypto";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, test } from "vitest";
import { client, startHarness, type Client, type Harness } from "./harness.ts";
import { cliArgs } from "./support/built.ts";

const run = promisify(execFile);
let h: Harness;
let api: Client;

beforeAll(async () => {
  h = await startHarness();
  api = client(h, await h.key("alpha"));
});
afterAll(() => h.close());

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

test("a confidential client gets an id and a secret shown once, stored only as its SHA-256", async () => {
  const made = await api.post("/v2/oauth-clients", {
    name: "Roster app",
    redirect_uris: ["https://app.example/callback", "http://127.0.0.1:8765/cb"],
    scopes: ["view:user", "view:rank"],
    allowed_origins: ["https://app.example"],
  });
  expect(made.status).toBe(200);
  const { id, client_id, client_secret, public: isPublic } = made.body.data;
  expect(client_id).toMatch(/^mcl_[A-Za-z0-9_-]{20,}$/);
  expect(client_secret).toMatch(/^mcs_[A-Za-z0-9_-]{40,}$/);
  expect(isPublic).toBe(false);
  const row = await h.db.prisma.oAuthClient.findUniqueOrThrow({ where: { clientId: client_id } });
  expect(row.secretHash).toBe(sha256(client_secret));
  expect(JSON.stringify(row)).not.toContain(client_secret);
  const shown = await api.get(`/v2/oauth-clients/${id}`);
  expect(shown.body.data.client_secret).toBeNull();
  expect(shown.body.data).not.toHaveProperty("secret_hash");
  const listed = await api.graphql("{ oauthClients { nodes { clientId clientSecret redirectUris } } }");
  expect(listed.body.data.oauthClients.nodes).toEqual([
    {
      clientId: client_id,
      clientSecret: null,
      redirectUris: ["https://app.example/callback", "http://127.0.0.1:8765/cb"],
    },
  ]);

  const rotated = await api.post(`/v2/oauth-clients/${id}/secret`);
  expect(rotated.status).toBe(200);
  expect(rotated.body.data.client_secret).toMatch(/^mcs_/);
  expect(rotated.body.data.client_secret).not.toBe(client_secret);
  expect((await h.db.prisma.oAuthClient.findUniqueOrThrow({ where: { id } })).secretHash).toBe(
    sha256(rotated.body.data.client_secret),
  );
});

test("a public client has no secret, and has none to rotate", async () => {
  const made = await api.post("/v2/oauth-clients", {
    name: "SPA",
    public: true,
    redirect_uris: ["http://localhost:3000/cb"],
  });
  expect(made.status).toBe(200);
  expect(made.body.data.client_secret).toBeNull();
  expect(made.body.data.scopes).toEqual([]);
  const row = await h.db.prisma.oAuthClient.findUniqueOrThrow({ where: { id: made.body.data.id } });
  expect(row.secretHash).toBeNull();
  const rotate = await api.post(`/v2/oauth-clients/${made.body.data.id}/secret`);
  expect(rotate.status).toBe(422);
  expect(rotate.body.error.errors.public[0]).toMatch(/public client has no secret/);
});

test("bad redirect URIs, origins and scopes are 422 naming each, the closest scope suggested, and nothing is stored", async () => {
  const before = await h.db.prisma.oAuthClient.count();
  const refused = await api.post("/v2/oauth-clients", {
    name: "Bad",
    redirect_uris: ["http://app.example/cb", "https://app.example/cb#frag", "/relative", "http://localhost:1/ok"],
    post_logout_redirect_uris: ["ftp://app.example/"],
    allowed_origins: ["https://app.example/", "https://app.example:8443"],
    scopes: ["view:usr", "*"],
  });
  expect(refused.status).toBe(422);
  expect(refused.body.error.type).toBe("ValidationException");
  expect(Object.keys(refused.body.error.errors).sort()).toEqual([
    "allowed_origins.0",
    "post_logout_redirect_uris.0",
    "redirect_uris.0",
    "redirect_uris.1",
    "redirect_uris.2",
    "scopes.0",
  ]);
  expect(refused.body.error.errors["scopes.0"][0]).toBe('The scope "view:usr" is unknown: did you mean view:user?');
  expect(await h.db.prisma.oAuthClient.count()).toBe(before);
  expect((await api.post("/v2/oauth-clients", { name: "No URIs" })).status).toBe(422);
});

test("the scopes of the API guard the clients, and another account's client is a 404", async () => {
  const made = await api.post("/v2/oauth-clients", { name: "Mine", redirect_uris: ["https://a.example/cb"] });
  const viewer = client(h, await h.key("alpha", "view:oauthclient"));
  expect((await viewer.get(`/v2/oauth-clients/${made.body.data.id}`)).status).toBe(200);
  expect((await viewer.post("/v2/oauth-clients", { name: "X", redirect_uris: [] })).status).toBe(403);
  const other = client(h, await h.key("beta"));
  expect((await other.get(`/v2/oauth-clients/${made.body.data.id}`)).status).toBe(404);
  const disabled = await api.patch(`/v2/oauth-clients/${made.body.data.id}`, { disabled_at: "2026-01-01T00:00:00Z" });
  expect(disabled.status).toBe(200);
  expect(disabled.body.data.disabled_at).toMatch(/^2026-01-01/);
});

test("clients:create --json prints the client id, and the secret only for a confidential client", async () => {
  const env = { ...process.env, DATABASE_URL: h.config.databaseUrl };
  const cli = (...args: string[]) => run(process.execPath, [...cliArgs, ...args], { env });
  const confidential = await cli(
    "clients:create",
    "--account",
    "alpha",
    "--name",
    "Backend",
    "--redirect-uri",
    "https://b.example/cb",
    "--redirect-uri",
    "https://b.example/cb2",
    "--scopes",
    "view:user,view:rank",
    "--origin",
    "https://b.example",
    "--post-logout-uri",
    "https://b.example/bye",
    "--json",
  );
  const made = JSON.parse(confidential.stdout.trim()) as { client_id: string; client_secret?: string };
  expect(Object.keys(made).sort()).toEqual(["client_id", "client_secret"]);
  const row = await h.db.prisma.oAuthClient.findUniqueOrThrow({ where: { clientId: made.client_id } });
  expect(row.secretHash).toBe(sha256(made.client_secret!));
  expect(row).toMatchObject({
    name: "Backend",
    public: false,
    redirectUris: ["https://b.example/cb", "https://b.example/cb2"],
    scopes: ["view:user", "view:rank"],
    allowedOrigins: ["https://b.example"],
    postLogoutRedirectUris: ["https://b.example/bye"],
  });

  const pub = await cli(
    "clients:create",
    "--account",
    "alpha",
    "--name",
    "SPA",
    "--public",
    "--redirect-uri",
    "http://localhost:5173/cb",
    "--json",
  );
  expect(Object.keys(JSON.parse(pub.stdout.trim()) as object)).toEqual(["client_id"]);

  const failed = await cli(
    "clients:create",
    "--account",
    "alpha",
    "--name",
    "Bad",
    "--redirect-uri",
    "ftp://x",
    "--json",
  ).then(
    () => null,
    (error: { code: number; stderr: string }) => error,
  );
  expect(failed?.code).toBe(1);
  expect(failed?.stderr.trim()).toMatch(/redirect_uris\.0: The redirect URI "ftp:\/\/x" must be an https URL/);
});
