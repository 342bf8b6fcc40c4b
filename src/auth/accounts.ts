import type { PrismaClient } from "../generated/prisma/client.ts";
import { generateKey, parseScopes } from "./keys.ts";
import { defaultSettings } from "../resources/communication.ts";

export const subscriptionStates = ["active", "trialing", "past_due", "incomplete", "incomplete_expired", "canceled", "unpaid", "none"];

/** The account named `name`; a new one starts with PERSCOM's default settings. */
export async function ensureAccount(prisma: PrismaClient, name: string) {
  const existing = await prisma.account.findUnique({ where: { name } });
  if (existing) return existing;
  return prisma.$transaction(async (tx) => {
    const account = await tx.account.upsert({ where: { name }, create: { name }, update: {} });
    if ((await tx.setting.count({ where: { accountId: account.id } })) === 0) {
      await tx.setting.createMany({
        data: defaultSettings(name).map((s) => ({ ...s, accountId: account.id, payload: s.payload as object })),
      });
    }
    return account;
  });
}

export interface NewKey {
  key: string;
  id: number;
  accountId: number;
  userId: number | null;
}

/** Creates an API key for an account (created if new); the key's text is returned once and only its hash is kept. */
export async function createApiKey(
  prisma: PrismaClient, options: { account: string; scopes: string; name?: string; userId?: number | null; expiresAt?: Date | null },
): Promise<NewKey> {
  const scopes = parseScopes(options.scopes);
  if (scopes.length === 0) throw new Error("Give at least one scope, or * for all");
  const account = await ensureAccount(prisma, options.account);
  const { key, hash, prefix } = generateKey();
  const row = await prisma.apiKey.create({
    data: {
      accountId: account.id, name: options.name ?? "API key", hash, prefix, scopes: JSON.stringify(scopes),
      userId: options.userId ?? null, expiresAt: options.expiresAt ?? null,
    },
  });
  return { key, id: row.id, accountId: account.id, userId: row.userId };
}
