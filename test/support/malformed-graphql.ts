/**
 * fast-check recipes for malformed `/graphql` requests (issue 14's categories there): list literals
 * and input objects nested 2,000+ levels in the document, variables and bodies nested 5,000+ levels,
 * bodies over the cap, bytes that are not UTF-8, text/plain, prototype names, extreme numbers.
 * Each recipe becomes a `Sent` (test/support/malformed.ts) for the judge of test/bad-input.test.ts.
 */
import fc from "fast-check";
import { EXTREME_NUMBERS, INVALID_UTF8, PLAIN_TYPES, PROTOTYPE_NAMES, type Sent } from "./malformed.ts";

export type GraphqlRecipe =
  | { t: "deepList"; depth: number }
  | { t: "deepInput"; depth: number }
  | { t: "deepVariables"; depth: number; mutation: boolean }
  | { t: "deepBody"; depth: number; shape: "array" | "object" }
  | { t: "oversize"; chunked: boolean; where: "query" | "variables" }
  | { t: "invalidUtf8"; bytes: number }
  | { t: "plain"; type: string; mutation: boolean }
  | { t: "protoName"; name: string; where: "operationName" | "variableKey" | "sortField" | "filterField" }
  | { t: "extreme"; literal: string; where: "literal" | "variable" };

const LIST = "query Q { ranks(limit: 1) { totalCount } }";
const CREATE = "mutation M($input: RankInput!) { createRank(input: $input) { id } }";

export const graphqlRecipe: fc.Arbitrary<GraphqlRecipe> = fc.oneof(
  fc.record({ t: fc.constant("deepList" as const), depth: fc.integer({ min: 2_000, max: 4_000 }) }),
  fc.record({ t: fc.constant("deepInput" as const), depth: fc.integer({ min: 2_000, max: 4_000 }) }),
  fc.record({
    t: fc.constant("deepVariables" as const),
    depth: fc.integer({ min: 5_000, max: 20_000 }),
    mutation: fc.boolean(),
  }),
  fc.record({
    t: fc.constant("deepBody" as const),
    depth: fc.integer({ min: 5_000, max: 20_000 }),
    shape: fc.constantFrom("array" as const, "object" as const),
  }),
  fc.record({
    t: fc.constant("oversize" as const),
    chunked: fc.boolean(),
    where: fc.constantFrom("query" as const, "variables" as const),
  }),
  fc.record({ t: fc.constant("invalidUtf8" as const), bytes: fc.nat({ max: INVALID_UTF8.length - 1 }) }),
  fc.record({ t: fc.constant("plain" as const), type: fc.constantFrom(...PLAIN_TYPES), mutation: fc.boolean() }),
  fc.record({
    t: fc.constant("protoName" as const),
    name: fc.constantFrom(...PROTOTYPE_NAMES),
    where: fc.constantFrom(
      "operationName" as const,
      "variableKey" as const,
      "sortField" as const,
      "filterField" as const,
    ),
  }),
  fc.record({
    t: fc.constant("extreme" as const),
    literal: fc.constantFrom(...EXTREME_NUMBERS),
    where: fc.constantFrom("literal" as const, "variable" as const),
  }),
);

/** One of each kind, tried before the generated ones. */
export const GRAPHQL_EXAMPLES: GraphqlRecipe[] = [
  { t: "deepList", depth: 2_000 },
  { t: "deepInput", depth: 2_000 },
  { t: "deepVariables", depth: 5_000, mutation: true },
  { t: "deepBody", depth: 5_000, shape: "array" },
  { t: "oversize", chunked: false, where: "variables" },
  { t: "invalidUtf8", bytes: 0 },
  { t: "plain", type: "text/plain", mutation: true },
  { t: "protoName", name: "constructor", where: "operationName" },
  { t: "protoName", name: "__proto__", where: "sortField" },
  { t: "extreme", literal: "9223372036854775808", where: "literal" },
];

const json = (value: unknown) => JSON.stringify(value);
const jsonHeaders = { "content-type": "application/json" };

/** Whether a literal is an Int GraphQL takes (a 32-bit integer, `-0` included). */
const isInt32 = (literal: string) => /^-?\d+$/.test(literal) && Math.abs(Number(literal)) <= 2147483647;

/** The request a recipe makes: always `POST /graphql`. */
export function graphqlRequest(recipe: GraphqlRecipe, bodyMaxBytes: number): Sent {
  const post = (over: Partial<Sent> & { recipe: string }): Sent => ({
    method: "POST",
    url: "/graphql",
    headers: jsonHeaders,
    mustReject: false,
    ...over,
  });
  switch (recipe.t) {
    case "deepList": {
      const d = recipe.depth;
      const query = `query Q { ranks(limit: ${"[".repeat(d)}1${"]".repeat(d)}) { totalCount } }`;
      return post({ recipe: `list literal nested ${d} levels`, body: json({ query }), mustReject: true });
    }
    case "deepInput": {
      const d = recipe.depth;
      const query = `query Q { ranks(filters: [${"{nested: [".repeat(d)}{field: "id", operator: ">", value: 0}${"]}".repeat(d)}]) { totalCount } }`;
      return post({ recipe: `input objects nested ${d} levels`, body: json({ query }), mustReject: true });
    }
    case "deepVariables": {
      const d = recipe.depth;
      if (recipe.mutation) {
        const name = `${"[".repeat(d)}"x"${"]".repeat(d)}`;
        return post({
          recipe: `createRank with a name nested ${d} levels`,
          body: `{"query":${json(CREATE)},"variables":{"input":{"name":${name}}}}`,
          mustReject: true,
        });
      }
      const filters = `[${'{"nested":['.repeat(d)}{"field":"id","operator":">","value":0}${"]}".repeat(d)}]`;
      const query = "query Q($f: [FilterInput!]) { ranks(filters: $f) { totalCount } }";
      return post({
        recipe: `filters variable nested ${d} levels`,
        body: `{"query":${json(query)},"variables":{"f":${filters}}}`,
        mustReject: true,
      });
    }
    case "deepBody": {
      const d = recipe.depth;
      const deep =
        recipe.shape === "array" ? `${"[".repeat(d)}1${"]".repeat(d)}` : `${'{"a":'.repeat(d)}1${"}".repeat(d)}`;
      return post({
        recipe: `extensions nested ${d} levels (${recipe.shape})`,
        body: `{"query":${json(LIST)},"extensions":{"x":${deep}}}`,
        mustReject: true,
      });
    }
    case "oversize": {
      const size = Math.max(3 * 1024 * 1024, bodyMaxBytes + 1024);
      const padding = "x".repeat(size);
      const body =
        recipe.where === "query"
          ? json({ query: `${LIST} # ${padding}` })
          : json({ query: CREATE, variables: { input: { name: "Oversized", description: padding } } });
      return post({
        recipe: `${(size / 1024 / 1024).toFixed(1)} MB body (padding in the ${recipe.where})${recipe.chunked ? ", chunked" : ""}`,
        body,
        chunked: recipe.chunked,
        mustReject: true,
        expect: { status: 413, because: `a body over the body cap (${bodyMaxBytes} bytes)` },
      });
    }
    case "invalidUtf8": {
      const bad = INVALID_UTF8[recipe.bytes % INVALID_UTF8.length];
      const [before, after] = json({ query: CREATE, variables: { input: { name: "@@bad@@" } } }).split("@@bad@@") as [
        string,
        string,
      ];
      const hex = bad.map((b) => b.toString(16).padStart(2, "0")).join(" ");
      return post({
        recipe: `bytes ${hex} (not UTF-8) in a variable`,
        body: new Uint8Array(Buffer.concat([Buffer.from(`${before}a`), Buffer.from(bad), Buffer.from(`b${after}`)])),
        mustReject: true,
        expect: { status: 400, because: "a JSON body that is not UTF-8" },
      });
    }
    case "plain": {
      const body = recipe.mutation
        ? json({ query: CREATE, variables: { input: { name: "Sent as text" } } })
        : json({ query: LIST });
      return post({
        recipe: `${recipe.mutation ? "mutation" : "query"} sent as "${recipe.type}"`,
        headers: { "content-type": recipe.type },
        body,
        mustReject: true,
        expect: { status: 415, because: "a POST whose body is text/plain" },
      });
    }
    case "protoName": {
      const name = recipe.name;
      switch (recipe.where) {
        case "operationName":
          return post({
            recipe: `operationName ${name}`,
            body: json({ query: LIST, operationName: name }),
            mustReject: true,
          });
        case "variableKey":
          return post({
            recipe: `variables with a key ${name}`,
            body: `{"query":${json(LIST)},"variables":{${json(name)}:{"polluted":"yes"}}}`,
          });
        case "sortField":
          return post({
            recipe: `sort field ${name}`,
            body: json({ query: `query Q { ranks(sort: [{field: ${json(name)}}]) { totalCount } }` }),
          });
        case "filterField":
          return post({
            recipe: `filter field ${name}`,
            body: json({
              query: `query Q { ranks(filters: [{field: ${json(name)}, operator: "=", value: "x"}]) { totalCount } }`,
            }),
          });
      }
      break;
    }
    case "extreme": {
      const n = recipe.literal;
      if (recipe.where === "literal") {
        return post({
          recipe: `limit: ${n} (literal)`,
          body: json({ query: `query Q { ranks(limit: ${n}) { totalCount } }` }),
          mustReject: !isInt32(n),
        });
      }
      const query = "query Q($l: Int) { ranks(limit: $l) { totalCount } }";
      const value = JSON.parse(n) as number;
      return post({
        recipe: `limit ${n} (variable)`,
        body: `{"query":${json(query)},"variables":{"l":${n}}}`,
        mustReject: !(Number.isInteger(value) && Math.abs(value) <= 2147483647),
      });
    }
  }
  throw new Error(`unknown recipe ${json(recipe)}`);
}
