/**
 * Nothing internal in the public schema: `attributes` (the JSON object of a row's columns that REST documents select)
 * is in the internal schema REST runs on, not in the one `/graphql` serves, introspects and prints. REST answers as
 * before: checked against a snapshot taken through the typed fields.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { getNamedType, isObjectType } from "graphql";
import { startHarness, type Client, type Harness } from "./harness.ts";
import { World } from "./support/world.ts";
import { resourceNamed } from "../src/resources/index.ts";
import { snake } from "../src/core/names.ts";
import { printedSchema } from "../src/graphql/schema.ts";
import { readFileSync } from "node:fs";

let h: Harness;
let w: World;
let api: Client;

beforeAll(async () => {
  h = await startHarness({ rateLimitPerMinute: 1_000_000_000 } as object);
  w = await new World(h, "alpha", "internalmark").seed();
  api = await w.client("*");
}, 120_000);
afterAll(() => h.close());

const typesWithAttributes = (types: Array<{ name: string; fields: Array<{ name: string }> | null }>) =>
  types.filter((t) => t.fields?.some((f) => f.name === "attributes")).map((t) => t.name);

describe("the public schema", () => {
  test("introspection of /graphql shows no `attributes` field on any type; the internal schema has it on every resource", async () => {
    const reply = await api.graphql("{ __schema { types { name fields { name } } } }");
    expect(reply.body.errors).toBeUndefined();
    const types = reply.body.data.__schema.types;
    expect(types.length).toBeGreaterThan(100);
    expect(typesWithAttributes(types)).toEqual([]);
    const internal = Object.values(h.app.restSchema.getTypeMap())
      .filter(isObjectType)
      .map((t) => ({ name: t.name, fields: Object.values(t.getFields()) }));
    expect(typesWithAttributes(internal)).toContain("Rank");
    expect(typesWithAttributes(internal).length).toBeGreaterThan(40);
  });

  test("the printed schema (schema/schema.graphql) has no `attributes` field", () => {
    expect(printedSchema(h.app.schema)).not.toMatch(/^\s+attributes\b/m);
    expect(readFileSync("schema/schema.graphql", "utf8")).not.toMatch(/^\s+attributes\b/m);
  });

  test("a query selecting `attributes` on /graphql is a validation error (unknown field), before anything runs", async () => {
    const reply = await api.graphql("{ ranks { nodes { attributes } } }");
    expect(reply.body.data).toBeUndefined();
    expect(reply.body.errors).toHaveLength(1);
    expect(reply.body.errors[0].message).toBe('Cannot query field "attributes" on type "Rank".');
    expect(reply.body.errors[0].extensions.code).toBe("GRAPHQL_VALIDATION_FAILED");
  });
});

describe("REST, on the internal schema", () => {
  test("a REST row with an include equals a snapshot of the same row taken through /graphql's typed fields", async () => {
    const user = w.row(resourceNamed("user"));
    const leaves = (typeName: string) => {
      const type = h.app.schema.getType(typeName);
      if (!isObjectType(type)) throw new Error(`${typeName} is not an object type`);
      return Object.values(type.getFields())
        .filter((f) => !isObjectType(getNamedType(f.type)) && !f.args.length)
        .map((f) => f.name);
    };
    const userLeaves = leaves("User").filter((f) => f !== "__typename");
    const rankLeaves = leaves("Rank");
    const typed = await api.graphql(
      `query ($id: Int!) { user(rowId: $id) { ${userLeaves.join(" ")} rank { ${rankLeaves.join(" ")} } } }`,
      { id: user.id },
    );
    expect(typed.body.errors).toBeUndefined();
    // REST's `id` is the row id (`rowId`); the global `id` is GraphQL's own.
    const snakeKeys = (row: Record<string, unknown>, names: string[]) =>
      Object.fromEntries(names.filter((n) => n !== "id").map((n) => [n === "rowId" ? "id" : snake(n), row[n]]));
    const { rank, ...own } = typed.body.data.user;
    expect(rank, "the seeded user has a rank").not.toBeNull();
    const snapshot = { ...snakeKeys(own, userLeaves), rank: snakeKeys(rank, rankLeaves) };

    const rest = await api.get(`/v2/users/${user.id}?include=rank`);
    expect(rest.status).toBe(200);
    expect(rest.body.data).toStrictEqual(snapshot);
    // Same keys, same order as the typed fields' snake_case names, `rank` last.
    expect(Object.keys(rest.body.data).sort()).toEqual(Object.keys(snapshot).sort());
    expect(Object.keys(rest.body.data).at(-1)).toBe("rank");
  });
});
