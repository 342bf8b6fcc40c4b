import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Store } from "../db/store.ts";
import { hashPassword, passwordProblem } from "./passwords.ts";

/*
 * One-time links that let a person choose a password: an invitation (made by someone allowed to update the person) or
 * a reset (asked for by email). The token travels only in the link; the table keeps its SHA-256, so a copy of the
 * database opens no link. A link sets a password once: the POST that uses it marks it used and sets the password in
 * one transaction, whose conditional UPDATE lets only one of two racing posts through.
 */

export type LinkPurpose = "invitation" | "reset";

/** How long an invitation stays usable. */
export const INVITATION_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;
/** How long a reset link stays usable. */
export const RESET_LIFETIME_MS = 60 * 60 * 1000;
const lifetimes: Record<LinkPurpose, number> = { invitation: INVITATION_LIFETIME_MS, reset: RESET_LIFETIME_MS };

const TOKEN_BYTES = 32;
/** What a token looks like: 32 bytes, base64url; anything else is refused before any lookup. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** The page that takes a link's token (src/http/password-pages.ts). */
export const SET_PASSWORD_PATH = "/password/set";

export const tokenHash = (token: string): string => createHash("sha256").update(token).digest("hex");

/** The absolute URL of a link's page, below `baseUrl` (the public URL, or the request's origin). */
export const linkUrl = (baseUrl: string, token: string): string =>
  `${baseUrl.replace(/\/+$/, "")}${SET_PASSWORD_PATH}?token=${encodeURIComponent(token)}`;

export interface NewLink {
  id: number;
  token: string;
  expiresAt: Date;
}

/**
 * A new link for the person; their earlier unused links of the same purpose stop working (deleted, in the same
 * transaction): only the latest invitation, or the latest reset, opens.
 */
export async function createSignInLink(
  store: Store,
  link: { accountId: number; userId: number; purpose: LinkPurpose },
): Promise<NewLink> {
  const token = randomBytes(TOKEN_BYTES).toString("base64url");
  const expiresAt = new Date(Date.now() + lifetimes[link.purpose]);
  const row = await store.transaction(async (tx) => {
    await tx.prisma.signInLink.deleteMany({ where: { userId: link.userId, purpose: link.purpose, usedAt: null } });
    return tx.prisma.signInLink.create({
      data: { ...link, hash: tokenHash(token), expiresAt },
      select: { id: true },
    });
  });
  return { id: row.id, token, expiresAt };
}

/** What a token opens: a usable link, or why not. */
export type LinkState =
  | { state: "usable"; id: number; accountId: number; userId: number; purpose: LinkPurpose; expiresAt: Date }
  | { state: "unknown" | "used" | "expired" };

/** The link a token names, and whether it can still be used. */
export async function linkOf(store: Store, token: unknown): Promise<LinkState> {
  if (typeof token !== "string" || !TOKEN_SHAPE.test(token)) return { state: "unknown" };
  // Looked up by its hash (a unique index): the lookup compares no secret; the hash is what is stored.
  const link = await store.prisma.signInLink.findUnique({ where: { hash: tokenHash(token) } });
  if (!link) return { state: "unknown" };
  if (link.usedAt) return { state: "used" };
  if (link.expiresAt.getTime() <= Date.now()) return { state: "expired" };
  return {
    state: "usable",
    id: link.id,
    accountId: link.accountId,
    userId: link.userId,
    purpose: link.purpose as LinkPurpose,
    expiresAt: link.expiresAt,
  };
}

/** What posting a link's form did: the password set, a password refused (nothing changed), or the link's state. */
export type LinkUse =
  | { state: "set"; userId: number }
  | { state: "invalid"; problem: string }
  | Exclude<LinkState, { state: "usable" }>;

/**
 * Sets the password through the link, and marks the link used, in one transaction: the UPDATE that marks it is
 * conditional (unused, unexpired), so of two posts racing with one link, one sets the password and the other finds
 * it used. A password that breaks the rules changes nothing.
 */
export async function setPasswordWithLink(store: Store, token: unknown, password: unknown): Promise<LinkUse> {
  const link = await linkOf(store, token);
  if (link.state !== "usable") return link;
  const problem = passwordProblem(password);
  if (problem) return { state: "invalid", problem };
  const hash = await hashPassword(password as string);
  const now = new Date();
  const used = await store.transaction(async (tx) => {
    const marked = await tx.prisma.signInLink.updateMany({
      where: { id: link.id, usedAt: null, expiresAt: { gt: now } },
      data: { usedAt: now },
    });
    if (marked.count !== 1) return false;
    await tx.prisma.password.upsert({
      where: { userId: link.userId },
      create: { userId: link.userId, hash },
      update: { hash },
    });
    return true;
  });
  if (!used) {
    // Another post used it first (or it expired meanwhile).
    const now = await linkOf(store, token);
    return now.state === "usable" ? { state: "used" } : now;
  }
  return { state: "set", userId: link.userId };
}

/*
 * The form's hidden field, bound to the link: an HMAC of the link's stored row (id, creation time) keyed with the
 * token. There is no session to bind it to; it ties a posted form to the link it was rendered for, and the page also
 * refuses posts another site sends (src/http/password-pages.ts checks Origin and Sec-Fetch-Site).
 */
export const formToken = (token: string, link: { id: number; expiresAt: Date }): string =>
  createHmac("sha256", token).update(`password-set:${link.id}:${link.expiresAt.getTime()}`).digest("base64url");

/** Whether `given` is the form token of this link, compared in constant time. */
export function formTokenMatches(token: string, link: { id: number; expiresAt: Date }, given: unknown): boolean {
  if (typeof given !== "string") return false;
  const expected = Buffer.from(formToken(token, link));
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
