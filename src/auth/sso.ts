import { decodeJwt, errors as joseErrors, jwtVerify } from "jose";
import type { Database } from "../db/prisma.ts";
import type { Auth } from "../request/context.ts";
import { ApiError } from "../core/errors.ts";
import { permissionsOf } from "./permissions.ts";

/*
 * PERSCOM-style SSO tokens: another site (a unit's forum) signs its own HS256 JWTs with the account's SSO secret and
 * sends them as `Authorization: Bearer`, to act as one of the account's people. Claims: `sub` (the person's id or
 * email), `scopes` (a list) or `scope` (space-separated), `*` allowed, `exp` (required), `iat`/`nbf` as usual, and
 * `tenant` (the account id) unless `X-Perscom-Id` names it. What the token may do is what it asks for, within the
 * permissions of the person's roles. The secret is made by src/resources/sso-secret.ts (`sso:rotate`, `POST /sso/rotate`).
 */

/** Whether a bearer credential is a JWT (three base64url parts) rather than an API key. */
export const isJwt = (bearer: string): boolean =>
  /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(bearer) && bearer.startsWith("eyJ");

const refused = (why: string) => ({ auth: null, failure: new ApiError("UNAUTHENTICATED", why) }) as const;

/** The scopes a token asks for: `scopes` (a list) or `scope` (a space-separated string). */
function askedScopes(payload: Record<string, unknown>): string[] {
  const { scopes, scope } = payload;
  if (Array.isArray(scopes)) return scopes.filter((s): s is string => typeof s === "string");
  if (typeof scopes === "string") return scopes.split(/\s+/).filter(Boolean);
  if (typeof scope === "string") return scope.split(/\s+/).filter(Boolean);
  return [];
}

/** What the token asks for, within what the person's roles permit (`*` on either side stands for the other). */
export function effectiveScopes(asked: readonly string[], permitted: readonly string[]): Set<string> {
  if (permitted.includes("*")) return new Set(asked);
  if (asked.includes("*")) return new Set(permitted);
  const allowed = new Set(permitted);
  return new Set(asked.filter((s) => allowed.has(s)));
}

/** The person's credential with their account's subscription state (read with the account's secret), or why not. */
export type SsoResult = { auth: Auth; subscriptionStatus: string; failure: null } | { auth: null; failure: ApiError };

/** The person an SSO token acts for, or why it is refused (401, saying which check failed). */
export async function authenticateSso(db: Database, request: Request, token: string): Promise<SsoResult> {
  let unverified: Record<string, unknown>;
  try {
    unverified = decodeJwt(token);
  } catch {
    return refused("The bearer token is not a well-formed JWT.");
  }
  const header = request.headers.get("x-perscom-id")?.trim();
  const tenant = unverified.tenant;
  const claimed = header || (typeof tenant === "string" || typeof tenant === "number" ? String(tenant) : "");
  if (!/^\d{1,15}$/.test(claimed))
    return refused("An SSO token needs its account: a `tenant` claim or the X-Perscom-Id header.");
  if (header && tenant != null && String(tenant) !== header)
    return refused("The SSO token's tenant is not the account X-Perscom-Id names.");
  const account = await db.prisma.account.findUnique({
    where: { id: Number(claimed) },
    select: { id: true, ssoSecret: true, subscriptionStatus: true },
  });
  if (!account?.ssoSecret)
    return refused("The account takes no SSO tokens: it has no SSO secret (sso:rotate makes one).");
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, new TextEncoder().encode(account.ssoSecret), {
      algorithms: ["HS256"],
      requiredClaims: ["exp", "sub"],
    }));
  } catch (error) {
    return refused(whyRefused(error));
  }
  const sub = String(payload.sub);
  const person = await db.prisma.user.findFirst({
    where: { accountId: account.id, ...(/^\d{1,15}$/.test(sub) ? { id: Number(sub) } : { email: sub }) },
    select: { id: true, roleLinks: { select: { role: { select: { permissions: true } } } } },
  });
  if (!person) return refused("The SSO token's subject is no person of this account.");
  const permitted = permissionsOf(person.roleLinks);
  return {
    auth: {
      kind: "sso",
      accountId: account.id,
      keyId: null,
      clientId: null,
      userId: person.id,
      scopes: effectiveScopes(askedScopes(payload), permitted),
      credential: `sso:${account.id}:${person.id}`,
    },
    subscriptionStatus: account.subscriptionStatus,
    failure: null,
  };
}

function whyRefused(error: unknown): string {
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return "SSO tokens must be signed with HS256.";
  if (error instanceof joseErrors.JWSSignatureVerificationFailed)
    return "The SSO token's signature does not verify with the account's SSO secret.";
  if (error instanceof joseErrors.JWTExpired) return "The SSO token has expired.";
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === "nbf") return "The SSO token is not valid yet (nbf).";
    if (error.claim === "iat") return "The SSO token was issued in the future (iat).";
    return `The SSO token's ${error.claim} claim is missing or invalid.`;
  }
  return "The SSO token is malformed.";
}
