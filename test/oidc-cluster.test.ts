/**
 * The OpenID provider on two instances of the built server (as `npm start` runs it) sharing one database and Redis,
 * behind one public URL (the issuer): on the PostgreSQL pass, the production set-up. A person signs in through A, the
 * client refreshes through B and revokes through B, and A refuses the token on its next request: nothing of the
 * provider's state is in one process's memory.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import * as oidc from "openid-client";
import { createApiKey } from "../src/auth/accounts.ts";
import { setPassword } from "../src/auth/passwords.ts";
import { migrate } from "../src/db/migrate.ts";
import { openDatabase, type Database } from "../src/db/prisma.ts";
import { createTestDatabase, testProvider } from "./harness.ts";
import { requireRedis, testRedisUrl } from "./services.ts";
import { freePort, spawnServer, type ServerProcess } from "./support/spawn-server.ts";
import { Browser, formOf, type Page } from "./support/oidc.ts";

const redis = await requireRedis();
const PASSWORD = "correct horse battery staple";
const REDIRECT = "http://127.0.0.1:8765/callback";

redis.describe(`the OpenID provider on two instances on one ${testProvider} database and Redis`, () => {
  let dir: string;
  let database: { url: string; drop(): Promise<void> };
  let db: Database;
  let a: ServerProcess;
  let b: ServerProcess;
  let issuer: string;
  let key: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "muster-oidc-cluster-"));
    database = await createTestDatabase(dir);
    await migrate(database.url);
    db = await openDatabase(database.url);
    key = (await createApiKey(db.store, { account: "alpha", scopes: "*" })).key;
    const portA = await freePort();
    issuer = `http://127.0.0.1:${portA}`;
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl,
      REDIS_PREFIX: `muster-test:${path.basename(dir)}`,
      PUBLIC_URL: issuer,
      RATE_LIMIT_PER_MINUTE: "100000",
      NODE_ENV: "production",
    };
    // Started together on an empty database: both make the provider's keys on first start, and must agree on them.
    [a, b] = await Promise.all([spawnServer({ ...env, PORT: String(portA) }), spawnServer(env)]);
  });
  afterAll(async () => {
    await Promise.all([a, b].filter(Boolean).map((s) => s.stop()));
    await db?.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const rest = async (base: string, token: string, method: string, route: string, body?: unknown) => {
    const response = await fetch(`${base}${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as { data: { id: number; client_id: string } } };
  };

  test("sign in through A, refresh through B, revoke through B: A refuses the token on its next request", async () => {
    const person = await rest(a.base, key, "POST", "/v2/users", { name: "Ann Smith", email: "ann@example.com" });
    await setPassword(db, person.body.data.id, PASSWORD);
    const role = await rest(a.base, key, "POST", "/v2/roles", { name: "Reader", permissions: ["view:user"] });
    await rest(a.base, key, "POST", `/v2/users/${person.body.data.id}/roles/attach`, {
      resources: [role.body.data.id],
    });
    const made = await rest(b.base, key, "POST", "/v2/oauth-clients", {
      name: "SPA",
      public: true,
      redirect_uris: [REDIRECT],
      scopes: ["view:user"],
    });
    const clientId = made.body.data.client_id;

    // Both instances publish the same keys and the same issuer.
    const jwksA = await (await fetch(`${a.base}/oauth/jwks`)).json();
    expect(await (await fetch(`${b.base}/oauth/jwks`)).json()).toEqual(jwksA);

    const viaA = await oidc.discovery(new URL(issuer), clientId, undefined, oidc.None(), {
      execute: [oidc.allowInsecureRequests],
    });
    // The same client and endpoints, reached at B's address (as a load balancer would send the request there).
    const viaB = new oidc.Configuration(viaA.serverMetadata(), clientId, undefined, oidc.None());
    oidc.allowInsecureRequests(viaB);
    viaB[oidc.customFetch] = (url, options) => fetch(url.replace(issuer, b.base), options as RequestInit);

    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(viaA, {
      redirect_uri: REDIRECT,
      scope: "openid offline_access view:user",
      prompt: "consent",
      state,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
    });
    const browser = new Browser(a.base);
    const signInPage = (await browser.open(url.toString())) as Page;
    const login = formOf(signInPage.html, signInPage.url, "/login");
    const consentPage = (await browser.post(login.action, {
      ...login.fields,
      email: "ann@example.com",
      password: PASSWORD,
    })) as Page;
    const consent = formOf(consentPage.html, consentPage.url, "/consent");
    const back = (await browser.post(consent.action, { ...consent.fields, decision: "allow" })) as {
      redirectedTo: string;
    };
    const tokens = await oidc.authorizationCodeGrant(viaA, new URL(back.redirectedTo), {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    expect((await rest(b.base, tokens.access_token, "GET", "/v2/users")).status).toBe(200);

    const refreshed = await oidc.refreshTokenGrant(viaB, tokens.refresh_token!);
    expect(refreshed.claims()?.sub).toBe(String(person.body.data.id));
    expect((await rest(a.base, refreshed.access_token, "GET", "/v2/users")).status).toBe(200);
    // The rotated-out refresh token is refused by A.
    const reused = await oidc.refreshTokenGrant(viaA, tokens.refresh_token!).catch((error: unknown) => error);
    expect((reused as oidc.ResponseBodyError).error).toBe("invalid_grant");

    const fresh = await oidc.refreshTokenGrant(viaA, refreshed.refresh_token!).catch((error: unknown) => error);
    // Reusing a rotated token revoked the whole grant (oidc-provider's reuse detection), on every instance.
    expect((fresh as oidc.ResponseBodyError).error).toBe("invalid_grant");
    expect((await rest(a.base, refreshed.access_token, "GET", "/v2/users")).status).toBe(401);

    // A second sign-in, then revocation through B.
    const again = await oidc.refreshTokenGrant(viaB, await signInAgain()).catch((error: unknown) => error);
    expect(again).not.toBeInstanceOf(Error);
    const current = again as oidc.TokenEndpointResponse;
    expect((await rest(a.base, current.access_token, "GET", "/v2/users")).status).toBe(200);
    await oidc.tokenRevocation(viaB, current.access_token);
    const refused = await rest(a.base, current.access_token, "GET", "/v2/users");
    expect(refused.status).toBe(401);
    expect((await oidc.tokenIntrospection(viaA, current.access_token)).active).toBe(false);

    async function signInAgain(): Promise<string> {
      const v = oidc.randomPKCECodeVerifier();
      const s = oidc.randomState();
      const start = oidc.buildAuthorizationUrl(viaA, {
        redirect_uri: REDIRECT,
        scope: "openid offline_access view:user",
        prompt: "consent",
        state: s,
        code_challenge: await oidc.calculatePKCECodeChallenge(v),
        code_challenge_method: "S256",
      });
      // Still signed in at A (the session is in the database): straight to consent.
      const page = (await browser.open(start.toString())) as Page;
      const form = formOf(page.html, page.url, "/consent");
      const done = (await browser.post(form.action, { ...form.fields, decision: "allow" })) as { redirectedTo: string };
      const t = await oidc.authorizationCodeGrant(viaB, new URL(done.redirectedTo), {
        pkceCodeVerifier: v,
        expectedState: s,
      });
      return t.refresh_token!;
    }
  });
});
