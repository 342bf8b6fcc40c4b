/**
 * The sign-in page's attempt limits (issue 42, item 3): past the failures a person or an address may make, the page
 * answers 429 with the form and "try again in N minutes", before looking at the password, right or not, and the same
 * for an email that is no one's. Through the provider on a real port (test/support/oidc.ts), as a browser would.
 */
import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, test } from "vitest";
import { setPassword } from "../src/auth/passwords.ts";
import { client } from "./harness.ts";
import { Browser, formOf, startOidcHarness, type OidcHarness, type Page } from "./support/oidc.ts";

const PER_PERSON = 3;
const PER_ADDRESS = 7;
const PASSWORD = "correct horse battery staple";
const REDIRECT = "http://localhost:9/cb";

let h: OidcHarness;
let clientId: string;

beforeAll(async () => {
  h = await startOidcHarness({ signInFailuresPerPerson: PER_PERSON, signInFailuresPerAddress: PER_ADDRESS });
  const admin = client(h, await h.key("alpha"));
  for (const [name, email] of [
    ["Dee Smith", "dee@example.com"],
    ["Eve Jones", "eve@example.com"],
  ]) {
    const person = (await admin.post("/v2/users", { name, email })).body.data;
    await setPassword(h.db, person.id, PASSWORD);
  }
  const made = await admin.post("/v2/oauth-clients", { name: "App", public: true, redirect_uris: [REDIRECT] });
  expect(made.status).toBe(200);
  clientId = made.body.data.client_id;
});
afterAll(() => h.close());

/** A browser at the sign-in page of a new authorization request. */
async function signInPage(): Promise<{ browser: Browser; page: Page }> {
  const browser = new Browser(h.base);
  const challenge = createHash("sha256").update(randomBytes(32).toString("base64url")).digest("base64url");
  const url = new URL(`${h.base}/oauth/auth`);
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT,
    scope: "openid",
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "s",
  }).toString();
  const page = await browser.open(url.toString());
  if (!("html" in page)) throw new Error(`no sign-in page: redirected to ${page.redirectedTo}`);
  expect(page.html).toContain('name="password"');
  return { browser, page };
}

async function trySignIn(email: string, password: string) {
  const { browser, page } = await signInPage();
  const form = formOf(page.html, page.url, "/login");
  return browser.post(form.action, { ...form.fields, email, password });
}

const statusOf = (answer: Page | { redirectedTo: string }) => ("status" in answer ? answer.status : 302);

test("past a person's failures the page refuses them for a while, even with the right password", async () => {
  for (let i = 0; i < PER_PERSON; i++) {
    const wrong = await trySignIn("dee@example.com", "wrong password");
    expect(statusOf(wrong)).toBe(401);
    expect("html" in wrong && wrong.html).toContain("The email or password is not right.");
  }
  const refused = await trySignIn("Dee@Example.com", PASSWORD);
  expect(statusOf(refused)).toBe(429);
  if (!("html" in refused)) return;
  expect(refused.html).toMatch(/Too many failed attempts\. Try again in 1[0-5] minutes\./);
  // The form is still there, the email kept.
  expect(refused.html).toContain('name="password"');
  expect(refused.html).toContain('value="Dee@Example.com"');
  // Another person is not refused: Eve signs in (the provider sends her on to the app or to consent).
  expect(statusOf(await trySignIn("eve@example.com", PASSWORD))).not.toBe(429);
});

test("an email that is no one's is counted and refused the same way", async () => {
  for (let i = 0; i < PER_PERSON; i++) expect(statusOf(await trySignIn("nobody@example.com", "x"))).toBe(401);
  const refused = await trySignIn("nobody@example.com", "x");
  expect(statusOf(refused)).toBe(429);
  expect("html" in refused && refused.html).toMatch(/Too many failed attempts/);
});

test("past an address's failures, whatever the emails, every sign-in from it is refused", async () => {
  // The two tests before failed 2 × PER_PERSON = 6 times from this address (127.0.0.1); one more reaches 7.
  expect(statusOf(await trySignIn("fresh@example.com", "x"))).toBe(401);
  const refused = await trySignIn("eve@example.com", PASSWORD);
  expect(statusOf(refused)).toBe(429);
  expect("html" in refused && refused.html).toMatch(/Too many failed attempts/);
});
