/**
 * W2, the bench's GraphQL workload: a page of 100 users (by id), each with its 20 newest rank records, their rank
 * (name, image path) and author (name), on the service's Relay connections (`type` is the RankRecordType enum).
 * The floor answers this document, known by its text.
 */
export const w2Document =
  "query W2($offset: Int) { users(first: 100, offset: $offset) { nodes { rowId name rankRecords(first: 20) { nodes { rowId type rank { name image { path } } author { name } } } } } }";

/** Variables for page `index` (0-based) of 100 users. */
export const w2Variables = (index: number) => ({ offset: 100 * index });

/**
 * W2c: W2 paged by cursor (`first: 100, after: $cursor`) instead of by offset, with the page's `pageInfo`, as a client
 * walking the roster page by page asks for it.
 */
export const w2cDocument =
  "query W2c($after: String) { users(first: 100, after: $after) { pageInfo { endCursor hasNextPage } nodes { rowId name rankRecords(first: 20) { nodes { rowId type rank { name image { path } } author { name } } } } } }";

/** The service's Relay cursor of a user in `users` (by id): base64url of `[id]` (src/graphql/connections.ts). */
export const userCursor = (id: number) => Buffer.from(JSON.stringify([id])).toString("base64url");

/** The user id a cursor of `userCursor`'s names. */
export const cursorUserId = (cursor: string) =>
  (JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as [number])[0];

/** Variables for the page after user `afterId` (null: the first page). */
export const w2cVariables = (afterId: number | null) => ({ after: afterId === null ? null : userCursor(afterId) });
