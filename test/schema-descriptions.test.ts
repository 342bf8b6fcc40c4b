import { describe, expect, it } from "vitest";
import {
  buildSchema as parseSchema,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isIntrospectionType,
  isObjectType,
  isSpecifiedScalarType,
  type GraphQLSchema,
} from "graphql";
import { readFileSync } from "node:fs";
import { resourceNamed, resources } from "../src/resources/index.ts";
import { relationDescription } from "../src/resources/descriptions.ts";

/**
 * Every place @graphql-eslint's `require-description` asks for a description (types, fields, arguments, input fields,
 * enum values) that has none, as `Type.field(arg)` paths. Built-in scalars and introspection types are GraphQL's own.
 */
function undescribed(schema: GraphQLSchema): string[] {
  const missing: string[] = [];
  const blank = (text: string | null | undefined) => !text || text.trim() === "";
  for (const type of Object.values(schema.getTypeMap())) {
    if (isIntrospectionType(type) || isSpecifiedScalarType(type)) continue;
    if (blank(type.description)) missing.push(type.name);
    if (isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) {
        if (blank(field.description)) missing.push(`${type.name}.${field.name}`);
        for (const arg of "args" in field ? field.args : [])
          if (blank(arg.description)) missing.push(`${type.name}.${field.name}(${arg.name})`);
      }
    }
    if (isEnumType(type))
      for (const value of type.getValues()) if (blank(value.description)) missing.push(`${type.name}.${value.name}`);
  }
  return missing;
}

/**
 * The schema as clients see it: the printed schema/schema.graphql (the schema test keeps it equal to the served
 * schema), so only descriptions that survive printing count.
 */
const published = () => parseSchema(readFileSync(new URL("../schema/schema.graphql", import.meta.url), "utf8"));

describe("schema descriptions", () => {
  it("describes every type, field, argument, input field and enum value of the published schema", () => {
    expect(undescribed(published())).toEqual([]);
  });

  it("finds a field, an argument and a type left without a description (the walk is not blind)", () => {
    const schema = parseSchema(`
      """Root"""
      type Query { """Ranks""" ranks(limit: Int): [Rank!]! }
      type Rank { id: Int! }
      enum Direction { """Up""" ASC DESC }
    `);
    expect(undescribed(schema).sort()).toEqual([
      "Direction",
      "Direction.DESC",
      "Query.ranks(limit)",
      "Rank",
      "Rank.id",
    ]);
    expect(undescribed(parseSchema(`type Query { """Ranks""" ranks: Int }`))).toEqual(["Query"]);
  });

  it("says what a root field does before naming its REST route and scopes", () => {
    const query = published().getQueryType()!.getFields();
    expect(query.ranks.description).toMatch(
      /^The ranks of the account, a page at a time.*\n\nREST: GET \/\{version\}\/ranks \(and POST \/ranks\/search\) — scopes: view:rank$/s,
    );
    const mutation = published().getMutationType()!.getFields();
    expect(mutation.createRank.description).toMatch(
      /^Creates a rank\..*\n\nREST: POST \/\{version\}\/ranks — scopes: create:rank$/s,
    );
  });

  it("takes a column's, a computed field's and a relation's description from the registry", () => {
    const user = published().getType("User");
    if (!isObjectType(user)) throw new Error("User is not an object type");
    const fields = user.getFields();
    expect(fields.rank.description).toBe("The user's current rank; set by their latest rank record.");
    expect(fields.lastRankChangeDate.description).toBe("When the user's latest rank record was created, or null.");
    expect(fields.email.description).toMatch(/email address/);
    expect(fields.primaryAssignmentRecords.description).toBe(
      relationDescription(resourceNamed("user"), resourceNamed("user").relations.primary_assignment_records),
    );
    expect(user.description).toMatch(/member of the organisation/);
  });

  it("types date-valued computed fields as DateTime", () => {
    const schema = published();
    const user = schema.getType("User");
    if (!isObjectType(user)) throw new Error("User is not an object type");
    expect(String(user.getFields().lastRankChangeDate.type)).toBe("DateTime");
    expect(String(user.getFields().lastAssignmentChangeDate.type)).toBe("DateTime");
    // No computed field whose name says it is a date is left a String.
    for (const def of resources) {
      for (const [name, computed] of Object.entries(def.computed ?? {})) {
        if (/(Date|At)$/.test(name)) expect(computed.type, `${def.name}.${name}`).toBe("datetime");
      }
    }
  });
});
