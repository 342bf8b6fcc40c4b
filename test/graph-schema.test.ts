import { describe, expect, test } from "vitest";
import {
  getNamedType,
  getNullableType,
  isEnumType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLField,
  type GraphQLInputObjectType,
  type GraphQLObjectType,
} from "graphql";
import { buildSchemas } from "../src/graphql/schema.ts";
import { resources } from "../src/resources/index.ts";
import { operations } from "../src/resources/operations.ts";
import { relationField } from "../src/resources/define.ts";
import { camel, pascal } from "../src/core/names.ts";

/**
 * The public graph's shape, checked against the registry (issue 16 items 1, 3 and 4): every resource a Relay node,
 * every to-many relation a connection with the same arguments, every key with its relation, every closed set an
 * enum, every date a DateTime, and nothing of the REST facade's internal fields.
 */
const schema = buildSchemas().public;
const typeOf = (name: string) => schema.getType(name) as GraphQLObjectType;
const named = (field: GraphQLField<unknown, unknown>) => getNamedType(field.type).name;
const connectionArgs = ["after", "before", "first", "last", "offset", "orderBy", "where"];
const nodeResources = resources.filter((r) => !r.link);

describe("every resource is a Relay node", () => {
  test.each(nodeResources.map((r) => [pascal(r.name), r] as const))(
    "%s implements Node with a global id and its rowId",
    (name) => {
      const type = typeOf(name);
      expect(type.getInterfaces().map((i) => i.name)).toContain("Node");
      expect(String(type.getFields().id.type)).toBe("ID!");
      expect(String(type.getFields().rowId.type)).toBe("Int!");
    },
  );

  test("node, nodes and me are root fields; each resource with a REST list has a connection and a rowId lookup", () => {
    const query = schema.getQueryType()!.getFields();
    expect(isInterfaceType(getNamedType(query.node.type))).toBe(true);
    expect(String(query.nodes.args[0].type)).toBe("[ID!]!");
    expect(named(query.me)).toBe("User");
    for (const def of nodeResources) {
      if (operations.some((op) => op.def === def && op.kind === "list" && !op.parent && !op.view)) {
        expect(named(query[def.plural]), def.plural).toBe(`${pascal(def.name)}Connection`);
        expect(query[def.plural].args.map((a) => a.name).sort()).toEqual(connectionArgs);
      }
      if (operations.some((op) => op.def === def && op.kind === "show" && !op.parent && !op.view)) {
        expect(query[def.name].args.map((a) => `${a.name}: ${a.type}`)).toEqual(["rowId: Int!"]);
      }
    }
  });
});

describe("relations", () => {
  for (const def of nodeResources) {
    const type = typeOf(pascal(def.name));
    for (const [key, rel] of Object.entries(def.relations)) {
      if (rel.kind !== "hasMany" && rel.kind !== "belongsToMany" && rel.kind !== "morphMany") continue;
      const name = rel.kind === "belongsToMany" && !rel.filter ? camel(key) : relationField(rel);
      test(`${type.name}.${name} is a connection with first/after/last/before/offset/where/orderBy`, () => {
        const field = type.getFields()[name];
        expect(field, `${type.name}.${name}`).toBeDefined();
        expect(named(field)).toMatch(/Connection$/);
        expect(field.args.map((a) => a.name).sort()).toEqual(connectionArgs);
        const connection = getNamedType(field.type) as GraphQLObjectType;
        expect(Object.keys(connection.getFields()).sort()).toEqual(["edges", "nodes", "pageInfo", "totalCount"]);
        if (rel.kind === "belongsToMany") {
          const edge = getNamedType(connection.getFields().edges.type) as GraphQLObjectType;
          for (const column of Object.keys(rel.pivot.fields))
            expect(Object.keys(edge.getFields()), `${edge.name}.${column}`).toContain(column);
        }
      });
    }
    test(`${type.name}: every key column has its relation field`, () => {
      for (const [key, f] of Object.entries(def.fields)) {
        if (f.hidden || !(f.references || f.morphType) || !key.endsWith("Id")) continue;
        const field = type.getFields()[key.slice(0, -2)];
        expect(field, `${type.name}.${key.slice(0, -2)}`).toBeDefined();
        expect(isObjectType(getNamedType(field.type)) || isInterfaceType(getNamedType(field.type))).toBe(true);
      }
    });
  }
});

describe("types that explain themselves", () => {
  test("every closed set of the registry is an enum, with REST's wire values inside", () => {
    let checked = 0;
    for (const def of nodeResources) {
      for (const [key, f] of Object.entries(def.fields)) {
        if (f.hidden || !f.oneOf) continue;
        const field = typeOf(pascal(def.name)).getFields()[key];
        const type = getNamedType(field.type);
        expect(isEnumType(type), `${def.name}.${key}`).toBe(true);
        if (isEnumType(type))
          expect(
            type
              .getValues()
              .map((v) => v.value)
              .sort(),
          ).toEqual([...f.oneOf].sort());
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(5);
  });

  test("every date column and computed date is a DateTime", () => {
    for (const def of nodeResources) {
      const fields = typeOf(pascal(def.name)).getFields();
      for (const [key, f] of [...Object.entries(def.fields), ...Object.entries(def.computed ?? {})]) {
        if ((f as { hidden?: boolean }).hidden || f.type !== "datetime") continue;
        expect(named(fields[key]), `${def.name}.${key}`).toBe("DateTime");
      }
    }
  });

  test("create inputs require what the registry requires; patches require nothing", () => {
    const rank = schema.getType("CreateRankInput") as GraphQLInputObjectType;
    expect(isNonNullType(rank.getFields().name.type)).toBe(true);
    for (const patch of Object.values(schema.getTypeMap()).filter((t) => t.name.endsWith("Patch"))) {
      for (const f of Object.values((patch as GraphQLInputObjectType).getFields()))
        expect(isNonNullType(f.type), `${patch.name}.${f.name}`).toBe(false);
    }
  });
});

test("nothing of the REST facade's internal graph is public", () => {
  const roots = [schema.getQueryType()!, schema.getMutationType()!].flatMap((t) => Object.keys(t.getFields()));
  expect(roots.filter((n) => n.startsWith("rest"))).toEqual([]);
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith("__")) continue;
    const fields = Object.keys(type.getFields());
    expect(fields, type.name).not.toContain("attributes");
    expect(
      fields.filter((f) => /List$/.test(f) && isListType(getNullableType(type.getFields()[f].type))),
      type.name,
    ).toEqual([]);
  }
});
