/**
 * `attributes`, the one JSON field REST documents select per row, must say exactly what the row's own typed GraphQL
 * fields say (under snake_case keys): checked on a seeded row of every listed resource and on every object its
 * relation fields return, link rows included. The field is in the internal schema only (the one REST documents run
 * on), so these documents run there, through the app's enveloped pipeline as REST's do.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import {
  getNamedType,
  isEnumType,
  isLeafType,
  isObjectType,
  parse,
  type ExecutionResult,
  type GraphQLField,
  type GraphQLObjectType,
} from "graphql";
import { startHarness, type Harness } from "./harness.ts";
import { World } from "./support/world.ts";
import { operations } from "../src/resources/operations.ts";
import { restRootField, snake } from "../src/core/names.ts";

let h: Harness;
let w: World;

beforeAll(async () => {
  h = await startHarness({ rateLimitPerMinute: 1_000_000_000 } as object);
  w = await new World(h, "alpha", "attrmark").seed();
}, 120_000);
afterAll(() => h.close());

/** Runs `query` on the internal schema with a `*` key, as the REST plugin runs its prepared documents. */
async function internal<T = { result: { nodes: unknown[] } }>(query: string): Promise<ExecutionResult<T>> {
  const request = new Request("http://muster.test/internal", {
    headers: { authorization: `Bearer ${await w.key("*")}` },
  });
  const { contextFactory, execute } = h.app.yoga.getEnveloped({ request });
  return (await execute({
    schema: h.app.restSchema,
    document: parse(query),
    contextValue: await contextFactory(),
  })) as ExecutionResult<T>;
}

/** A row of the internal graph with its `attributes`. */
type Attributed = { attributes: Record<string, unknown> };

const noRequiredArgs = (f: GraphQLField<unknown, unknown>) => !f.args.some((a) => a.type.toString().endsWith("!"));
/** A JSON column typed by its shape as objects (`Field.options`: `FieldOption`): a value of leaves, not a row. */
const isValueObject = (type: unknown): type is GraphQLObjectType =>
  isObjectType(type) &&
  !("attributes" in type.getFields()) &&
  Object.values(type.getFields()).every((f) => isLeafType(getNamedType(f.type)));
/** Typed leaves, but a node's global `id`: there REST's `id` is the row id, `rowId` (link rows have only their `id`). */
const leavesOf = (type: GraphQLObjectType) => {
  const globalId = "rowId" in type.getFields();
  return Object.values(type.getFields())
    .filter(
      (f) =>
        f.name !== "attributes" &&
        !(globalId && f.name === "id") &&
        (isLeafType(getNamedType(f.type)) || isValueObject(getNamedType(f.type))) &&
        noRequiredArgs(f),
    )
    .map((f) => f.name);
};
/** A leaf's selection: its name, with the value object's own leaves where it is one. */
const selectionOf = (type: GraphQLObjectType, field: string) => {
  const named = getNamedType(type.getFields()[field].type);
  return isValueObject(named) ? `${field} { ${Object.keys(named.getFields()).join(" ")} }` : field;
};
const restKey = (field: string) => (field === "rowId" ? "id" : snake(field));
/** A typed leaf as REST writes it: an enum value by its wire value (`PROMOTION` is 0, `PRIMARY` is "primary"). */
function restValue(type: GraphQLObjectType, field: string, value: unknown): unknown {
  const named = getNamedType(type.getFields()[field].type);
  if (!isEnumType(named) || value == null) return value;
  if (Array.isArray(value)) return value.map((v) => restValue(type, field, v));
  const known = named.getValue(value as string);
  expect(known, `${type.name}.${field}: ${String(value)} is a value of ${named.name}`).toBeDefined();
  return known!.value;
}
/** Relation fields returning rows (which have `attributes`): to-one relations and the internal `*List` fields REST includes read. */
const relationsOf = (type: GraphQLObjectType) =>
  Object.values(type.getFields())
    .map((f) => [f, getNamedType(f.type)] as const)
    .filter(([f, related]) => isObjectType(related) && "attributes" in related.getFields() && noRequiredArgs(f))
    .map(([f, related]) => [f.name, related as GraphQLObjectType] as const);

/** Every object in `value` (one or a list) compared with its typed leaves; returns how many were compared. */
function compare(type: GraphQLObjectType, value: unknown, where: string): number {
  if (value == null) return 0;
  if (Array.isArray(value))
    return value.reduce((n: number, v: unknown, i: number) => n + compare(type, v, `${where}.${i}`), 0);
  const object = value as Record<string, unknown>;
  const typed = Object.fromEntries(leavesOf(type).map((f) => [restKey(f), restValue(type, f, object[f])]));
  expect(object.attributes, `${where} (${type.name})`).toEqual(typed);
  return (
    1 + relationsOf(type).reduce((n, [name, related]) => n + compare(related, object[name], `${where}.${name}`), 0)
  );
}

test("attributes equal the row's own fields on every listed resource and on the objects its relations return", async () => {
  const query = h.app.restSchema.getQueryType()!.getFields();
  let compared = 0;
  const lists = operations.filter((op) => op.kind === "list" && !op.parent && !op.view);
  expect(lists.length).toBeGreaterThan(20);
  for (const op of lists) {
    const field = restRootField(op.field);
    const page = getNamedType(query[field].type) as GraphQLObjectType;
    const row = getNamedType(page.getFields().nodes.type) as GraphQLObjectType;
    const select = (type: GraphQLObjectType, depth: number): string =>
      `{ attributes ${leavesOf(type)
        .map((f) => selectionOf(type, f))
        .join(" ")} ${
        depth
          ? relationsOf(type)
              .map(([name, related]) => `${name} ${select(related, depth - 1)}`)
              .join(" ")
          : ""
      } }`;
    const reply = await internal(`{ result: ${field}(limit: 100) { nodes ${select(row, 1)} } }`);
    expect(reply.errors ?? [], field).toEqual([]);
    const nodes = reply.data!.result.nodes;
    expect(nodes.length, `${field}: the world seeded a row`).toBeGreaterThan(0);
    compared += compare(row, nodes, field);
  }
  // Dates, booleans, JSON and computed values (URLs, batched latest-record dates) all went through the comparison.
  expect(compared).toBeGreaterThan(100);
});

test("REST rows are the attributes object, with the included relations added after them", async () => {
  const api = await w.client("*");
  const user = w.row(operations.find((op) => op.field === "users")!.def);
  const rest = (await api.get(`/v2/users/${user.id}?include=rank`)).body.data;
  const gql = (
    await internal<{ result: Attributed & { rank: Attributed | null } }>(
      `{ result: ${restRootField("user")}(user: ${user.id}) { attributes rank { attributes } } }`,
    )
  ).data!.result;
  expect(Object.keys(rest)).toEqual([...Object.keys(gql.attributes), "rank"]);
  expect(rest).toEqual({ ...gql.attributes, rank: gql.rank && gql.rank.attributes });
});
