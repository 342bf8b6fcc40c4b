import { afterAll, beforeAll, expect, expectTypeOf, test } from "vitest";
import { graphql } from "../src/generated/client/index.ts";
import {
  CreateRankDocument,
  CreateUserDocument,
  PromoteUserDocument,
  SearchUsersDocument,
  UserRankRecordsDocument,
} from "../src/generated/client/graphql.ts";
import type { TypedDocumentString } from "../src/generated/client/graphql.ts";
import { startHarness, type Harness } from "./harness.ts";

/**
 * The typed client of the README: documents from test/operations/*.graphql and inline `graphql()` calls,
 * typed by the client preset (`npm run generate`, and `pretest`), sent through yoga.fetch.
 */
let h: Harness;
let key: string;

beforeAll(async () => {
  h = await startHarness();
  key = await h.key("typed");
});
afterAll(() => h.close());

/**
 * Sends a typed document; the result is typed by the document, the variables checked against it. Root fields are
 * nullable (a failing one is null beside an error, and throws here; a missing row is null): these documents read
 * rows they just wrote, so a null is a failure too.
 */
async function execute<R, V>(
  document: TypedDocumentString<R, V>,
  ...[variables]: V extends Record<string, never> ? [] : [V]
): Promise<{ [K in keyof R]: NonNullable<R[K]> }> {
  const response = await h.app.yoga.fetch("http://muster.test/graphql", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ query: document.toString(), variables }),
  });
  const body = (await response.json()) as { data?: R; errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  for (const [field, value] of Object.entries(body.data ?? {})) if (value === null) throw new Error(`${field} is null`);
  return body.data as { [K in keyof R]: NonNullable<R[K]> };
}

const RanksByOrder = graphql(`
  query RanksByOrder {
    ranks(orderBy: [{ order: asc }]) {
      nodes {
        id
        rowId
        name
        order
      }
    }
  }
`);

test("typed documents from test/operations: create, promote, read back by cursor, search", async () => {
  const {
    createRank: { rank: private_ },
  } = await execute(CreateRankDocument, { input: { name: "Private", abbreviation: "PVT" } });
  const {
    createRank: { rank: sergeant },
  } = await execute(CreateRankDocument, { input: { name: "Sergeant", abbreviation: "SGT" } });
  expectTypeOf(sergeant!.rowId).toEqualTypeOf<number>();
  expectTypeOf(sergeant!.id).toEqualTypeOf<string>();
  const {
    createUser: { user },
  } = await execute(CreateUserDocument, { input: { name: "Jane Doe", email: "jane@example.com" } });
  await execute(PromoteUserDocument, { user: user!.rowId, rank: private_!.rowId, text: "Enlisted" });
  const {
    createRankRecord: { rankRecord: promotion },
  } = await execute(PromoteUserDocument, { user: user!.rowId, rank: sergeant!.rowId, text: "Promoted" });
  expectTypeOf(promotion!.type).toEqualTypeOf<"DEMOTION" | "LATERAL" | "PROMOTION" | "TRANSFER">();
  expect(promotion!.type).toBe("PROMOTION");
  expect(promotion!.rank?.name).toBe("Sergeant");
  // A promotion sets the user's rank.
  expect(promotion!.user?.rank?.name).toBe("Sergeant");

  // Two pages of one, walked by cursor.
  const { user: first } = await execute(UserRankRecordsDocument, { user: user!.rowId, first: 1 });
  expectTypeOf(first.rankRecords!.nodes[0].rank?.name).toEqualTypeOf<string | undefined>();
  expect(first.rowId).toBe(user!.rowId);
  expect(first.id).toBe(user!.id);
  expect(first.rankRecords!.totalCount).toBe(2);
  expect(first.rankRecords!.pageInfo.hasNextPage).toBe(true);
  const { user: second } = await execute(UserRankRecordsDocument, {
    user: user!.rowId,
    first: 1,
    after: first.rankRecords!.pageInfo.endCursor,
  });
  expect(second.rankRecords!.pageInfo.hasNextPage).toBe(false);
  const records = [...first.rankRecords!.nodes, ...second.rankRecords!.nodes];
  expect(records.map((r) => r.rank?.name).sort()).toEqual(["Private", "Sergeant"]);
  expect(records.map((r) => r.text).sort()).toEqual(["Enlisted", "Promoted"]);
  expect(new Set(records.map((r) => r.rowId)).size).toBe(2);

  const { users } = await execute(SearchUsersDocument, {
    where: { rank: { is: { name: { startsWith: "Serg" } } } },
    orderBy: [{ name: "asc" }],
    first: 10,
  });
  expect(users.totalCount).toBe(1);
  expect(users.nodes.map((u) => [u.name, u.rank?.abbreviation])).toEqual([["Jane Doe", "SGT"]]);
});

test("an inline graphql() document is typed too", async () => {
  const { ranks } = await execute(RanksByOrder);
  expectTypeOf(ranks.nodes).items.toHaveProperty("order");
  expect(ranks.nodes.map((r) => r.name)).toEqual(["Private", "Sergeant"]);
  expect(ranks.nodes.map((r) => r.order)).toEqual([1, 2]);
});
