import type { PrismaClient } from "../generated/prisma/client.ts";
import type { Config } from "../config.ts";
import type { Auth } from "../graphql/context.ts";
import { hashKey } from "./keys.ts";

const subscribed = new Set(["active", "trialing", "trial"]);
const LAST_USED_RESOLUTION_MS = 60_000;

export type AuthResult = { auth: Auth; failure: null } | { auth: null; failure: "UNAUTHENTICATED" | "PAYMENT_REQUIRED" };

/** The bearer key of a request (header, or PERSCOM's `?apikey=`). */
export function bearerOf(request: Request, url: URL): string | null {
  const header = request.headers.get("authorization");
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1] ?? url.searchParams.get("apikey");
}

/**
 * Resolves the caller from its API key: unknown, revoked or expired keys and a mismatching
 * `X-Perscom-Id` are 401; an account without a subscription is 402 when subscriptions are enforced.
 */
export async function authenticate(prisma: PrismaClient, config: Config, request: Request, url: URL): Promise<AuthResult> {
  const key = bearerOf(request, url);
  if (!key) return { auth: null, failure: "UNAUTHENTICATED" };
  const found = await prisma.apiKey.findUnique({ where: { hash: hashKey(key) }, include: { account: true } });
  const now = new Date();
  if (!found || found.revokedAt || (found.expiresAt && found.expiresAt <= now)) return { auth: null, failure: "UNAUTHENTICATED" };
  const claimed = request.headers.get("x-perscom-id");
  if (claimed !== null && claimed.trim() !== String(found.accountId)) return { auth: null, failure: "UNAUTHENTICATED" };
  if (config.subscriptionsEnforced && !subscribed.has(found.account.subscriptionStatus)) return { auth: null, failure: "PAYMENT_REQUIRED" };
  if (!found.lastUsedAt || now.getTime() - found.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    await prisma.apiKey.update({ where: { id: found.id }, data: { lastUsedAt: now } });
  }
  return {
    auth: { accountId: found.accountId, keyId: found.id, userId: found.userId, scopes: new Set(JSON.parse(found.scopes) as string[]) },
    failure: null,
  };
}
