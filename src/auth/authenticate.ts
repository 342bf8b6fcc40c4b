import type { Database } from "../db/prisma.ts";
import type { Config } from "../core/config.ts";
import type { Auth } from "../request/context.ts";
import { ApiError } from "../core/errors.ts";
import { isPublishableScope } from "../resources/publishable.ts";
import { admissionOf, bearerOf } from "./admission.ts";
import { authenticateSso, isJwt } from "./sso.ts";
import { authenticateAccessToken, isAccessToken } from "./oidc/access-tokens.ts";

const subscribed = new Set(["active", "trialing", "trial"]);
/** Whether an account in this subscription state is refused (402): only when subscriptions are enforced. */
const unsubscribed = (config: Config, status: string) => config.subscriptionsEnforced && !subscribed.has(status);
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * When this instance last recorded each key's use, by key id: requests that arrive together with a key whose
 * `lastUsedAt` is stale would each write it (32 writes of one row at once under load, every minute); the first one
 * claims the write and the others skip it.
 */
const usesRecorded = new WeakMap<Database, Map<number, number>>();
const MAX_KEYS_REMEMBERED = 10_000;

async function recordUse(db: Database, key: { id: number; lastUsedAt: Date | null }, now: Date): Promise<void> {
  let recorded = usesRecorded.get(db);
  if (!recorded) usesRecorded.set(db, (recorded = new Map()));
  const last = Math.max(key.lastUsedAt?.getTime() ?? 0, recorded.get(key.id) ?? 0);
  if (now.getTime() - last <= LAST_USED_RESOLUTION_MS) return;
  if (recorded.size >= MAX_KEYS_REMEMBERED) recorded.clear();
  recorded.set(key.id, now.getTime());
  try {
    await db.prisma.apiKey.update({ where: { id: key.id }, data: { lastUsedAt: now } });
  } catch (error) {
    // Not recorded: the next request tries again.
    if (recorded.get(key.id) === now.getTime()) recorded.delete(key.id);
    throw error;
  }
}

/** A key's scopes; a publishable key's only those a public page may hold, whatever its row says (edited by hand). */
const scopesOf = (key: { scopes: unknown; publishable: boolean }) => {
  // A row edited by hand may hold anything: only a list's strings are scopes.
  const scopes = Array.isArray(key.scopes) ? key.scopes.filter((s): s is string => typeof s === "string") : [];
  return key.publishable ? scopes.filter(isPublishableScope) : scopes;
};

/** Why a request has no usable key: the error it is answered with once it touches data (401, or 402). */
export type AuthResult = { auth: Auth; failure: null } | { auth: null; failure: ApiError };

const unauthenticated = () => ({ auth: null, failure: new ApiError("UNAUTHENTICATED") }) as const;

/** A token's credential, read with its account's subscription state: refused (402) where that state is not subscribed. */
function subscribedOnly(
  config: Config,
  token: { auth: Auth; subscriptionStatus: string; failure: null } | { auth: null; failure: ApiError },
): AuthResult {
  if (!token.auth) return token;
  if (unsubscribed(config, token.subscriptionStatus)) return { auth: null, failure: new ApiError("PAYMENT_REQUIRED") };
  return { auth: token.auth, failure: null };
}

/**
 * Resolves the caller from its credential (an API key, an SSO token, an access token of our OpenID provider): unknown, revoked or expired keys and a mismatching
 * `X-Perscom-Id` are 401; an account without a subscription is 402 when subscriptions are enforced.
 */
export async function authenticate(db: Database, config: Config, request: Request, url: URL): Promise<AuthResult> {
  const bearer = bearerOf(request, url);
  if (!bearer) return unauthenticated();
  if (isJwt(bearer)) return subscribedOnly(config, await authenticateSso(db, request, bearer));
  // Neither an API key nor a JWT: an access token of our OpenID provider.
  if (isAccessToken(bearer)) return subscribedOnly(config, await authenticateAccessToken(db, request, bearer));
  const found = (await admissionOf(db, request, url)).key;
  const now = new Date();
  if (!found || found.revokedAt) return unauthenticated();
  // A key that was valid says why it no longer is, so its owner knows to ask for a new one rather than debug the request.
  if (found.expiresAt && found.expiresAt <= now) {
    return {
      auth: null,
      failure: new ApiError(
        "UNAUTHENTICATED",
        `The API key expired on ${found.expiresAt.toISOString()}. Ask an administrator for a new key.`,
      ),
    };
  }
  const claimed = request.headers.get("x-perscom-id");
  if (claimed !== null && claimed.trim() !== String(found.accountId)) return unauthenticated();
  if (unsubscribed(config, found.subscriptionStatus)) return { auth: null, failure: new ApiError("PAYMENT_REQUIRED") };
  const origins = found.publishable ? (found.allowedOrigins ?? []) : null;
  // Only a browser names an Origin. A caller without one is a server, and may use the key: it is public anyway, and
  // the rule exists to stop other sites embedding it in their pages, which every browser request would reveal.
  const origin = request.headers.get("origin");
  if (origins && origin !== null && !origins.includes(origin))
    return {
      auth: null,
      failure: new ApiError("FORBIDDEN", `This publishable key may not be used from ${JSON.stringify(origin)}.`),
    };
  await recordUse(db, found, now);
  const auth: Auth = {
    kind: found.publishable ? "publishable" : "key",
    accountId: found.accountId,
    keyId: found.id,
    clientId: null,
    userId: found.publishable ? null : found.userId,
    scopes: new Set(scopesOf(found)),
    credential: `key:${found.id}`,
  };
  if (origins) auth.origins = origins;
  return { auth, failure: null };
}
