/**
 * W2, the bench's GraphQL workload: a page of 100 users (by id), each with its 20 newest rank records, their rank
 * (name, image path) and author (name), on the service's Relay connections (`type` is the RankRecordType enum).
 * The floor answers this document, known by its text.
 */
export const w2Document =
  "query W2($offset: Int) { users(first: 100, offset: $offset) { nodes { rowId name rankRecords(first: 20) { nodes { rowId type rank { name image { path } } author { name } } } } } }";

/** Variables for page `index` (0-based) of 100 users. */
export const w2Variables = (index: number) => ({ offset: 100 * index });
