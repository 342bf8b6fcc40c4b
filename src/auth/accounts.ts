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

export interface KeySummary {
  id: number;
  account: string;
  name: string;
  prefix: string;
  scopes: string[];
  userId: number | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

/** Keys as an operator sees them: never the key text or its hash, only the prefix that names it. */
export async function listKeys(prisma: PrismaClient, account?: string): Promise<KeySummary[]> {
  const rows = await prisma.apiKey.findMany({
    where: account ? { account: { name: account } } : {}, include: { account: true }, orderBy: [{ accountId: "asc" }, { id: "asc" }],
  });
  return rows.map((k) => ({
    id: k.id, account: k.account.name, name: k.name, prefix: k.prefix, scopes: JSON.parse(k.scopes) as string[], userId: k.userId,
    createdAt: k.createdAt, lastUsedAt: k.lastUsedAt, expiresAt: k.expiresAt, revokedAt: k.revokedAt,
  }));
}

/** Revokes a key: the next request made with it is a 401. Revoking twice keeps the first time. */
export async function revokeKey(prisma: PrismaClient, id: number): Promise<KeySummary> {
  const key = await prisma.apiKey.findUnique({ where: { id } });
  if (!key) throw new Error(`No key with id ${id}`);
  if (!key.revokedAt) await prisma.apiKey.update({ where: { id }, data: { revokedAt: new Date() } });
  return (await listKeys(prisma)).find((k) => k.id === id)!;
}
