import { createHash, randomBytes } from "node:crypto";
import { distance } from "fastest-levenshtein";
import { operations } from "../resources/operations.ts";

/** Keys are shown once; only their SHA-256 is stored. */
export const hashKey = (key: string) => createHash("sha256").update(key).digest("hex");

export function generateKey(): { key: string; hash: string; prefix: string } {
  const key = `mst_${randomBytes(32).toString("base64url")}`;
  return { key, hash: hashKey(key), prefix: key.slice(0, 12) };
}

/** Lets a key send any GraphQL document to `/graphql` when `GRAPHQL_TRUSTED_DOCUMENTS_ONLY` is on (src/http/trusted-documents.ts). */
export const ARBITRARY_DOCUMENTS_SCOPE = "graphql:arbitrary";

/** Whether a key with `scopes` may send any GraphQL document while GRAPHQL_TRUSTED_DOCUMENTS_ONLY is on. */
export const maySendAnyDocument = (scopes: ReadonlySet<string>): boolean => scopes.has("*") || scopes.has(ARBITRARY_DOCUMENTS_SCOPE);

/**
 * Every scope an operation of the registry asks for (`view:rank`, `clear:cache`, ...) and `graphql:arbitrary`, sorted:
 * with `*`, what a key can hold.
 */
export const knownScopes: readonly string[] = [...new Set([...operations.flatMap((op) => op.scopes), ARBITRARY_DOCUMENTS_SCOPE])].sort();
const known = new Set(knownScopes);

/** The known scopes nearest to `scope` by edit distance (a typo's likely meaning). */
function closestScopes(scope: string, count = 3): string[] {
  const distances = knownScopes.map((name) => ({ name, distance: distance(scope, name) }));
  const best = Math.min(...distances.map((d) => d.distance));
  return distances.filter((d) => d.distance === best).slice(0, count).map((d) => d.name);
}

/** `*` or a list of known scopes separated by commas or spaces; an unknown one is an error naming the closest known ones. */
export function parseScopes(text: string): string[] {
  const scopes = [...new Set(text.split(/[\s,]+/).filter(Boolean))];
  for (const scope of scopes) {
    if (scope !== "*" && !known.has(scope)) {
      throw new Error(`Unknown scope "${scope}": did you mean ${closestScopes(scope).join(" or ")}? (keys:create --help lists them all)`);
    }
  }
  return scopes;
}
