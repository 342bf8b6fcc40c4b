/**
 * W2, the bench's GraphQL workload: 100 users a page, each with 20 rank records, their rank (name, image path) and
 * author (name). Two spellings of the same request, because the service's graph is moving to Relay connections
 * (issue 17): `connection` once schema/schema.graphql has it (users' `rowId`), `list` before. The floor answers both.
 */
import { readFileSync } from "node:fs";

export const w2Documents = {
  /** Relay connections: `first`/`offset`, `nodes`, `rowId`, the record type as an enum. */
  connection:
    "query W2($offset: Int) { users(first: 100, offset: $offset) { nodes { rowId name rankRecords(first: 20) { nodes { rowId type rank { name image { path } } author { name } } } } } }",
  /** Plain lists: `limit`/`page`, every rank record of a user (each is seeded with exactly 20). */
  list: "query W2($page: Int) { users(limit: 100, page: $page) { nodes { id name rankRecords { id type rank { name image { path } } author { name } } } } }",
} as const;

export type W2Shape = keyof typeof w2Documents;

/** The shape the service's printed schema (`schemaFile`) answers: connections once `User.rowId` exists. */
export const w2ShapeOf = (schemaFile: string): W2Shape => (/^\s+rowId\b/m.test(readFileSync(schemaFile, "utf8")) ? "connection" : "list");

/** Variables for page `index` (0-based) of 100 users. */
export const w2Variables = (shape: W2Shape, index: number) => (shape === "connection" ? { offset: 100 * index } : { page: 1 + index });
