import { createServer, type Server } from "node:http";
import { expect } from "vitest";
import * as openid from "openid-client";
import { startHarness, type Client, type Harness } from "../harness.ts";
import { freePort } from "./spawn-server.ts";
import { createOidc, type Oidc } from "../../src/http/oidc.ts";
import { requestListener } from "../../src/server/http.ts";
import { serveWebSocket } from "../../src/server/websocket.ts";
import { setPassword } from "../../src/auth/passwords.ts";
import type { Config } from "../../src/core/config.ts";
import type { ObservabilityOptions } from "../../src/http/observability/index.ts";

/**
 * The harness's app behind a real node HTTP server, with the OpenID provider and GraphQL over WebSocket mounted as
 * src/server/main.ts does.
 */
export interface OidcHarness extends Harness {
  oidc: Oidc;
  /** `http://127.0.0.1:<port>`: the issuer and the API. */
  base: string;
  /** `ws://127.0.0.1:<port>/graphql`. */
  webSocketUrl: string;
}

export async function startOidcHarness(
  overrides: Partial<Config> = {},
  observability: ObservabilityOptions = {},
): Promise<OidcHarness> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const h = await startHarness({ publicUrl: base, ...overrides }, observability);
  const oidc = await createOidc({
    db: h.db,
    config: h.config,
    logger: h.app.observability.logger,
    signInAttempts: h.app.signInAttempts,
  });
  const server: Server = createServer(requestListener(h.app, oidc));
  const webSocket = serveWebSocket(server, h.app, h.db, h.config);
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    ...h,
    oidc,
    base,
    webSocketUrl: `ws://127.0.0.1:${port}/graphql`,
    close: async () => {
      await webSocket.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await h.close();
    },
  };
}

/** The password every person made by `person` signs in with. */
export const PASSWORD = "correct horse battery staple";

/** A person of `api`'s account who signs in with PASSWORD, with a role of their own holding `permissions`. */
export async function person(h: Harness, api: Client, name: string, email: string, permissions: string[]) {
  const made = (await api.post("/v2/users", { name, email })).body.data;
  await setPassword(h.db, made.id, PASSWORD);
  const role = (await api.post("/v2/roles", { name: `${name} role`, permissions })).body.data;
  expect((await api.post(`/v2/users/${made.id}/roles/attach`, { resources: [role.id] })).status).toBe(200);
  return made;
}

/**
 * The authorization code flow as a relying party runs it with openid-client, the test playing the browser: signs
 * `email` in, allows consent, and exchanges the code the redirect back to the client carries.
 */
export async function signIn(
  h: OidcHarness,
  config: openid.Configuration,
  {
    redirectUri,
    scope,
    email = "ann@example.com",
    pkce = true,
  }: { redirectUri: string; scope: string; email?: string; pkce?: boolean },
) {
  const verifier = openid.randomPKCECodeVerifier();
  const state = openid.randomState();
  const url = openid.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope,
    state,
    // OpenID Connect grants offline_access (a refresh token) only with prompt=consent.
    ...(scope.includes("offline_access") ? { prompt: "consent" } : {}),
    ...(pkce
      ? { code_challenge: await openid.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256" }
      : {}),
  });
  const browser = new Browser(h.base);
  const signInPage = (await browser.open(url.toString())) as Page;
  expect(signInPage.status).toBe(200);
  const login = formOf(signInPage.html, signInPage.url, "/login");
  const consentPage = (await browser.post(login.action, { ...login.fields, email, password: PASSWORD })) as Page;
  expect(consentPage.html).toContain("Allow access?");
  const consent = formOf(consentPage.html, consentPage.url, "/consent");
  const back = (await browser.post(consent.action, { ...consent.fields, decision: "allow" })) as {
    redirectedTo: string;
  };
  expect(back.redirectedTo).toMatch(new RegExp(`^${redirectUri.replace(/[.?]/g, "\\$&")}\\?`));
  const tokens = await openid.authorizationCodeGrant(config, new URL(back.redirectedTo), {
    pkceCodeVerifier: pkce ? verifier : undefined,
    expectedState: state,
  });
  return { tokens, browser, consentPage };
}

/** The API with an access token: a fetch of its own through the real HTTP server, as a client app would. */
export async function tokenRequest(h: OidcHarness, token: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${h.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, accept: "application/json", "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, never>,
  };
}

/** A page the browser was shown: its status, URL and HTML. */
export interface Page {
  status: number;
  url: string;
  html: string;
}

/**
 * A browser as far as the sign-in needs one, with fetch: a cookie jar, redirects followed by hand, forms posted. It
 * stops at a redirect that leaves `origin` (the client's redirect URI), which it answers as `{ redirectedTo }`.
 */
export class Browser {
  readonly cookies = new Map<string, string>();
  constructor(readonly origin: string) {}

  #remember(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";");
      const at = pair.indexOf("=");
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      const expired = attributes.some(
        (a) => /^\s*expires=/i.test(a) && new Date(a.split("=")[1]).getTime() < Date.now(),
      );
      if (expired || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async #send(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set("cookie", [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    headers.set("accept", "text/html");
    const response = await fetch(url, { ...init, headers, redirect: "manual" });
    this.#remember(response);
    return response;
  }

  /** Follows redirects from `response` until a page, or a redirect out of `origin`. */
  async #follow(response: Response, url: string): Promise<Page | { redirectedTo: string }> {
    for (let hops = 0; hops < 10; hops++) {
      const location = response.headers.get("location");
      if (response.status < 300 || response.status >= 400 || !location) {
        return { status: response.status, url, html: await response.text() };
      }
      await response.arrayBuffer();
      url = new URL(location, url).toString();
      if (!url.startsWith(this.origin)) return { redirectedTo: url };
      response = await this.#send(url);
    }
    throw new Error("too many redirects");
  }

  async open(url: string) {
    return this.#follow(await this.#send(url), url);
  }

  async post(url: string, fields: Record<string, string>) {
    const response = await this.#send(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    });
    return this.#follow(response, url);
  }
}

/** The first form of `html` (or the one whose action matches): its action and its fields' values. */
export function formOf(
  html: string,
  page: string,
  actionIncludes = "",
): { action: string; fields: Record<string, string> } {
  const forms = [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)];
  const form = forms.find((f) => (/action="([^"]*)"/.exec(f[1])?.[1] ?? "").includes(actionIncludes));
  if (!form) throw new Error(`no form with action ${actionIncludes} in:\n${html}`);
  const action = new URL((/action="([^"]*)"/.exec(form[1])?.[1] ?? "").replace(/&amp;/g, "&"), page).toString();
  const fields: Record<string, string> = {};
  for (const input of form[2].matchAll(/<input\b([^>]*)>/g)) {
    const name = /name="([^"]*)"/.exec(input[1])?.[1];
    if (name)
      fields[name] = (/value="([^"]*)"/.exec(input[1])?.[1] ?? "").replace(/&#(\d+);/g, (_, c) =>
        String.fromCharCode(Number(c)),
      );
  }
  return { action, fields };
}
