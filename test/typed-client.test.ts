import { afterAll, beforeAll, expect, expectTypeOf, test } from "vitest";
import { graphql } from "../src/generated/client/index.ts";
import { CreateRankDocument, CreateUserDocument, PromoteUserDocument, SearchUsersDocument, UserRankRecordsDocument } from "../src/generated/client/graphql.ts";
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
    ranks(sort: [{ field: "order" }]) {
      nodes {
        id
        name
        order
      }
    }
  }
`);

test("typed documents from test/operations: create, promote, read back, search", async () => {
  const { createRank: private_ } = await execute(CreateRankDocument, { input: { name: "Private", abbreviation: "PVT" } });
  const { createRank: sergeant } = await execute(CreateRankDocument, { input: { name: "Sergeant", abbreviation: "SGT" } });
  expectTypeOf(sergeant.id).toEqualTypeOf<number>();
  const { createUser: user } = await execute(CreateUserDocument, { input: { name: "Jane Doe", email: "jane@example.com" } });
  await execute(PromoteUserDocument, { user: user.id, input: { rankId: private_.id, type: 0, text: "Enlisted" } });
  const { createUserRankRecord: promotion } = await execute(PromoteUserDocument, { user: user.id, input: { rankId: sergeant.id, type: 0, text: "Promoted" } });
  expect(promotion.rank?.name).toBe("Sergeant");

  const { userRankRecords } = await execute(UserRankRecordsDocument, { user: user.id, limit: 10 });
  expectTypeOf(userRankRecords.nodes[0]!.rank?.name).toEqualTypeOf<string | undefined>();
  expect(userRankRecords.totalCount).toBe(2);
  expect(userRankRecords.nodes.map((r) => r.rank?.name).sort()).toEqual(["Private", "Sergeant"]);

  const { users } = await execute(SearchUsersDocument, { filters: [{ field: "rank.name", operator: "like", value: "Serg%" }], sort: [{ field: "name" }] });
  expect(users.nodes.map((u) => [u.name, u.rank?.abbreviation])).toEqual([["Jane Doe", "SGT"]]);
});

test("an inline graphql() document is typed too", async () => {
  const { ranks } = await execute(RanksByOrder);
  expectTypeOf(ranks.nodes).items.toHaveProperty("order");
  expect(ranks.nodes.map((r) => r.name)).toEqual(["Private", "Sergeant"]);
  expect(ranks.nodes.map((r) => r.order)).toEqual([1, 2]);
});
