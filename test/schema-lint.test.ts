/**
 * Issue 16's done-when: the public schema (what `/graphql` serves and `schema:print` prints) passes @graphql-eslint's
 * schema rules: require-description, relay-connection-types, relay-edge-types, relay-page-info, relay-arguments,
 * naming-convention, no-unreachable-types, strict-id-in-types. ESLint is configured here, in code (no config file),
 * and lints the SDL printed in-process from `buildSchemas().public`, so the test checks the schema the service builds,
 * not a possibly stale file. Every violation is printed (rule, schema coordinate, SDL line, message, the line's text)
 * before the test fails.
 */
import { describe, expect, test } from "vitest";
import { ESLint, type Linter } from "eslint";
import { parse, print } from "graphql";
import graphqlPlugin from "@graphql-eslint/eslint-plugin";
import { buildSchemas, printedSchema } from "../src/graphql/schema.ts";
import { resources } from "../src/resources/index.ts";
import { pascal } from "../src/core/names.ts";

/**
 * Output types that have no identity of their own, so `strict-id-in-types` cannot ask them for `id: ID!`, beyond the
 * suffixes below. Today there are none: every resource type implements Node; the pivot columns of many-to-many links
 * live on `<Parent><Relation>Edge`/`FieldLinkEdge` (suffix Edge) and link mutations answer `<Parent><Relation>LinksPayload`
 * (suffix Payload). Keep this list explicit: a new output type without an id must be added here on purpose, with why.
 */
const typesWithoutIdentity: Record<string, string> = {
  Actor:
    "issue 42: who made a change, a value inside a change event (a key's id, or a person's and an OAuth client's), not an entity of its own",
  FieldOption:
    "issue 41: one choice inside a custom field's `options` JSON column (its label and value), not a row of its own",
  PublicForm:
    "issue 43: a form as an anonymous public page sees it, read by the account's slug and the form's slug or id; not a node (the Form node is what keys read)",
  PublicFormField:
    "issue 43: a field of a public form as its submitters see it, keyed by its `key` within the form; not a node",
  PublicSubmission:
    "issue 43: what an anonymous submitter is told of the submission just made (its row id, its form's message); not a node they may read",
};

/** Suffixes of output types that are wrappers, not entities: Relay connections/edges, mutation payloads, PageInfo. */
const idExceptSuffixes = ["Connection", "Edge", "Payload", "PageInfo"];

/**
 * `relay-edge-types`' `listTypeCanWrapOnlyEdgeType` is kept on (a to-many relation or root list left as a plain list
 * instead of a connection is a violation), but it flags every list-typed field of the schema, including lists the
 * issue's design specifies. These field coordinates may return a list of something other than edges, each for the
 * reason given; any other list-typed output field is reported.
 */
/** JSON columns whose shape (src/resources/json-shapes.ts) is a list: the column's value, not a to-many relation. */
/** The JSON columns the registry shapes as lists (a webhook's events, a field's options, a client's redirect URIs). */
const jsonListColumns = new Set(
  resources.flatMap((def) =>
    Object.entries(def.fields)
      .filter(([, f]) => f.type === "json" && f.shape?.kind === "list" && !f.hidden)
      .map(([key]) => `${pascal(def.name)}.${key}`),
  ),
);

const designedLists: Array<{ allows: (coordinate: string) => boolean; why: string }> = [
  {
    allows: (c) => jsonListColumns.has(c),
    why: "issue 41: a JSON column holding a list (a webhook's events, a field's options) is typed as that list",
  },
  {
    allows: (c) => /^\w+Connection\.nodes$/.test(c),
    why: "issue 16: every connection carries `nodes` beside `edges` (the edges' nodes without cursors)",
  },
  {
    allows: (c) => c === "PublicForm.fields",
    why: "issue 43: a public form shows all its fields at once, in order (a form's own few fields, never paged)",
  },
  {
    allows: (c) => c === "Query.nodes",
    why: "issue 16: root `nodes(ids: [ID!]!)` answers the nodes of the given global ids, in order",
  },
  {
    allows: (c) => /^\w+LinksPayload\.(attached|detached|updated)RowIds$/.test(c),
    why: "issue 16: link mutations answer the row ids they attached, detached, updated",
  },
  {
    // `CreateRanksPayload.ranks`, `UpdateRanksPayload.ranks`, `DeleteRanksPayload.ranks`: a batch payload's field is its plural, lower-camel.
    allows: (c) => {
      const m = /^(?:Create|Update|Delete)(\w+)Payload\.(\w+)$/.exec(c);
      return !!m && m[2] === m[1][0].toLowerCase() + m[1].slice(1);
    },
    why: "issue 16: batch mutations (`createRanks(inputs) { ranks }`, updateRanks, deleteRanks) answer their rows in request order",
  },
];

/**
 * Input fields that Prisma's filter vocabulary (issue 16: `where` is Prisma's vocabulary) names in capitals:
 * the boolean combinators `AND`, `OR`, `NOT` of every `*Where`/`*Filter` input.
 */
const prismaCombinators = "^(AND|OR|NOT)$";

const rules: Linter.RulesRecord = {
  "@graphql-eslint/require-description": [
    "error",
    {
      types: true,
      FieldDefinition: true,
      InputValueDefinition: true,
      EnumValueDefinition: true,
      rootField: true,
    },
  ],
  "@graphql-eslint/relay-connection-types": "error",
  "@graphql-eslint/relay-edge-types": [
    "error",
    { withEdgeSuffix: true, shouldImplementNode: true, listTypeCanWrapOnlyEdgeType: true },
  ],
  "@graphql-eslint/relay-page-info": "error",
  "@graphql-eslint/relay-arguments": ["error", { includeBoth: true }],
  "@graphql-eslint/naming-convention": [
    "error",
    {
      types: "PascalCase",
      FieldDefinition: "camelCase",
      // Arguments of fields are InputValueDefinitions too (the rule's `Argument` kind is for operations' arguments).
      InputValueDefinition: { style: "camelCase", ignorePattern: prismaCombinators },
      // The issue specifies `SortOrder` as `asc | desc` (Prisma's spelling); every other enum value is UPPER_CASE.
      "EnumValueDefinition[parent.name.value!=SortOrder]": "UPPER_CASE",
      "EnumValueDefinition[parent.name.value=SortOrder]": { requiredPattern: /^(asc|desc)$/ },
    },
  ],
  "@graphql-eslint/no-unreachable-types": "error",
  "@graphql-eslint/strict-id-in-types": [
    "error",
    {
      acceptedIdNames: ["id"],
      acceptedIdTypes: ["ID"],
      // (ESLint's option schema refuses an empty `types` array.)
      exceptions: {
        ...(Object.keys(typesWithoutIdentity).length > 0 && { types: Object.keys(typesWithoutIdentity) }),
        suffixes: idExceptSuffixes,
      },
    },
  ],
};

async function lint(sdl: string): Promise<Linter.LintMessage[]> {
  const eslint = new ESLint({
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ["**/*.graphql"],
        languageOptions: { parser: graphqlPlugin.parser, parserOptions: { schemaSdl: sdl } },
        plugins: { "@graphql-eslint": graphqlPlugin as unknown as ESLint.Plugin },
        rules,
      },
    ],
  });
  const [result] = await eslint.lintText(sdl, { filePath: "schema.graphql" });
  return result.messages;
}

interface Violation {
  rule: string;
  coordinate: string;
  line: number;
  column: number;
  message: string;
  text: string;
}

/**
 * The schema coordinate (`Type`, `Type.field`) of a line of printed SDL: the enclosing definition, and the field or
 * input field (two-space indent) at or above the line (a field's arguments and return type may span lines).
 */
function coordinate(lines: string[], line: number): string {
  let field: string | undefined;
  for (let i = line - 1; i >= 0; i--) {
    const text = lines[i];
    const definition = /^(?:type|input|interface|enum|union|scalar|directive @?)\s*(\w+)/.exec(text);
    if (definition) return field ? `${definition[1]}.${field}` : definition[1];
    const member = /^ {2}(\w+)(?:[(:]|$)/.exec(text);
    if (member && !field) field = member[1];
  }
  return field ?? "?";
}

function violations(messages: Linter.LintMessage[], sdl: string): Violation[] {
  const lines = sdl.split("\n");
  return messages
    .map((m) => ({
      rule: (m.ruleId ?? "(parser)").replace("@graphql-eslint/", ""),
      coordinate: coordinate(lines, m.line),
      line: m.line,
      column: m.column,
      message: m.message,
      text: (lines[m.line - 1] ?? "").trim(),
    }))
    .filter(
      (v) =>
        !(
          v.rule === "relay-edge-types" &&
          v.message === "A list type should only wrap an edge type." &&
          designedLists.some((d) => d.allows(v.coordinate))
        ),
    )
    .sort((a, b) => a.rule.localeCompare(b.rule) || a.line - b.line || a.column - b.column);
}

const format = (v: Violation) => `${v.rule}  ${v.coordinate}  ${v.line}:${v.column}  ${v.message}  | ${v.text}`;

const sdl = printedSchema(buildSchemas().public);

describe("schema lint (@graphql-eslint schema rules)", () => {
  test("the configuration is live: a schema breaking each rule is reported by each rule, at the offending place", async () => {
    const badSource = [
      '"""q"""',
      "type Query {",
      '  """t"""',
      "  things(first: Int): ThingConnection!",
      "  Thing_s: Int",
      "  broken: BrokenConnection",
      "  colors: [Color!]!",
      "  order: SortOrder",
      "  filter(where: ThingWhere): Int",
      "  createThing: CreateThingPayload",
      "}",
      "type BrokenConnection { total: Int }",
      "type ThingConnection { edges: [ThingEdge!]! pageInfo: PageInfo! }",
      "type ThingEdge { node: Thing! cursor: String! }",
      "type Thing { name: String }",
      "type PageInfo { hasNextPage: Boolean! hasPreviousPage: Boolean! startCursor: String }",
      "enum Color { red }",
      "enum SortOrder { asc desc up }",
      "input ThingWhere { AND: [ThingWhere!] OR: [ThingWhere!] NOT: ThingWhere name_is: String }",
      "type Orphan { id: ID! }",
      '"""p"""',
      'type CreateThingPayload { """l""" things: [Thing!]! }',
    ].join("\n");
    const bad = print(parse(badSource)); // one definition member a line, as printed SDL is
    const found = violations(await lint(bad), bad);
    const has = (rule: string, coordinate: string) =>
      expect(
        found.some((v) => v.rule === rule && v.coordinate === coordinate),
        `${rule} at ${coordinate}\n${found.map(format).join("\n")}`,
      ).toBe(true);
    has("require-description", "Thing");
    has("require-description", "Query.things");
    has("relay-connection-types", "BrokenConnection");
    has("relay-edge-types", "ThingEdge");
    has("relay-edge-types", "Query.colors");
    has("relay-edge-types", "CreateThingPayload.things"); // a single create's payload answers no list
    has("relay-page-info", "PageInfo");
    has("relay-arguments", "Query.things");
    has("naming-convention", "Query.Thing_s");
    has("naming-convention", "Color.red");
    has("naming-convention", "SortOrder.up");
    has("naming-convention", "ThingWhere.name_is");
    has("no-unreachable-types", "Orphan");
    has("strict-id-in-types", "Thing");
    // What the configuration allows: SortOrder's asc/desc, Prisma's AND/OR/NOT, a connection's `nodes`.
    expect(
      found.filter(
        (v) =>
          v.rule === "naming-convention" && /^(SortOrder\.(asc|desc)|ThingWhere\.(AND|OR|NOT))$/.test(v.coordinate),
      ),
    ).toEqual([]);
  });

  test("the public schema has no violations", async () => {
    const found = violations(await lint(sdl), sdl);
    if (found.length > 0) {
      const byRule = new Map<string, number>();
      for (const v of found) byRule.set(v.rule, (byRule.get(v.rule) ?? 0) + 1);
      console.log(
        `${found.length} schema lint violation(s) (${[...byRule].map(([r, n]) => `${r}: ${n}`).join(", ")}):\n${found.map(format).join("\n")}`,
      );
    }
    expect(found.map(format)).toEqual([]);
  });
});
