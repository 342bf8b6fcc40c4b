import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A single-page app as a browser client of the service would be, on an origin of its own: one static HTML page with
 * plain JavaScript (no bundler, no CDN). It signs a person in with the authorization code flow and PKCE (S256, by
 * WebCrypto), exchanges the code at the token endpoint with `fetch` (a cross-origin request: the provider's CORS),
 * calls GraphQL and REST with the access token (the API's CORS), refreshes, revokes and signs out (RP-initiated
 * logout). Each step writes its outcome into `window.outcomes` and the page (`#log`), for the test to read.
 */
export interface SpaOptions {
  /** The provider's issuer (its discovery document is read from `<issuer>/.well-known/openid-configuration`). */
  issuer: string;
  /** The API's base URL (GraphQL at `/graphql`, REST at `/v2/...`). */
  api: string;
  clientId: string;
  scope: string;
}

export interface Spa {
  origin: string;
  redirectUri: string;
  postLogoutRedirectUri: string;
  /** Sets what the page is configured with (its origin is known first, so that a client can be registered for it). */
  configure(options: SpaOptions): void;
  close(): Promise<void>;
}

const page = (options: SpaOptions & { redirectUri: string; postLogoutRedirectUri: string }) => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Roster SPA</title><style>li { overflow-wrap: anywhere; font: 13px monospace; }</style></head>
<body>
<h1>Roster SPA</h1>
<button id="sign-in">Sign in</button>
<button id="sign-out" disabled>Sign out</button>
<ol id="log"></ol>
<script type="application/json" id="config">${JSON.stringify(options).replace(/</g, "\\u003c")}</script>
<script>
"use strict";
const config = JSON.parse(document.getElementById("config").textContent);
window.outcomes = {};
const record = (step, value) => {
  window.outcomes[step] = value;
  const item = document.createElement("li");
  item.dataset.step = step;
  item.textContent = step + ": " + JSON.stringify(value);
  document.getElementById("log").append(item);
};
const base64url = (bytes) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
const random = () => base64url(crypto.getRandomValues(new Uint8Array(32)));
const discovery = () => fetch(config.issuer + "/.well-known/openid-configuration").then((r) => r.json());
const form = (fields) => new URLSearchParams(fields);

async function tokenRequest(fields) {
  const { token_endpoint } = await discovery();
  const response = await fetch(token_endpoint, { method: "POST", body: form({ client_id: config.clientId, ...fields }) });
  return { status: response.status, body: await response.json() };
}

async function callApi(token) {
  const graphql = await fetch(config.api + "/graphql", {
    method: "POST",
    headers: { authorization: "Bearer " + token, "content-type": "application/json" },
    body: JSON.stringify({
      query: "{ me { rowId name roles { nodes { name } } rankRecords(first: 5) { nodes { text rank { name } } } } }",
    }),
  });
  const graphqlBody = await graphql.json();
  const me = graphqlBody.data && graphqlBody.data.me;
  const rest = me ? await fetch(config.api + "/v2/users/" + me.rowId + "?include=rank", {
    headers: { authorization: "Bearer " + token, accept: "application/json" },
  }) : null;
  return {
    graphql: { status: graphql.status, body: graphqlBody, rateLimitRemaining: graphql.headers.get("x-ratelimit-remaining") },
    rest: rest && { status: rest.status, body: await rest.json() },
  };
}

async function signIn() {
  const { authorization_endpoint } = await discovery();
  const verifier = random();
  const challenge = base64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  const state = random();
  const nonce = random();
  sessionStorage.setItem("pkce", JSON.stringify({ verifier, state, nonce }));
  const url = new URL(authorization_endpoint);
  url.search = form({
    response_type: "code",
    client_id: config.clientId,
    redirect_uri: config.redirectUri,
    scope: config.scope,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state,
    nonce,
    prompt: "consent",
  }).toString();
  location.assign(url.toString());
}

async function afterSignIn(params) {
  const pkce = JSON.parse(sessionStorage.getItem("pkce") || "{}");
  sessionStorage.removeItem("pkce");
  record("callback", { state: params.get("state") === pkce.state, code: params.has("code"), error: params.get("error") });
  if (!params.has("code") || params.get("state") !== pkce.state) return;
  const exchanged = await tokenRequest({
    grant_type: "authorization_code",
    code: params.get("code"),
    redirect_uri: config.redirectUri,
    code_verifier: pkce.verifier,
  });
  const tokens = exchanged.body;
  const idClaims = tokens.id_token ? JSON.parse(atob(tokens.id_token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/"))) : null;
  record("token", {
    status: exchanged.status,
    tokenType: tokens.token_type,
    scope: tokens.scope,
    access: typeof tokens.access_token === "string",
    refresh: typeof tokens.refresh_token === "string",
    nonce: idClaims ? idClaims.nonce === pkce.nonce : null,
    error: tokens.error || null,
  });
  if (!tokens.access_token) return;
  record("api", await callApi(tokens.access_token));

  const refreshed = await tokenRequest({ grant_type: "refresh_token", refresh_token: tokens.refresh_token });
  record("refresh", {
    status: refreshed.status,
    newAccess: typeof refreshed.body.access_token === "string" && refreshed.body.access_token !== tokens.access_token,
    rotated: typeof refreshed.body.refresh_token === "string" && refreshed.body.refresh_token !== tokens.refresh_token,
  });
  const access = refreshed.body.access_token;
  record("apiAfterRefresh", await callApi(access));

  const { revocation_endpoint } = await discovery();
  const revoke = (token, hint) =>
    fetch(revocation_endpoint, {
      method: "POST",
      body: form({ client_id: config.clientId, token, token_type_hint: hint }),
    }).then((r) => r.status);
  const accessRevoked = await revoke(access, "access_token");
  const afterRevoke = await fetch(config.api + "/v2/users", {
    headers: { authorization: "Bearer " + access, accept: "application/json" },
  });
  const refreshRevoked = await revoke(refreshed.body.refresh_token, "refresh_token");
  const refreshAfterRevoke = await tokenRequest({ grant_type: "refresh_token", refresh_token: refreshed.body.refresh_token });
  // The first refresh token was used once already (rotation): it is no good either.
  const replayed = await tokenRequest({ grant_type: "refresh_token", refresh_token: tokens.refresh_token });
  record("revoke", {
    accessRevoked,
    apiStatus: afterRevoke.status,
    refreshRevoked,
    refreshAfterRevoke: refreshAfterRevoke.body.error || null,
    replayed: replayed.body.error || null,
  });

  sessionStorage.setItem("idToken", tokens.id_token || "");
  document.getElementById("sign-out").disabled = false;
  record("ready", true);
}

async function signOut() {
  const { end_session_endpoint } = await discovery();
  const state = random();
  sessionStorage.setItem("logoutState", state);
  const url = new URL(end_session_endpoint);
  url.search = form({
    id_token_hint: sessionStorage.getItem("idToken") || "",
    post_logout_redirect_uri: config.postLogoutRedirectUri,
    state,
    client_id: config.clientId,
  }).toString();
  location.assign(url.toString());
}

document.getElementById("sign-in").addEventListener("click", () => signIn().catch((e) => record("error", String(e))));
document.getElementById("sign-out").addEventListener("click", () => signOut().catch((e) => record("error", String(e))));
const params = new URLSearchParams(location.search);
if (location.pathname === "/callback") afterSignIn(params).catch((e) => record("error", String(e)));
if (location.pathname === "/signed-out")
  record("signedOut", { state: params.get("state") === sessionStorage.getItem("logoutState") });
</script>
</body>
</html>
`;

/** Serves the app on 127.0.0.1 at a port of its own: `/`, `/callback` and `/signed-out` are the same page. */
export async function startSpa(): Promise<Spa> {
  let html: string | null = null;
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://spa").pathname;
    if (!["/", "/callback", "/signed-out"].includes(path) || html === null) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" }).end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const redirectUri = `${origin}/callback`;
  const postLogoutRedirectUri = `${origin}/signed-out`;
  return {
    origin,
    redirectUri,
    postLogoutRedirectUri,
    configure: (options) => (html = page({ ...options, redirectUri, postLogoutRedirectUri })),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
