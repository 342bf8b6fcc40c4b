/**
 * Issue 42's "done when": a single-page app on an origin of its own (test/support/spa.ts, served by this test) signs a
 * person in through the service's OpenID provider in real headless Chromium: authorization code + PKCE, our sign-in
 * and consent pages, the code exchanged at the token endpoint, GraphQL `me` and a REST route called with the access
 * token, a refresh, a revocation and RP-initiated logout, every call cross-origin (the provider's and the API's CORS).
 * Screenshots of the sign-in, consent and sign-out pages go to test/artifacts/.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { setPassword } from "../src/auth/passwords.ts";
import { client } from "./harness.ts";
import { startOidcHarness, type OidcHarness } from "./support/oidc.ts";
import { browserDescribe, launchChromium } from "./support/chromium.ts";
import { startSpa, type Spa } from "./support/spa.ts";

const artifacts = path.resolve("test/artifacts");
const EMAIL = "dee.smith@example.com";
const PASSWORD = "correct horse battery staple";
const SCOPE = "openid profile email offline_access view:user view:role view:rankrecord view:rank";

const suite = await browserDescribe();

suite("a single-page app signs a person in through the OpenID provider", () => {
  let h: OidcHarness;
  let issuer: string;
  let spa: Spa;
  let browser: Browser;
  let person: { id: number; name: string };

  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true });
    // The service on a real port, with the provider mounted as in production; its issuer is its own origin.
    h = await startOidcHarness();
    issuer = h.base;
    const admin = client(h, await h.key("alpha"));
    const rank = (await admin.post("/v2/ranks", { name: "Corporal", abbreviation: "CPL" })).body.data;
    person = (await admin.post("/v2/users", { name: "Dee Smith", email: EMAIL, rank_id: rank.id })).body.data;
    await setPassword(h.db, person.id, PASSWORD);
    const roles = (await admin.get("/v2/roles")).body.data as Array<{ id: number; name: string }>;
    const adminRole = roles.find((r) => r.name === "Admin")!;
    expect((await admin.post(`/v2/users/${person.id}/roles/attach`, { resources: [adminRole.id] })).status).toBe(200);
    for (const text of ["Promoted to Corporal", "Enlisted"])
      expect(
        (await admin.post("/v2/rank-records", { user_id: person.id, rank_id: rank.id, type: 0, text })).status,
      ).toBe(200);

    spa = await startSpa();
    const made = await admin.post("/v2/oauth-clients", {
      name: "Roster SPA",
      public: true,
      redirect_uris: [spa.redirectUri],
      post_logout_redirect_uris: [spa.postLogoutRedirectUri],
      allowed_origins: [spa.origin],
      scopes: ["*"],
    });
    expect(made.status).toBe(200);
    spa.configure({ issuer, api: issuer, clientId: made.body.data.client_id, scope: SCOPE });

    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await spa?.close();
    await h?.close();
  });

  const outcome = <T>(page: Page, step: string) =>
    page
      .waitForFunction((s) => (window as unknown as { outcomes: Record<string, unknown> }).outcomes?.[s], step, {
        timeout: 30_000,
      })
      .then((handle) => handle.jsonValue() as Promise<T>);

  test("code + PKCE, sign-in and consent pages, GraphQL and REST with the token, refresh, revoke, sign out", async () => {
    const context = await browser.newContext({ viewport: { width: 1000, height: 800 } });
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (e) => pageErrors.push(e.message));
    try {
      await page.goto(spa.origin);
      await page.click("#sign-in");

      // Our sign-in page, on the provider's origin.
      await page.waitForSelector("input[name=email]");
      expect(new URL(page.url()).origin).toBe(issuer);
      await page.screenshot({ path: path.join(artifacts, "sign-in.png"), fullPage: true });
      // A wrong password first: the page says so, without saying which was wrong.
      await page.fill("input[name=email]", EMAIL);
      await page.fill("input[name=password]", "not the password");
      await page.click("button[type=submit]:not(.secondary)");
      await page.waitForSelector("input[name=password]");
      expect(await page.textContent("body")).toMatch(/email or password is not right/i);
      await page.screenshot({ path: path.join(artifacts, "sign-in-refused.png"), fullPage: true });
      await page.fill("input[name=email]", EMAIL);
      await page.fill("input[name=password]", PASSWORD);
      await page.click("button[type=submit]:not(.secondary)");

      // The consent page names the client and what it asks for.
      await page.waitForSelector("button[value=allow]");
      expect(await page.textContent("body")).toContain("Roster SPA");
      await page.screenshot({ path: path.join(artifacts, "consent.png"), fullPage: true });
      await page.click("button[value=allow]");

      // Back in the app with a code.
      expect(await outcome(page, "callback")).toEqual({ state: true, code: true, error: null });
      expect(new URL(page.url()).origin).toBe(spa.origin);
      const token = await outcome<Record<string, unknown>>(page, "token");
      expect(token).toMatchObject({ status: 200, tokenType: "Bearer", access: true, refresh: true, nonce: true });
      expect(String(token.scope).split(" ")).toEqual(expect.arrayContaining(["openid", "view:user", "offline_access"]));

      const api = await outcome<{
        graphql: { status: number; body: { data: { me: Record<string, unknown> } }; rateLimitRemaining: string };
        rest: { status: number; body: { data: Record<string, unknown> } };
      }>(page, "api");
      expect(api.graphql.status).toBe(200);
      expect(api.graphql.body.data.me).toEqual({
        rowId: person.id,
        name: "Dee Smith",
        roles: { nodes: expect.arrayContaining([{ name: "Admin" }]) },
        rankRecords: {
          nodes: expect.arrayContaining([
            { text: "Promoted to Corporal", rank: { name: "Corporal" } },
            { text: "Enlisted", rank: { name: "Corporal" } },
          ]),
        },
      });
      // An exposed header is readable across origins.
      expect(Number(api.graphql.rateLimitRemaining)).toBeGreaterThan(0);
      expect(api.rest.status).toBe(200);
      expect(api.rest.body.data).toMatchObject({ id: person.id, name: "Dee Smith", email: EMAIL });

      expect(await outcome(page, "refresh")).toEqual({ status: 200, newAccess: true, rotated: true });
      const afterRefresh = await outcome<{ graphql: { body: { data: { me: { name: string } } } } }>(
        page,
        "apiAfterRefresh",
      );
      expect(afterRefresh.graphql.body.data.me.name).toBe("Dee Smith");

      // Revoked, the access token is refused by the API on its next request; the refresh token by the provider.
      expect(await outcome(page, "revoke")).toEqual({
        accessRevoked: 200,
        apiStatus: 401,
        refreshRevoked: 200,
        refreshAfterRevoke: "invalid_grant",
        replayed: "invalid_grant",
      });
      await outcome(page, "ready");

      await page.screenshot({ path: path.join(artifacts, "app-signed-in.png"), fullPage: true });
      // RP-initiated logout: the provider asks, then sends the person back to the app.
      await page.click("#sign-out");
      await page.waitForSelector("button[name=logout]");
      await page.screenshot({ path: path.join(artifacts, "sign-out.png"), fullPage: true });
      await page.click("button[name=logout]");
      expect(await outcome(page, "signedOut")).toEqual({ state: true });
      expect(new URL(page.url()).pathname).toBe("/signed-out");

      // Signed out at the provider too: signing in again asks for the password.
      await page.click("#sign-in");
      await page.waitForSelector("input[name=password]");
      expect(pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
