import { validationError } from "../core/errors.ts";

/*
 * `GET /changes`, the change feed over REST: the query string becomes the variables of `restChanges`
 * (src/graphql/changes.ts), and its page becomes `{"data": [...], "meta": {"next_cursor", "has_more"}}`.
 */

/** What the document selects of a feed page. */
export const FEED_SELECTION = "items nextCursor hasMore";

/** A comma-separated list, repeatable (`types=a,b&types=c`); null when absent or empty. */
function listParam(query: URLSearchParams, name: string): string[] | null {
  const values = query
    .getAll(name)
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter(Boolean);
  return values.length ? values : null;
}

/** `after`, `types`, `resources` and `limit` of the query string. */
export function feedVariables(query: URLSearchParams): Record<string, unknown> {
  const limit = query.get("limit");
  const text = limit?.trim() ?? "";
  if (limit !== null && text !== "" && !/^\d{1,9}$/.test(text))
    throw validationError({ limit: ["The limit field must be a positive integer."] });
  return {
    after: query.get("after") || null,
    types: listParam(query, "types"),
    resources: listParam(query, "resources"),
    limit: text === "" ? null : Number(text),
  };
}

export interface FeedResult {
  items: unknown[];
  nextCursor: string | null;
  hasMore: boolean;
}

/** The feed page's body: the events, and where to resume. */
export function feedEnvelope(result: FeedResult): Record<string, unknown> {
  return { data: result.items, meta: { next_cursor: result.nextCursor, has_more: result.hasMore } };
}
