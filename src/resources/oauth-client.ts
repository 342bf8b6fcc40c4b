import { createHash, randomBytes } from "node:crypto";
import { closestNames } from "../core/closest.ts";
import { FieldErrorBag } from "../core/errors.ts";
import type { Context } from "../request/context.ts";
import { bool, datetime, defineResource, json, string, type Hooks } from "./define.ts";
import { jsonString, listOf } from "./json-shapes.ts";
import { ShownOnce } from "./shown-once.ts";

/*
 * An OAuth client of the account's OpenID provider (src/auth/oidc/): an application that signs the account's people in
 * and calls the API with their access tokens, or (confidential clients) with its own (client credentials). Its secret
 * is made here, shown once, and kept only as its SHA-256 (src/auth/oidc/clients.ts compares against it).
 */

/** The scopes of OpenID Connect itself, which every client may ask for beside its API scopes. */
export const oidcScopes = ["openid", "profile", "email", "offline_access"] as const;

/** A new client id: random, unique across accounts, safe in URLs. */
export const newClientId = (): string => `mcl_${randomBytes(16).toString("base64url")}`;
/** A new client secret: 32 random bytes behind a prefix that says what it is. */
export const newClientSecret = (): string => `mcs_${randomBytes(32).toString("base64url")}`;
/** What is stored of a client secret. */
export const clientSecretHash = (secret: string): string => createHash("sha256").update(secret).digest("hex");

/** Secrets made by this request, by client row id (held by their hash until a create's row has one). */
const secrets = new ShownOnce();

export const revealClientSecret = (ctx: Context, clientRowId: number, secret: string): void =>
  secrets.reveal(ctx, clientRowId, secret);

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Why `text` is no acceptable redirect URI (RFC 6749 3.1.2, RFC 8252 7.3), or null. */
export function redirectUriProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "must be an absolute URL";
  }
  if (url.hash || text.includes("#")) return "must not have a fragment";
  if (url.username || url.password) return "must not hold credentials";
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname)) return null;
  return "must be an https URL, or an http URL of localhost, 127.0.0.1 or [::1]";
}

/** Whether `text` is an origin as browsers send it: `scheme://host[:port]`, nothing more. */
export function isOrigin(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === "https:" || url.protocol === "http:") && url.origin === text;
  } catch {
    return false;
  }
}

function checkUris(
  bag: FieldErrorBag,
  field: string,
  label: string,
  value: unknown,
  problem: (text: string) => string | null,
) {
  if (!Array.isArray(value)) return;
  value.forEach((item, index) => {
    const why = typeof item === "string" ? problem(item) : "must be a string";
    if (why) bag.add(`${field}.${index}`, `The ${label} ${JSON.stringify(item)} ${why}.`);
  });
}

/**
 * Checks the URIs, origins and scopes; on create, gives the client its id and, unless public, its secret (revealed in
 * this answer); a client made confidential gets a secret, one made public loses its.
 */
const checkOAuthClient: NonNullable<Hooks<"OAuthClient">["beforeWrite"]> = ({ data, existing, ctx, scopes }) => {
  const bag = new FieldErrorBag();
  checkUris(bag, "redirect_uris", "redirect URI", data.redirectUris, redirectUriProblem);
  checkUris(
    bag,
    "post_logout_redirect_uris",
    "post-logout redirect URI",
    data.postLogoutRedirectUris,
    redirectUriProblem,
  );
  checkUris(bag, "allowed_origins", "origin", data.allowedOrigins, (text) =>
    isOrigin(text) ? null : "is no origin: scheme://host[:port], without path or trailing slash",
  );
  if (Array.isArray(data.scopes)) {
    const known = new Set(scopes);
    const asked = data.scopes as string[];
    asked.forEach((scope, index) => {
      if (scope !== "*" && !known.has(scope))
        bag.add(
          `scopes.${index}`,
          `The scope "${scope}" is unknown: did you mean ${closestNames(scope, scopes).join(" or ")}?`,
        );
    });
    data.scopes = [...new Set(asked)];
  }
  bag.throwIfAny();
  for (const list of ["redirectUris", "postLogoutRedirectUris", "allowedOrigins"] as const)
    if (Array.isArray(data[list])) data[list] = [...new Set(data[list] as string[])];
  const isPublic = data.public === undefined ? (existing?.public ?? false) : data.public === true;
  if (!existing) {
    data.clientId = newClientId();
    for (const list of ["redirectUris", "postLogoutRedirectUris", "allowedOrigins", "scopes"] as const)
      data[list] ??= [];
  }
  const hadSecret = existing ? existing.secretHash !== null : false;
  if (isPublic) data.secretHash = null;
  else if (!hadSecret) {
    const secret = newClientSecret();
    data.secretHash = clientSecretHash(secret);
    if (existing) revealClientSecret(ctx, existing.id, secret);
    else secrets.hold(ctx, data.secretHash as string, secret);
  }
};

export const oauthClient = defineResource<"OAuthClient">({
  name: "oauthClient",
  model: "OAuthClient",
  path: "oauth-clients",
  scope: "oauthclient",
  label: "OAuth Client",
  // Its writes are configuration, as a webhook's: they record no events.
  silent: true,
  description:
    "An application that signs the account's people in through the service's OpenID provider (`/.well-known/openid-configuration`) " +
    "and calls the API with their access tokens. A public client (a single-page or native app) has no secret and must use PKCE; " +
    "a confidential one gets a secret, shown once. A token's rights are the scopes it asked for, within the client's `scopes` " +
    "and the person's role permissions.",
  fields: {
    name: string({ required: true, max: 255, description: "The client's name, shown to people on the consent page." }),
    clientId: string({ writable: false, description: "The OAuth `client_id`: made by the service, unique." }),
    public: bool({
      description:
        "A public client (default false) has no secret and must use PKCE (S256); a confidential one authenticates with its secret " +
        "(client_secret_basic or client_secret_post).",
    }),
    redirectUris: json(
      listOf(jsonString({ description: "An absolute https URL, or an http URL of localhost / 127.0.0.1 / [::1]." })),
      {
        required: true,
        description:
          "Where the provider may send people back with a code: absolute https URLs, or loopback http URLs (localhost, 127.0.0.1, [::1]); no fragment.",
      },
    ),
    postLogoutRedirectUris: json(listOf(jsonString({ description: "A URL as for `redirect_uris`." })), {
      description:
        "Where the provider may send people after they sign out (RP-initiated logout): URLs as for `redirect_uris`.",
    }),
    allowedOrigins: json(listOf(jsonString({ description: "An origin: `scheme://host[:port]`." })), {
      description:
        "Origins (`https://app.example`) whose browser code may call the API (CORS) and the provider's token, userinfo, revocation and introspection endpoints.",
    }),
    scopes: json(listOf(jsonString({ description: "A scope name such as `view:user`, or `*` for every scope." })), {
      description:
        'The API scopes the client may ask for (`view:user`, ...), or `["*"]` for every one; `openid`, `profile`, `email` and `offline_access` are always allowed.',
      invalid: ({ path, value }) =>
        path.length
          ? `The scope ${JSON.stringify(value)} is unknown.`
          : "The scopes field must be a list of scope names.",
    }),
    secretHash: string({ hidden: true, writable: false, nullable: true }),
    disabledAt: datetime({
      description:
        "When the client was disabled, or null: a disabled client signs no one in and its tokens stop working on their next request. Set it to disable the client, null to enable it again.",
    }),
  },
  computed: {
    clientSecret: {
      type: "string",
      nullable: true,
      needs: [],
      once: true,
      description:
        "A confidential client's secret: shown once, in the answer of the create (or rotate-secret) that made it; null everywhere else.",
      resolve: (row, ctx) => secrets.shown(ctx, row.id),
    },
  },
  orderBy: [{ id: "asc" }],
  hooks: {
    beforeWrite: checkOAuthClient,
    afterCreate: ({ row, ctx }) => secrets.revealHeld(ctx, row.secretHash, row.id),
  },
  actions: [
    {
      path: "secret",
      field: "rotateOAuthClientSecret",
      ability: "update",
      summary: "Rotate a confidential OAuth client's secret",
      description:
        "Gives the confidential client a new secret and answers the client with it, shown this once; the old secret stops working at once. A public client has no secret: 422.",
    },
  ],
});
