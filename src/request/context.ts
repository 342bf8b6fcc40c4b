import type { ApiError } from "../core/errors.ts";
import type { AnyLoader } from "../core/loader.ts";
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { Config } from "../core/config.ts";
import type { Store } from "../db/store.ts";
import { rowBudget } from "../db/row-budget.ts";
import type { Actor, EventBus } from "../core/events.ts";

/**
 * What the credential is: an API key; a person's token (an SSO token another site signed, or an access token of our
 * OpenID provider), which also holds the self-service rights; a publishable key (embedded in public pages: view
 * scopes, public-form submissions, no private field); the CLI acting as the account; `anonymous`, no credential at all:
 * the visitor of a public route, in the account its path names (never a request's own `auth`, src/data/public-forms.ts).
 */
export type CredentialKind = "key" | "publishable" | "sso" | "oauth" | "cli" | "anonymous";

/** Who is calling: resolved from the request's credential (an API key, an SSO token, an access token) once per request. */
export interface Auth {
  kind: CredentialKind;
  accountId: number;
  /** The API key's id; null for another kind of credential. */
  keyId: number | null;
  /** The person the credential acts for: a key's user, an SSO token's or an access token's subject. */
  userId: number | null;
  /** The OAuth `client_id` an access token was issued to; null for another kind of credential. */
  clientId: string | null;
  scopes: ReadonlySet<string>;
  /** Names the credential for limits counted per credential (rate limit, open subscriptions): `key:12`, `sso:1:7`. */
  credential: string;
  /** The origins a publishable key may be used from (a browser request from another is a 403); absent otherwise. */
  origins?: readonly string[];
}

/**
 * The actor a credential stands for, as events and the request log record it: a key by its id, a person by their id
 * (with the OAuth client of an access token), an OAuth client without a person; null for the CLI or no credential.
 */
export function actorOf(auth: Auth | null): Actor | null {
  if (!auth) return null;
  switch (auth.kind) {
    case "key":
    case "publishable":
      return auth.keyId === null ? null : { type: "key", key_id: auth.keyId };
    case "sso":
    case "oauth":
      if (auth.userId !== null)
        return { type: "person", user_id: auth.userId, client_id: auth.clientId, via: auth.kind };
      return auth.clientId === null ? null : { type: "client", client_id: auth.clientId };
    case "cli":
    case "anonymous":
      return null;
  }
}

export interface Context {
  /**
   * The data store (src/db/store.ts): every read and transaction of the request's own goes through it, counted against
   * the request's row budget (`requestStore`); its `read` runs one statement of our own on committed data.
   */
  store: Store;
  /** The plain Prisma client: Pothos's, and for what only Prisma answers outside a transaction. */
  prisma: PrismaClient;
  provider: "sqlite" | "postgresql";
  config: Config;
  /** Null when the request carried no usable key; `authFailure` then says why. */
  auth: Auth | null;
  authFailure: ApiError | null;
  /** Origin used for absolute file URLs. */
  baseUrl: string;
  requestId: string;
  traceId: string;
  /** Where committed events are announced (src/events/bus.ts). */
  events: EventBus;
  /** False when the request said `X-Perscom-Notifications: false`: its events are recorded but call no webhook. */
  notify: boolean;
  /** Per-request DataLoaders, keyed by relation and selection. */
  loaders: Map<string, AnyLoader>;
  /**
   * Set when an automation's action writes (src/events/automations): its events record the run and the chain's depth
   * (one more than the event that triggered it), so automations they trigger stop at the depth limit.
   */
  automation?: { runId: number; depth: number };
  /** The limits an anonymous write is held to (src/http/public-writes.ts); absent where none is served (CLI). */
  anonymousWrites?: AnonymousWrites;
}

/** What a write without a credential must pass before anything is stored (a public form's submission). */
export interface AnonymousWrites {
  /** The client address's and the form's rate limits: RATE_LIMITED (with Retry-After) when one is used up. */
  admit(target: { accountId: number; formId: number }): Promise<void>;
  /** The captcha, when the server verifies captchas: VALIDATION when the token is missing or refused, UNAVAILABLE when the verifier cannot answer. */
  verifyCaptcha(token: string | null): Promise<void>;
}

/**
 * The store of one operation: `store` with a fresh budget of `maxRowsPerRequest` rows (MAX_ROWS_PER_REQUEST). A
 * request's context gets one as it is made; each event of a subscription gets its own.
 */
export const requestStore = (store: Store, config: Pick<Config, "maxRowsPerRequest">): Store =>
  store.withBudget(rowBudget(config.maxRowsPerRequest));
