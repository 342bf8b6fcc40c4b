import { createHash, randomBytes } from "node:crypto";
import { ARBITRARY_DOCUMENTS_SCOPE, closestScopes, knownScopes } from "../resources/scopes.ts";

export { ARBITRARY_DOCUMENTS_SCOPE, knownScopes };

/** Keys are shown once; only their SHA-256 is stored. */
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

/** Whether a key with `scopes` may send any GraphQL document while GRAPHQL_TRUSTED_DOCUMENTS_ONLY is on. */
export const maySendAnyDocument = (scopes: ReadonlySet<string>): boolean =>
  scopes.has("*") || scopes.has(ARBITRARY_DOCUMENTS_SCOPE);

const known = new Set(knownScopes);

/** `*` or a list of known scopes separated by commas or spaces; an unknown one is an error naming the closest known ones. */
export function parseScopes(text: string): string[] {
  const scopes = [...new Set(text.split(/[\s,]+/).filter(Boolean))];
  for (const scope of scopes) {
    if (scope !== "*" && !known.has(scope)) {
      throw new Error(
        `Unknown scope "${scope}": did you mean ${closestScopes(scope).join(" or ")}? (keys:create --help lists them all)`,
      );
    }
  }
  return scopes;
}
