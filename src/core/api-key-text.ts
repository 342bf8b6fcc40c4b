import { createHash, randomBytes } from "node:crypto";

/*
 * The text of an API key: what it starts with, how it is made, and what is stored of it (its SHA-256; a key is shown
 * once). Made by the CLI (src/auth/accounts.ts) and by the API (src/resources/api-key.ts), read by authentication.
 */

export const hashKey = (key: string) => createHash("sha256").update(key).digest("hex");

/** What every API key starts with. */
export const API_KEY_PREFIX = "mst_";
/**
 * What every publishable key starts with: a request can be told to carry one (or none) before anything is read, so
 * the shared response cache (src/http/response-cache.ts) is looked up for those requests only.
 */
export const PUBLISHABLE_KEY_PREFIX = "mpk_";

export const isPublishableKey = (text: string): boolean => text.startsWith(PUBLISHABLE_KEY_PREFIX);

export function generateKey(publishable = false): { key: string; hash: string; prefix: string } {
  const key = `${publishable ? PUBLISHABLE_KEY_PREFIX : API_KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
  return { key, hash: hashKey(key), prefix: key.slice(0, 12) };
}
