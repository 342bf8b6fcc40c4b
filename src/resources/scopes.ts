import { closestNames } from "../core/closest.ts";
import { operations } from "./operations.ts";
import { isPublishableScope } from "./publishable.ts";

/** Lets a key send any GraphQL document to `/graphql` when `GRAPHQL_TRUSTED_DOCUMENTS_ONLY` is on (src/http/trusted-documents.ts). */
export const ARBITRARY_DOCUMENTS_SCOPE = "graphql:arbitrary";

/**
 * Every scope an operation of the registry asks for (`view:rank`, `clear:cache`, ...) and `graphql:arbitrary`, sorted:
 * with `*`, what a key can hold and a role can give.
 */
export const knownScopes: readonly string[] = [
  ...new Set([...operations.flatMap((op) => op.scopes), ARBITRARY_DOCUMENTS_SCOPE]),
]
  // An operation that needs every scope (`POST /sso/rotate`) asks for `*`, which is not a scope of its own.
  .filter((scope) => scope !== "*")
  .sort();

/** Every scope a publishable key may hold (`keys:create --publishable --help` lists them). */
export const publishableScopes: readonly string[] = knownScopes.filter(isPublishableScope);

/** The known scopes nearest to `scope` by edit distance (a typo's likely meaning). */
export const closestScopes = (scope: string): string[] => closestNames(scope, knownScopes);
