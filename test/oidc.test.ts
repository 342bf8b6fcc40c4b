/**
 * The OpenID provider, driven by openid-client (a certified relying-party library) over real HTTP: discovery, JWKS,
 * the authorization code flow with PKCE for a public and a confidential client (the test plays the browser: it
 * follows redirects and posts the sign-in and consent forms), the ID token's claims, userinfo, refresh-token rotation,
 * client credentials, introspection, revocation, RP-initiated logout, and the API with the access tokens; then what
 * is refused, in RFC 6749's format where it is an OAuth endpoint's answer.
 */
import { execFile } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import * as oidc from "openid-client";
import { decodeProtectedHeader } from "jose";
import { client, type Client } from "./harness.ts";
import {
  Browser,
  formOf,
  PASSWORD,
  person as personOf,
  signIn as signInThrough,
  startOidcHarness,
  tokenRequest,
  type OidcHarness,
  type Page,
} from "./support/oidc.ts";
import { createOidc } from "../src/http/oidc.ts";
import { requestListener } from "../src/server/http.ts";
import { buildOpenApi } from "../src/openapi/document.ts";
import { cliArgs } from "./support/built.ts";

const run = promisify(execFile);

const SPA_REDIRECT = "http://localhost:5173/callback";
const WEB_REDIRECT = "https://web.example/callback";
const LOGOUT_REDIRECT = "https://web.example/signed-out";
const insecure = { execute: [oidc.allowInsecureRequests] };

let h: OidcHarness;
let admin: Client;
let ann: { id: number };
let spa: { id: number; client_id: string };
let web: { id: number; client_id: string; client_secret: string };

beforeAll(async () => {
  h = await startOidcHarness();
  admin = client(h, await h.key("alpha"));
  ann = await person(admin, "Ann Smith", "ann@example.com", ["view:user", "view:rank"]);
  spa = (
    await admin.post("/v2/oauth-clients", {
      name: "Roster SPA",
      public: true,
      redirect_uris: [SPA_REDIRECT],
      scopes: ["view:user", "view:rank", "create:rank"],
      allowed_origins: ["http://localhost:5173"],
    })
  ).body.data;
  web = (
    await admin.post("/v2/oauth-clients", {
      name: "Roster web",
      redirect_uris: [WEB_REDIRECT],
      post_logout_redirect_uris: [LOGOUT_REDIRECT],
      scopes: ["view:user", "view:rank"],
    })
  ).body.data;
});
afterAll(() => h.close());

/** The OAuth scheme of the OpenAPI document (src/openapi/document.ts). */
interface OAuthScheme {
  flows: {
    authorizationCode: { authorizationUrl: string; tokenUrl: string; scopes: Record<string, string> };
    clientCredentials: { tokenUrl: string };
  };
}

const publicConfig = () => oidc.discovery(new URL(h.base), spa.client_id, undefined, oidc.None(), insecure);
const webConfig = () =>
  oidc.discovery(new URL(h.base), web.client_id, undefined, oidc.ClientSecretBasic(web.client_secret), insecure);

const person = (api: Client, name: string, email: string, permissions: string[]) =>
  personOf(h, api, name, email, permissions);
const signIn = (config: oidc.Configuration, options: Parameters<typeof signInThrough>[2]) =>
  signInThrough(h, config, options);
const api = (token: string, method: string, path: string, body?: unknown) => tokenRequest(h, token, method, path, body);
const graphql = (token: string, query: string) => api(token, "POST", "/graphql", { query });

describe("discovery and keys", () => {
  test("discovery names the endpoints under /oauth, code flow with S256 only, and the scopes; JWKS has the signing key", async () => {
    const config = await publicConfig();
    const meta = config.serverMetadata();
    expect(meta.issuer).toBe(h.base);
    expect(meta.authorization_endpoint).toBe(`${h.base}/oauth/auth`);
    expect(meta.token_endpoint).toBe(`${h.base}/oauth/token`);
    expect(meta.userinfo_endpoint).toBe(`${h.base}/oauth/me`);
    expect(meta.revocation_endpoint).toBe(`${h.base}/oauth/token/revocation`);
    expect(meta.introspection_endpoint).toBe(`${h.base}/oauth/token/introspection`);
    expect(meta.end_session_endpoint).toBe(`${h.base}/oauth/session/end`);
    // The OpenAPI document's OAuth scheme names the same endpoints, and every scope discovery offers.
    const documented = (buildOpenApi() as { components: { securitySchemes: { oauth2: OAuthScheme } } }).components
      .securitySchemes.oauth2.flows;
    expect(`${h.base}${documented.authorizationCode.authorizationUrl}`).toBe(meta.authorization_endpoint);
    expect(`${h.base}${documented.authorizationCode.tokenUrl}`).toBe(meta.token_endpoint);
    expect(`${h.base}${documented.clientCredentials.tokenUrl}`).toBe(meta.token_endpoint);
    expect(Object.keys(documented.authorizationCode.scopes).sort()).toEqual([...(meta.scopes_supported ?? [])].sort());
    expect(meta.response_types_supported).toEqual(["code"]);
    expect(meta.code_challenge_methods_supported).toEqual(["S256"]);
    expect(meta.id_token_signing_alg_values_supported).toEqual(["RS256"]);
    expect(meta.scopes_supported).toEqual(
      expect.arrayContaining(["openid", "email", "profile", "offline_access", "view:user"]),
    );
    expect(meta.grant_types_supported).toEqual(
      expect.arrayContaining(["authorization_code", "refresh_token", "client_credentials"]),
    );

    const jwks = (await (await fetch(meta.jwks_uri!)).json()) as { keys: Array<Record<string, unknown>> };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: "RSA", alg: "RS256", use: "sig" });
    // Public parts only.
    expect(jwks.keys[0]).not.toHaveProperty("d");
    const stored = await h.db.prisma.signingKey.findMany();
    expect(stored.map((k) => k.kid)).toEqual([jwks.keys[0].kid]);
  });
});

describe("authorization code with PKCE", () => {
  test("a public client signs a person in: ID token claims, userinfo, and the API with the access token within their roles", async () => {
    const config = await publicConfig();
    const { tokens, consentPage } = await signIn(config, {
      redirectUri: SPA_REDIRECT,
      scope: "openid profile email offline_access view:user create:rank",
    });
    // The consent page says, in words, what the roles do not give.
    expect(consentPage.html).toMatch(/View users <code>view:user<\/code><\/li>/);
    expect(consentPage.html).toMatch(/Create ranks <code>create:rank<\/code><\/span> — not given/);

    const claims = tokens.claims()!;
    expect(claims).toMatchObject({
      iss: h.base,
      aud: spa.client_id,
      sub: String(ann.id),
      email: "ann@example.com",
      name: "Ann Smith",
      tenant: 1,
    });
    expect(claims.roles).toEqual(expect.arrayContaining(["Ann Smith role"]));
    const jwks = (await (await fetch(`${h.base}/oauth/jwks`)).json()) as { keys: Array<{ kid: string }> };
    expect(decodeProtectedHeader(tokens.id_token!).kid).toBe(jwks.keys[0].kid);
    // A scope the person's roles do not permit is not granted.
    expect(tokens.scope!.split(" ").sort()).toEqual(["email", "offline_access", "openid", "profile", "view:user"]);
    expect(tokens.refresh_token).toBeTruthy();

    const info = await oidc.fetchUserInfo(config, tokens.access_token, String(ann.id));
    expect(info).toMatchObject({ sub: String(ann.id), email: "ann@example.com", name: "Ann Smith", tenant: 1 });

    const me = await graphql(tokens.access_token, "{ me { name } }");
    expect(me.body).toEqual({ data: { me: { name: "Ann Smith" } } });
    const users = await api(tokens.access_token, "GET", "/v2/users");
    expect(users.status).toBe(200);
    // create:rank is the client's, but the person's roles do not permit it: not granted.
    expect((await api(tokens.access_token, "POST", "/v2/ranks", { name: "General" })).status).toBe(403);
  });

  test("refresh rotates: the new refresh token works, the old one is refused (invalid_grant)", async () => {
    const config = await publicConfig();
    const { tokens } = await signIn(config, { redirectUri: SPA_REDIRECT, scope: "openid offline_access view:user" });
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(refreshed.refresh_token).toBeTruthy();
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect((await api(refreshed.access_token, "GET", "/v2/users")).status).toBe(200);
    const reused = await oidc.refreshTokenGrant(config, tokens.refresh_token!).catch((error: unknown) => error);
    expect(reused).toBeInstanceOf(oidc.ResponseBodyError);
    expect((reused as oidc.ResponseBodyError).error).toBe("invalid_grant");
  });

  test("a confidential client: code flow with its secret, introspection, revocation (the API refuses the token next request), RP-initiated logout", async () => {
    const config = await webConfig();
    const { tokens, browser } = await signIn(config, { redirectUri: WEB_REDIRECT, scope: "openid email view:user" });
    expect((await api(tokens.access_token, "GET", "/v2/users")).status).toBe(200);

    const active = await oidc.tokenIntrospection(config, tokens.access_token);
    expect(active).toMatchObject({
      active: true,
      client_id: web.client_id,
      sub: String(ann.id),
      scope: "openid email view:user",
    });

    await oidc.tokenRevocation(config, tokens.access_token);
    const refused = await api(tokens.access_token, "GET", "/v2/users");
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ error: { type: "AuthenticationException" } });
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(false);

    const logout = oidc.buildEndSessionUrl(config, {
      id_token_hint: tokens.id_token!,
      post_logout_redirect_uri: LOGOUT_REDIRECT,
      state: "bye",
    });
    const question = (await browser.open(logout.toString())) as Page;
    expect(question.status).toBe(200);
    expect(question.html).toContain("Sign out?");
    expect(question.html).not.toContain("<script");
    const form = formOf(question.html, question.url, "/oauth/session/end");
    const out = (await browser.post(form.action, { ...form.fields, logout: "yes" })) as { redirectedTo: string };
    expect(out.redirectedTo).toBe(`${LOGOUT_REDIRECT}?state=bye`);
    // Signed out at the provider: a new authorization asks for the password again.
    const again = oidc.buildAuthorizationUrl(config, { redirect_uri: WEB_REDIRECT, scope: "openid", state: "x" });
    const page = (await browser.open(again.toString())) as Page;
    expect(page.html).toContain('name="password"');
  });

  test("client credentials: a token of the client alone, within the client's scopes, on REST and GraphQL", async () => {
    const config = await webConfig();
    const tokens = await oidc.clientCredentialsGrant(config, { scope: "view:user view:rank" });
    expect(tokens.scope).toBe("view:user view:rank");
    expect((await api(tokens.access_token, "GET", "/v2/ranks")).status).toBe(200);
    const users = await graphql(tokens.access_token, "{ users { totalCount } }");
    expect(users.body).toMatchObject({ data: { users: { totalCount: expect.any(Number) } } });
    expect((await api(tokens.access_token, "POST", "/v2/ranks", { name: "X" })).status).toBe(403);
    // A scope beyond the client's is refused outright.
    const beyond = await oidc.clientCredentialsGrant(config, { scope: "create:rank" }).catch((e: unknown) => e);
    expect((beyond as oidc.ResponseBodyError).error).toBe("invalid_scope");
    // A public client has no client credentials.
    const none = await oidc
      .clientCredentialsGrant(await publicConfig(), { scope: "view:user" })
      .catch((e: unknown) => e);
    expect(none).toBeInstanceOf(oidc.ResponseBodyError);
    expect((none as oidc.ResponseBodyError).cause).toMatchObject({
      error: "invalid_request",
      error_description: expect.any(String),
    });
  });
});

describe("refusals", () => {
  /** The sign-in page of a public client's code flow (PKCE), in a browser of the test's, and its form. */
  const openSignIn = async () => {
    const url = oidc.buildAuthorizationUrl(await publicConfig(), {
      redirect_uri: SPA_REDIRECT,
      scope: "openid",
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: "S256",
    });
    const browser = new Browser(h.base);
    const page = (await browser.open(url.toString())) as Page;
    return { browser, url, login: formOf(page.html, page.url, "/login") };
  };

  test("a wrong password shows the form again with a generic message (401) and signs no one in", async () => {
    const { browser, url, login } = await openSignIn();
    for (const [email, password] of [
      ["ann@example.com", "wrong password!"],
      ["nobody@example.com", PASSWORD],
    ]) {
      const again = (await browser.post(login.action, { ...login.fields, email, password })) as Page;
      expect(again.status).toBe(401);
      expect(again.html).toContain("The email or password is not right.");
      expect(again.html).toContain('name="password"');
      expect(again.html).not.toContain(password);
    }
    // Without the CSRF token the form is refused.
    const forged = (await browser.post(login.action, { email: "ann@example.com", password: PASSWORD })) as Page;
    expect(forged.status).toBe(403);
    // No one was signed in: the authorization asks for the password again.
    expect(((await browser.open(url.toString())) as Page).html).toContain('name="password"');
  });

  test("an unknown redirect URI is an error page, not a redirect; a public client without PKCE gets invalid_request", async () => {
    const config = await publicConfig();
    const browser = new Browser(h.base);
    const unknown = oidc.buildAuthorizationUrl(config, {
      redirect_uri: "https://evil.example/cb",
      scope: "openid",
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: "S256",
    });
    const page = (await browser.open(unknown.toString())) as Page;
    expect(page.status).toBe(400);
    expect(page.html).toContain("invalid_redirect_uri");
    expect(page.html).toContain("Something went wrong");

    const noPkce = oidc.buildAuthorizationUrl(config, { redirect_uri: SPA_REDIRECT, scope: "openid", state: "s" });
    const back = (await browser.open(noPkce.toString())) as { redirectedTo: string };
    const params = new URL(back.redirectedTo).searchParams;
    expect(params.get("error")).toBe("invalid_request");
    expect(params.get("error_description")).toMatch(/PKCE/i);
  });

  test("a person of account B cannot sign in through a client of account A", async () => {
    const beta = client(h, await h.key("beta"));
    await person(beta, "Bea Other", "bea@example.com", ["*"]);
    const { browser, login } = await openSignIn();
    const refused = (await browser.post(login.action, {
      ...login.fields,
      email: "bea@example.com",
      password: PASSWORD,
    })) as Page;
    expect(refused.status).toBe(401);
    expect(refused.html).toContain("The email or password is not right.");
  });

  test("the token endpoint answers RFC 6749 errors: a wrong client secret, an unknown grant", async () => {
    const basic = Buffer.from(`${web.client_id}:not-the-secret`).toString("base64");
    const wrong = await fetch(`${h.base}/oauth/token`, {
      method: "POST",
      headers: { authorization: `Basic ${basic}`, "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials",
    });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({ error: "invalid_client", error_description: "client authentication failed" });
    const unknownCode = await fetch(`${h.base}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: "nope",
        client_id: spa.client_id,
        redirect_uri: SPA_REDIRECT,
        code_verifier: oidc.randomPKCECodeVerifier(),
      }).toString(),
    });
    expect(unknownCode.status).toBe(400);
    expect(await unknownCode.json()).toMatchObject({ error: "invalid_grant", error_description: expect.any(String) });
  });

  test("a disabled client's tokens are refused on the next request (401), and it signs no one in", async () => {
    const made = (
      await admin.post("/v2/oauth-clients", {
        name: "Soon disabled",
        redirect_uris: [WEB_REDIRECT],
        scopes: ["view:user"],
      })
    ).body.data;
    const config = await oidc.discovery(
      new URL(h.base),
      made.client_id,
      undefined,
      oidc.ClientSecretBasic(made.client_secret),
      insecure,
    );
    const tokens = await oidc.clientCredentialsGrant(config, { scope: "view:user" });
    expect((await api(tokens.access_token, "GET", "/v2/users")).status).toBe(200);
    expect((await admin.patch(`/v2/oauth-clients/${made.id}`, { disabled_at: new Date().toISOString() })).status).toBe(
      200,
    );
    const refused = await api(tokens.access_token, "GET", "/v2/users");
    expect(refused.status).toBe(401);
    expect(JSON.stringify(refused.body)).toContain("disabled");
    const again = await oidc.clientCredentialsGrant(config, { scope: "view:user" }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(oidc.WWWAuthenticateChallengeError);
    expect((again as oidc.WWWAuthenticateChallengeError).cause[0].parameters.error).toBe("invalid_client");
  });

  test("removing a role takes effect on the token's next request", async () => {
    const config = await publicConfig();
    const bob = await person(admin, "Bob Jones", "bob@example.com", ["create:rank"]);
    const { tokens } = await signIn(config, {
      redirectUri: SPA_REDIRECT,
      scope: "openid create:rank",
      email: "bob@example.com",
    });
    expect((await api(tokens.access_token, "POST", "/v2/ranks", { name: "Sergeant" })).status).toBe(200);
    const roles = (await admin.get(`/v2/users/${bob.id}/roles`)).body.data as Array<{ id: number; name: string }>;
    const role = roles.find((r) => r.name === "Bob Jones role")!;
    expect((await admin.delete(`/v2/users/${bob.id}/roles/detach`, { resources: [role.id] })).status).toBe(200);
    expect((await api(tokens.access_token, "POST", "/v2/ranks", { name: "Major" })).status).toBe(403);
  });
});

describe("key rotation", () => {
  test("oidc:rotate-keys adds a signing key and retires the old one, which an instance started after it still publishes", async () => {
    const before = (await (await fetch(`${h.base}/oauth/jwks`)).json()) as { keys: Array<{ kid: string }> };
    const { stdout } = await run(process.execPath, [...cliArgs, "oidc:rotate-keys"], {
      env: { ...process.env, DATABASE_URL: h.config.databaseUrl },
    });
    const kid = /New signing key (\S+);/.exec(stdout)?.[1];
    expect(kid).toBeTruthy();
    const stored = await h.db.prisma.signingKey.findMany({ orderBy: { id: "asc" } });
    expect(stored.map((k) => [k.kid, k.retiredAt !== null])).toEqual([
      [before.keys[0].kid, true],
      [kid, false],
    ]);
    // An instance started now (on the same database) publishes both, the new one first (it signs).
    const restarted = await createOidc({
      db: h.db,
      config: h.config,
      logger: h.app.observability.logger,
      signInAttempts: h.app.signInAttempts,
    });
    const server = createServer(requestListener(h.app, restarted));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const after = (await (await fetch(`http://127.0.0.1:${port}/oauth/jwks`)).json()) as {
        keys: Array<{ kid: string }>;
      };
      expect(after.keys.map((k) => k.kid)).toEqual([kid, before.keys[0].kid]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
