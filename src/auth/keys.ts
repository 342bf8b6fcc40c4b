import { ARBITRARY_DOCUMENTS_SCOPE, closestScopes, knownScopes } from "../resources/scopes.ts";

export { ARBITRARY_DOCUMENTS_SCOPE, knownScopes };

export {
  API_KEY_PREFIX,
  PUBLISHABLE_KEY_PREFIX,
  generateKey,
  hashKey,
  isPublishableKey,
} from "../core/api-key-text.ts";

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
