import type { Prisma, PrismaClient } from "../generated/prisma/client.ts";
import type { Store } from "../db/store.ts";
import { generateKey, parseScopes } from "./keys.ts";
import { defaultSettings } from "../resources/communication.ts";
import { builtInRoles } from "../resources/role.ts";
import { isPublishableScope } from "../resources/publishable.ts";

export const subscriptionStates = [
  "active",
  "trialing",
  "past_due",
  "incomplete",
  "incomplete_expired",
  "canceled",
  "unpaid",
  "none",
];

/** What an account slug looks like: lower-case letters, digits and inner hyphens, at most 63 characters. */
export const ACCOUNT_SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The slug a new account named `name` gets: its name folded to ACCOUNT_SLUG, numbered when taken. */
async function freeSlugFor(tx: Pick<PrismaClient, "account">, name: string): Promise<string> {
  const base =
    name
      .normalize("NFKD")
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 55)
      .replace(/-+$/, "") || "account";
  for (let n = 1; ; n++) {
    const slug = n === 1 ? base : `${base}-${n}`;
    if (!(await tx.account.findUnique({ where: { slug }, select: { id: true } }))) return slug;
  }
}

/** Changes an account's slug (its public addresses move with it): a malformed or taken slug is an error. */
export async function setAccountSlug(prisma: PrismaClient, name: string, slug: string) {
  if (!ACCOUNT_SLUG.test(slug))
    throw new Error(`"${slug}" is not a slug: lower-case letters, digits and inner hyphens, at most 63 characters`);
  const account = await requireAccount(prisma, name);
  const holder = await prisma.account.findUnique({ where: { slug }, select: { id: true, name: true } });
  if (holder && holder.id !== account.id) throw new Error(`The slug "${slug}" is taken by account "${holder.name}"`);
  return prisma.account.update({ where: { id: account.id }, data: { slug } });
}

/**
 * The account named `name`; a new one starts with PERSCOM's default settings, the built-in roles and a slug from its
 * name (or `slug`). All of it Prisma's, in a transaction of the store's.
 */
export async function ensureAccount(store: Store, name: string, slug?: string) {
  const existing = await store.prisma.account.findUnique({ where: { name } });
  if (existing) return existing;
  if (slug !== undefined && !ACCOUNT_SLUG.test(slug))
    throw new Error(`"${slug}" is not a slug: lower-case letters, digits and inner hyphens, at most 63 characters`);
  return store.transaction(async ({ prisma: tx }) => {
    const chosen = slug ?? (await freeSlugFor(tx, name));
    if (slug !== undefined && (await tx.account.findUnique({ where: { slug }, select: { id: true } })))
      throw new Error(`The slug "${slug}" is taken by another account`);
    const account = await tx.account.upsert({ where: { name }, create: { name, slug: chosen }, update: {} });
    if ((await tx.setting.count({ where: { accountId: account.id } })) === 0) {
      await tx.setting.createMany({
        data: defaultSettings(name).map((s) => ({ ...s, accountId: account.id, payload: s.payload as object })),
      });
    }
    if ((await tx.role.count({ where: { accountId: account.id, builtIn: true } })) === 0) {
      await tx.role.createMany({
        data: builtInRoles.map((r) => ({
          ...r,
          permissions: [...r.permissions],
          builtIn: true,
          accountId: account.id,
        })),
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

/** The account named `name`; an error if there is none. */
export async function requireAccount(prisma: PrismaClient, name: string) {
  const account = await prisma.account.findUnique({ where: { name } });
  if (!account) throw new Error(`No account named "${name}"`);
  return account;
}

/**
 * Creates an API key for an account (created if new); the key's text is returned once and only its hash is kept.
 * A key bound to a user acts as that user (the author of what it writes, `/me`), so the user must be one of the
 * account's own: another account's user would show that account their name and email.
 */
export async function createApiKey(
  store: Store,
  options: {
    account: string;
    scopes: string;
    name?: string;
    userId?: number | null;
    expiresAt?: Date | null;
    /** A publishable key (src/resources/publishable.ts): only view scopes and public submissions, used from `origins`. */
    publishable?: boolean;
    origins?: readonly string[];
  },
): Promise<NewKey> {
  const scopes = parseScopes(options.scopes);
  if (scopes.length === 0) throw new Error("Give at least one scope, or * for all");
  const origins = options.publishable ? publishableOrigins(scopes, options) : null;
  const prisma = store.prisma;
  if (options.userId != null) {
    const existing = await prisma.account.findUnique({ where: { name: options.account } });
    const user =
      existing &&
      (await prisma.user.findFirst({ where: { id: options.userId, accountId: existing.id }, select: { id: true } }));
    if (!user)
      throw new Error(
        `Account "${options.account}" has no user ${options.userId}: a key can act only as a user of its own account`,
      );
  }
  const account = await ensureAccount(store, options.account);
  const { key, hash, prefix } = generateKey(origins !== null);
  const row = await prisma.apiKey.create({
    data: {
      accountId: account.id,
      name: options.name ?? "API key",
      hash,
      prefix,
      scopes,
      publishable: origins !== null,
      ...(origins === null ? {} : { allowedOrigins: origins }),
      userId: options.userId ?? null,
      expiresAt: options.expiresAt ?? null,
    },
  });
  return { key, id: row.id, accountId: account.id, userId: row.userId };
}

/**
 * A publishable key's origins, checked with its scopes: it holds only what a public page may (no `*`, no scope of a
 * private resource, no write but public submissions), is bound to no user, and names at least one origin, each an
 * `http(s)://host[:port]` origin exactly.
 */
function publishableOrigins(scopes: string[], options: { userId?: number | null; origins?: readonly string[] }) {
  const refused = scopes.filter((s) => !isPublishableScope(s));
  if (refused.length > 0)
    throw new Error(
      `A publishable key cannot hold ${refused.map((s) => `"${s}"`).join(", ")}: only view scopes of public resources and create:submission`,
    );
  if (options.userId != null) throw new Error("A publishable key acts as no user: leave out --user");
  const origins = [...new Set(options.origins ?? [])];
  if (origins.length === 0) throw new Error("A publishable key needs the origins it is used from (--origins)");
  for (const origin of origins) {
    const parsed = URL.canParse(origin) ? new URL(origin) : null;
    if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.origin !== origin)
      throw new Error(`"${origin}" is not an origin: write it as https://host or https://host:port, with no path`);
  }
  return origins;
}

export interface KeySummary {
  id: number;
  account: string;
  name: string;
  prefix: string;
  scopes: string[];
  publishable: boolean;
  origins: string[];
  userId: number | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

type KeyRow = Prisma.ApiKeyGetPayload<{ include: { account: true } }>;

const summaryOf = (k: KeyRow): KeySummary => ({
  id: k.id,
  account: k.account.name,
  name: k.name,
  prefix: k.prefix,
  scopes: k.scopes as string[],
  publishable: k.publishable,
  origins: (k.allowedOrigins ?? []) as string[],
  userId: k.userId,
  createdAt: k.createdAt,
  lastUsedAt: k.lastUsedAt,
  expiresAt: k.expiresAt,
  revokedAt: k.revokedAt,
});

/** Keys as an operator sees them: never the key text or its hash, only the prefix that names it. An unknown account is an error. */
export async function listKeys(prisma: PrismaClient, account?: string): Promise<KeySummary[]> {
  const accountId = account === undefined ? undefined : (await requireAccount(prisma, account)).id;
  const rows = await prisma.apiKey.findMany({
    where: accountId === undefined ? {} : { accountId },
    include: { account: true },
    orderBy: [{ accountId: "asc" }, { id: "asc" }],
  });
  return rows.map(summaryOf);
}

/** Revokes a key: the next request made with it is a 401. A key already revoked is an error that says when it was. */
export async function revokeKey(prisma: PrismaClient, id: number): Promise<KeySummary> {
  const { count } = await prisma.apiKey.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: new Date() } });
  const key = await prisma.apiKey.findUnique({ where: { id }, include: { account: true } });
  if (!key) throw new Error(`No key with id ${id}`);
  if (count === 0) throw new Error(`Key ${id} was already revoked at ${key.revokedAt!.toISOString()}`);
  return summaryOf(key);
}
