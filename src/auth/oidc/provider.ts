import type { Account, Configuration, KoaContextWithOIDC, default as Provider } from "oidc-provider";
import type { Database } from "../../db/prisma.ts";
import { knownScopes } from "../../resources/scopes.ts";
import { oidcScopes } from "../../resources/oauth-client.ts";
import { oidcAdapter } from "./adapter.ts";
import { ACCOUNT_METADATA, API_SCOPES_METADATA, ORIGINS_METADATA } from "./clients.ts";
import { compareClientSecretsHashed } from "./client-secret-internals.ts";
import { cookieKeys, signingKeys, SIGNING_ALG } from "./signing-keys.ts";

/*
 * The OpenID Connect provider (oidc-provider, a certified implementation): discovery, JWKS, authorization code with
 * PKCE (required for public clients), rotating refresh tokens, client credentials, revocation, introspection, userinfo
 * and RP-initiated logout. Its state is in the database (src/auth/oidc/adapter.ts), its keys too
 * (src/auth/oidc/signing-keys.ts), so N instances agree. Its pages (sign-in, consent, errors, logout) are the http
 * layer's (src/http/oidc.ts), which gives them here as `pages`.
 */

/** Where the provider's endpoints are, below the issuer (the service's public base URL). */
export const OIDC_PREFIX = "/oauth";
export const DISCOVERY_PATH = "/.well-known/openid-configuration";
/** The interaction pages (sign-in, consent), served by src/http/oidc.ts. */
export const interactionPath = (uid: string) => `${OIDC_PREFIX}/interaction/${uid}`;

/** How long each thing the provider issues lives, in seconds. */
export const OIDC_TTL = {
  /** An access token: short, since revocation is checked on every request anyway. */
  AccessToken: 60 * 60,
  /** A client credentials token. */
  ClientCredentials: 60 * 60,
  AuthorizationCode: 60,
  IdToken: 60 * 60,
  /** A refresh token: each use rotates it (a new one, the old consumed). */
  RefreshToken: 14 * 24 * 60 * 60,
  /** A sign-in or consent under way. */
  Interaction: 60 * 60,
  /** The provider's browser session (signed in at the provider). */
  Session: 14 * 24 * 60 * 60,
  Grant: 14 * 24 * 60 * 60,
} as const;

/** The claims of ID tokens and userinfo. `tenant`: the account's id, as SSO tokens name it (src/auth/sso.ts). */
export const OIDC_CLAIMS = {
  openid: ["sub", "tenant", "roles"],
  email: ["email"],
  profile: ["name"],
} as const;

/** The HTML the provider renders itself, in the service's look (src/http/oidc.ts). */
export interface OidcPages {
  renderError: NonNullable<Configuration["renderError"]>;
  logoutSource: (ctx: KoaContextWithOIDC, form: string) => Promise<void> | void;
  postLogoutSuccessSource: (ctx: KoaContextWithOIDC) => Promise<void> | void;
}

/** The account id our client metadata carries (clients.ts), or undefined. */
export const accountOfClient = (client: { [key: string]: unknown } | undefined): number | undefined => {
  const id = client?.[ACCOUNT_METADATA];
  return typeof id === "number" ? id : undefined;
};

/** A person of the client's account, with what the claims need: null for anyone else. */
async function findPerson(db: Database, sub: string, accountId: number | undefined) {
  if (!/^\d{1,15}$/.test(sub) || accountId === undefined) return null;
  return db.prisma.user.findFirst({
    where: { id: Number(sub), accountId },
    select: {
      id: true,
      name: true,
      email: true,
      accountId: true,
      roleLinks: { select: { role: { select: { name: true } } } },
    },
  });
}

export async function createOidcProvider({
  db,
  issuer,
  pages,
}: {
  db: Database;
  issuer: string;
  pages: OidcPages;
}): Promise<Provider> {
  const [keys, cookieSecrets] = await Promise.all([signingKeys(db), cookieKeys(db)]);
  const configuration: Configuration = {
    adapter: oidcAdapter(db),
    jwks: { keys },
    cookies: { keys: cookieSecrets },
    async findAccount(ctx, sub): Promise<Account | undefined> {
      const person = await findPerson(
        db,
        sub,
        accountOfClient(ctx.oidc.client as { [key: string]: unknown } | undefined),
      );
      if (!person) return undefined;
      return {
        accountId: String(person.id),
        claims: () => ({
          sub: String(person.id),
          email: person.email,
          name: person.name,
          roles: person.roleLinks.map((link) => link.role.name),
          tenant: person.accountId,
        }),
      };
    },
    claims: Object.fromEntries(Object.entries(OIDC_CLAIMS).map(([scope, claims]) => [scope, [...claims]])),
    // The ID token carries the claims of its scopes even when an access token is issued too (response_type=code).
    conformIdTokenClaims: false,
    scopes: [...oidcScopes, "*", ...knownScopes],
    extraClientMetadata: { properties: [ACCOUNT_METADATA, ORIGINS_METADATA, API_SCOPES_METADATA] },
    clientBasedCORS(_ctx, origin, client) {
      const origins = (client as unknown as Record<string, unknown>)[ORIGINS_METADATA];
      return Array.isArray(origins) && origins.includes(origin);
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      // A client introspects and revokes its own tokens only (another account's client learns nothing of them).
      introspection: { enabled: true, allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId },
      revocation: { enabled: true, allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId },
      userinfo: { enabled: true },
      // Tokens are for this API alone: opaque, stored, so that a revocation holds at once on every instance.
      resourceIndicators: { enabled: false },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: pages.logoutSource,
        postLogoutSuccessSource: pages.postLogoutSuccessSource,
      },
    },
    // Public clients (no secret) must use PKCE, S256 only (oidc-provider's default methods).
    pkce: { required: (_ctx, client) => client.clientAuthMethod === "none" },
    responseTypes: ["code"],
    rotateRefreshToken: true,
    ttl: { ...OIDC_TTL },
    interactions: { url: (_ctx, interaction) => interactionPath(interaction.uid) },
    renderError: pages.renderError,
    // No HS* algorithm anywhere: a client's `client_secret` here is a hash, never a key (clients.ts).
    enabledJWA: {
      idTokenSigningAlgValues: [SIGNING_ALG],
      userinfoSigningAlgValues: [SIGNING_ALG],
      introspectionSigningAlgValues: [SIGNING_ALG],
      authorizationSigningAlgValues: [SIGNING_ALG],
      requestObjectSigningAlgValues: [SIGNING_ALG],
      clientAuthSigningAlgValues: [SIGNING_ALG],
    },
    routes: {
      authorization: `${OIDC_PREFIX}/auth`,
      token: `${OIDC_PREFIX}/token`,
      jwks: `${OIDC_PREFIX}/jwks`,
      userinfo: `${OIDC_PREFIX}/me`,
      revocation: `${OIDC_PREFIX}/token/revocation`,
      introspection: `${OIDC_PREFIX}/token/introspection`,
      end_session: `${OIDC_PREFIX}/session/end`,
      pushed_authorization_request: `${OIDC_PREFIX}/request`,
      registration: `${OIDC_PREFIX}/reg`,
      code_verification: `${OIDC_PREFIX}/device`,
      device_authorization: `${OIDC_PREFIX}/device/auth`,
      backchannel_authentication: `${OIDC_PREFIX}/backchannel`,
      challenge: `${OIDC_PREFIX}/challenge`,
    },
  };
  // Loaded here rather than at the top: the package warns on import that it wants Node 22 (README, "Signing people
  // in"), and a start that fails on its configuration should print its one line, not that warning too.
  const { default: OidcProvider } = await import("oidc-provider");
  const provider = new OidcProvider(issuer, configuration);
  // The one method of oidc-provider's we replace: its client secret check, against our stored hash.
  compareClientSecretsHashed(provider);
  return provider;
}
