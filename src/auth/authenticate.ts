import type { Database } from "../db/prisma.ts";
import type { Config } from "../config.ts";
import type { Auth } from "../graphql/context.ts";
import { admissionOf, bearerOf } from "./admission.ts";

const subscribed = new Set(["active", "trialing", "trial"]);
const LAST_USED_RESOLUTION_MS = 60_000;

export type AuthResult = { auth: Auth; failure: null } | { auth: null; failure: "UNAUTHENTICATED" | "PAYMENT_REQUIRED" };

/**
 * Resolves the caller from its API key: unknown, revoked or expired keys and a mismatching
 * `X-Perscom-Id` are 401; an account without a subscription is 402 when subscriptions are enforced.
 */
export async function authenticate(db: Database, config: Config, request: Request, url: URL): Promise<AuthResult> {
  if (!bearerOf(request, url)) return { auth: null, failure: "UNAUTHENTICATED" };
  const found = (await admissionOf(db, request, url)).key;
  const now = new Date();
  if (!found || found.revokedAt || (found.expiresAt && found.expiresAt <= now)) return { auth: null, failure: "UNAUTHENTICATED" };
  const claimed = request.headers.get("x-perscom-id");
  if (claimed !== null && claimed.trim() !== String(found.accountId)) return { auth: null, failure: "UNAUTHENTICATED" };
  if (config.subscriptionsEnforced && !subscribed.has(found.subscriptionStatus)) return { auth: null, failure: "PAYMENT_REQUIRED" };
  if (!found.lastUsedAt || now.getTime() - found.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    await db.prisma.apiKey.update({ where: { id: found.id }, data: { lastUsedAt: now } });
  }
  return {
    auth: { accountId: found.accountId, keyId: found.id, userId: found.userId, scopes: new Set(JSON.parse(found.scopes) as string[]) },
    failure: null,
  };
}
