import type { Database } from "../../db/prisma.ts";
import type { Auth } from "../../request/context.ts";
import { ApiError } from "../../core/errors.ts";
import { API_KEY_PREFIX } from "../keys.ts";
import { effectiveScopes } from "../sso.ts";
import { personPermissions } from "../permissions.ts";
import { findRecord, findRecordByUid, findRecordOf } from "./adapter.ts";

/*
 * An access token of our OpenID provider as an API credential. Everything is read on every request (the token, its
 * grant and session, the client, the person's roles), so a revocation, a disabled client or a removed role holds on
 * the next request, on every instance. Rights: the token's scopes ∩ the client's scopes ∩ the person's role
 * permissions (a client credentials token: ∩ the client's scopes only).
 */

/**
 * Whether a bearer credential has the shape of our provider's access tokens: oidc-provider's opaque tokens are 256
 * random bits, 43 base64url characters (its default `formats.bitsOfOpaqueRandomness`). API keys start with `mst_`.
 */
export const isAccessToken = (bearer: string): boolean =>
  /^[A-Za-z0-9_-]{43}$/.test(bearer) && !bearer.startsWith(API_KEY_PREFIX);

const refused = (why: string) => ({ auth: null, failure: new ApiError("UNAUTHENTICATED", why) }) as const;
const UNKNOWN = "The access token is unknown, expired or revoked. Sign in again (or refresh the token).";

/** The token's owner with their account's subscription state, or why it is refused (401). */
export type AccessTokenResult =
  | { auth: Auth; subscriptionStatus: string; failure: null }
  | { auth: null; failure: ApiError };

const words = (value: unknown): string[] => (typeof value === "string" ? value.split(" ").filter(Boolean) : []);
const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];

export async function authenticateAccessToken(
  db: Database,
  request: Request,
  token: string,
): Promise<AccessTokenResult> {
  const found = await findRecordOf(db, ["AccessToken", "ClientCredentials"], token);
  if (!found) return refused(UNKNOWN);
  const { model, payload } = found;
  if (typeof payload.exp === "number" && payload.exp * 1000 <= Date.now()) return refused(UNKNOWN);
  const clientId = typeof payload.clientId === "string" ? payload.clientId : "";
  const client = await db.prisma.oAuthClient.findUnique({
    where: { clientId },
    select: { accountId: true, scopes: true, disabledAt: true },
  });
  if (!client) return refused(UNKNOWN);
  const account = await db.prisma.account.findUnique({
    where: { id: client.accountId },
    select: { subscriptionStatus: true },
  });
  if (!account) return refused(UNKNOWN);
  if (client.disabledAt) return refused("The OAuth client this access token was issued to is disabled.");
  const claimed = request.headers.get("x-perscom-id");
  if (claimed !== null && claimed.trim() !== String(client.accountId)) return refused(UNKNOWN);
  const asked = words(payload.scope);
  const withinClient = effectiveScopes(asked, strings(client.scopes));
  const base = { kind: "oauth" as const, accountId: client.accountId, keyId: null, clientId };
  if (model === "ClientCredentials") {
    return {
      auth: { ...base, userId: null, scopes: withinClient, credential: `oauth:${clientId}:client` },
      subscriptionStatus: account.subscriptionStatus,
      failure: null,
    };
  }
  // A revoked grant (a revoked refresh token, a sign-out) takes its access tokens with it; so does an ended session.
  const [grant, session] = await Promise.all([
    typeof payload.grantId === "string" ? findRecord(db, "Grant", payload.grantId) : undefined,
    payload.expiresWithSession && typeof payload.sessionUid === "string"
      ? findRecordByUid(db, "Session", payload.sessionUid)
      : true,
  ]);
  if (!grant || !session) return refused(UNKNOWN);
  const sub = typeof payload.accountId === "string" && /^\d{1,15}$/.test(payload.accountId) ? payload.accountId : "";
  const permitted = sub ? await personPermissions(db, client.accountId, Number(sub)) : null;
  if (!permitted) return refused("The access token's person is no longer a person of the account.");
  return {
    auth: {
      ...base,
      userId: Number(sub),
      scopes: effectiveScopes([...withinClient], permitted),
      credential: `oauth:${clientId}:${sub}`,
    },
    subscriptionStatus: account.subscriptionStatus,
    failure: null,
  };
}
