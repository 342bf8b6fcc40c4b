/**
 * fast-check arbitraries for malformed REST requests. Each arbitrary yields a small plain recipe
 * (so fast-check can shrink and print it); `applyRecipe` turns a recipe and a well-formed request
 * (test/support/targets.ts) into the request actually sent, and says whether it must be rejected.
 *
 * No generated value may name an existing row by accident: positive integers below 2·10⁹ and strings
 * of digits are never produced, so a malformed batch delete or sync cannot remove seeded rows.
 */
import fc from "fast-check";
import { pivotOf, type Operation } from "../../src/resources/operations.ts";
import { snake } from "../../src/core/names.ts";
import type { Target } from "./targets.ts";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The request sent: everything a counterexample needs to be replayed by hand. */
export interface Sent {
  method: string;
  /** Path and query, below the origin. */
  url: string;
  headers: Record<string, string>;
  /** Text bodies as sent; form bodies as their entries. */
  body?: string | Uint8Array | FormData;
  /** True when any 2xx answer is wrong (malformed ids, bodies that are not objects, unknown includes...). */
  mustReject: boolean;
  /** Which recipe made it. */
  recipe: string;
  /** Send the body chunked, with no Content-Length. */
  chunked?: boolean;
  /** The one answer issue 14 settles for this request, where it settles one. */
  expect?: Expected;
}

/** A status the issue fixes for a kind of request, and for a 422 the field `error.errors` must name (itself or below it). */
export interface Expected {
  status: number;
  field?: string | RegExp;
  because: string;
}

/** Large enough to matter, small enough to stay under BODY_MAX_BYTES (2 MB). */
export const HUGE = "ẞ".repeat(400_000);
export const deepArray = (depth: number): Json => {
  let v: Json = "bottom";
  for (let i = 0; i < depth; i++) v = [v];
  return v;
};
export const deepObject = (depth: number): Json => {
  let v: Json = "bottom";
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
};
const protoKey = (): Json => JSON.parse('{"__proto__": {"polluted": "yes"}}');

/** A value that could be read as the id of an existing row: never generated. */
export function namesARow(v: unknown): boolean {
  if (typeof v === "number") return Number.isInteger(v) && v > 0 && v < 2_000_000_000;
  if (typeof v === "string") return /^\s*\+?\d+(\.0*)?\s*$/.test(v) && Number(v) > 0 && Number(v) < 2_000_000_000;
  if (Array.isArray(v)) return v.some(namesARow);
  if (v && typeof v === "object") return Object.entries(v).some(([k, x]) => namesARow(k) || namesARow(x));
  return false;
}

const SCALARS: Json[] = [
  null,
  true,
  false,
  0,
  -1,
  -0.5,
  1.5,
  1e-7,
  2147483648,
  -2147483649,
  9007199254740993,
  1e308,
  -1e308,
  1e21,
  "",
  " ",
  "abc",
  "-1",
  "0",
  "1.5",
  "1e3",
  "0x10",
  "99999999999999999999",
  "NaN",
  "Infinity",
  "-Infinity",
  "null",
  "undefined",
  "true",
  "\u0000",
  "a\u0000b",
  "\u202eevil",
  "😀",
  "👨‍👩‍👧‍👦",
  "Ǆǅǆ",
  "\ud800",
  "\udfff\ud800",
  "<script>alert(1)</script>",
  "' OR '1'='1",
  "%",
  "_",
  "\\",
  "../../../etc/passwd",
  "data:image/png;base64,AAAA",
  "data:text/plain,hello",
  "data:",
  "data:image/png;base64,!!!!",
  "2024-13-45",
  "2024-02-30T25:61:61Z",
  "0000-00-00",
  "+275760-09-13T00:00:00.001Z",
  "9999-12-31T23:59:59.999999999Z",
  "#zzzzzz",
  "javascript:alert(1)",
  "App\\Models\\Nope",
  "App\\Models\\User",
  "primary",
  "select * from User",
];

const COMPOSITES: Array<() => Json> = [
  () => [],
  () => ({}),
  () => [null],
  () => [[]],
  () => [-1, "a", null],
  () => ({ "": null }),
  () => ({ "0": -1 }),
  protoKey,
  () => ({ constructor: { prototype: { polluted: "yes" } } }),
  () => deepArray(300),
  () => deepObject(300),
  () => Array(2000).fill(-1),
  () => ({ toString: "x", valueOf: -1, hasOwnProperty: null }),
  () => ({ id: -1, pivot: [] }),
];

/** A JSON value that no field accepts as meant, or that an engine may choke on. */
export const badValue: fc.Arbitrary<Json> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...SCALARS) },
  { weight: 4, arbitrary: fc.constantFrom(...COMPOSITES).map((make) => make()) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }).filter((s) => !namesARow(s)) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", minLength: 256, maxLength: 300 }) },
  {
    weight: 2,
    arbitrary: fc.oneof(
      fc.integer({ min: 2 ** 31, max: 2 ** 53 }),
      fc.integer({ min: -(2 ** 53), max: 0 }),
      fc.double({ noNaN: true }).filter((d) => !namesARow(d)),
    ),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).filter((v) => !namesARow(v)) as fc.Arbitrary<Json> },
  { weight: 1, arbitrary: fc.constant(HUGE) },
);

/** Malformed path ids: never a positive int32 naming a row. Dot segments are the `dotSegment` recipe's. */
export const badId = fc.constantFrom(
  "0",
  "-1",
  "1.5",
  "99999999999999999999",
  "2147483648",
  "9007199254740993",
  "2147483647",
  "abc",
  "%2F",
  "1%2F2",
  "%5C",
  "1e3",
  "0x1F",
  "+1",
  "%201",
  "1%00",
  "%D9%A1%D9%A2",
  "NaN",
  "Infinity",
  "null",
  "undefined",
  "true",
  "%5B1%5D",
  "%7B%7D",
  "1,2",
  "1;2",
  "-0",
  "01",
  "1.0",
  "%F0%9F%98%80",
  "%",
  "%%",
  "%zz",
  "1%0A",
  "2000000000",
);

const RAW_BODIES: string[] = [
  "{",
  '{"a":',
  "{'a':1}",
  "[",
  "\u0000",
  "nul",
  '{"a":1,}',
  '{"a":01}',
  '{"a":NaN}',
  '{"a":Infinity}',
  "{}garbage",
  "[]",
  "null",
  "-1",
  '"str"',
  "true",
  "[{}]",
  '"\\ud800"',
  "[".repeat(100_000),
  `${"[".repeat(5000)}${"]".repeat(5000)}`,
  `${'{"a":'.repeat(3000)}1${"}".repeat(3000)}`,
  '{"name":"x","name":{"nested":[]}}',
  '{"__proto__":{"polluted":"yes"}}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  "\ufeff\ufeff{}",
  '{"a":"\\u0000"}',
  '{"a":"\\x41"}',
  '{"a":"\u2028\u2029"}',
  '{"a":1e999999}',
  '{"a":-}',
  "<xml/>",
  "a=1&b=2",
  "0".repeat(100_000),
];

/** A well-formed request's body with one thing broken. */
export type Recipe =
  | { t: "field"; at: number; value: Json }
  | { t: "addKey"; key: number | string; value: Json }
  | { t: "whole"; value: Json }
  | { t: "everyLeaf"; as: "null" | "swap" | "array" | "object" }
  | { t: "raw"; text: string; contentType: string | null }
  | { t: "overCap" }
  | { t: "path"; at: number; id: string }
  | { t: "version"; version: string }
  | { t: "extraSegment"; segment: string }
  | { t: "include"; value: string }
  | { t: "contentType"; variant: number; value: Json; keys: number }
  | { t: "spoof"; method: Json; as: "json" | "form" }
  | { t: "query"; name: string; value: string }
  | { t: "search"; key: string; value: Json; must: boolean }
  | { t: "dotSegment"; at: number; segment: string; mode: "replace" | "cancel" }
  | { t: "deep"; depth: number; shape: "array" | "object" | "filters"; at: number }
  | { t: "protoName"; name: string; place: ProtoPlace }
  | { t: "oversize"; as: "json" | "urlencoded" | "multipart"; chunked: boolean }
  | { t: "invalidUtf8"; bytes: number; at: number; inKey: boolean }
  | { t: "plainWrite"; type: string }
  | { t: "batchList"; variant: number }
  | { t: "extreme"; where: "id" | "page" | "limit" | "field" | "bodyPage" | "resources"; literal: string; at: number };

export const CONTENT_TYPES = [
  "text/plain",
  "text/plain; charset=utf-8",
  "application/json; charset=utf-16",
  "application/xml",
  "application/vnd.api+json",
  "*/*",
  "multipart/form-data",
  "multipart/form-data; boundary=",
  "application/x-www-form-urlencoded",
  "application/json, text/plain",
  "",
];

/** Form keys PHP clients send, and some no client should. */
const FORM_KEYS = [
  "a[][b]",
  "[]",
  "[",
  "]",
  "a[",
  "a]]",
  "resources[][][]",
  `${"a[".repeat(200)}x${"]".repeat(200)}`,
  "_method[]",
  "include",
  "a",
  "a[b]",
  "a[0]",
  "a[]",
];

/** The odd form keys a bit mask picks (shrinks towards the fewest). */
const oddKeys = (mask: number) => FORM_KEYS.filter((_, i) => mask & (1 << i));

/**
 * Form keys that walk into `__proto__` or `constructor.prototype`. Kept out of the recipes above: a
 * server that follows them pollutes Object.prototype in the middle of the request, which breaks
 * everything else in the process (Prisma's query batching among it), so they are tried on their own.
 */
export const PROTOTYPE_KEYS = [
  "__proto__[polluted]",
  "constructor[prototype][polluted]",
  "pivot[__proto__][polluted]",
  "resources[0][__proto__][polluted]",
  "a[constructor][prototype][polluted]",
];

const idSegments = (op: Operation) =>
  op.path
    .split("/")
    .filter(Boolean)
    .flatMap((s, i) => (s.startsWith("{") ? [i] : []));

const SEARCH_CASES: Array<{ key: string; value: Json; must: boolean }> = [
  { key: "filters", value: {}, must: true },
  { key: "filters", value: "id = 1", must: true },
  { key: "filters", value: [null], must: true },
  { key: "filters", value: [-1], must: true },
  { key: "filters", value: [{}], must: true },
  { key: "filters", value: [{ field: "zzz_unknown", operator: "=", value: "x" }], must: true },
  { key: "filters", value: [{ field: "id", operator: "regexp", value: "x" }], must: true },
  { key: "filters", value: [{ field: "id", operator: "; DROP TABLE User", value: "x" }], must: true },
  { key: "filters", value: [{ field: "a.b.c.d", operator: "=", value: "x" }], must: true },
  { key: "filters", value: [{ field: "id)) OR 1=1 --", operator: "=", value: "x" }], must: true },
  { key: "filters", value: [{ field: "hash", operator: "=", value: "x" }], must: true },
  { key: "filters", value: [{ field: "account_id", operator: "=", value: -1 }], must: true },
  { key: "filters", value: [{ field: -1, operator: "=", value: "x" }], must: true },
  { key: "filters", value: [{ field: "id", operator: "=", value: "x", type: "xor" }], must: true },
  {
    key: "filters",
    value: [
      {
        type: "and",
        nested: [{ type: "or", nested: [{ type: "and", nested: [{ field: "id", operator: ">", value: -1 }] }] }],
      },
    ],
    must: true,
  },
  { key: "filters", value: [{ field: "id", operator: "in", value: "not a list" }], must: false },
  { key: "filters", value: [{ field: "id", operator: "in", value: Array(5000).fill(-1) }], must: false },
  { key: "filters", value: [{ field: "id", operator: "=", value: { nested: true } }], must: false },
  { key: "filters", value: [{ field: "id", operator: "=", value: [-1, -2] }], must: false },
  { key: "filters", value: [{ field: "id", operator: ">", value: "9".repeat(400) }], must: false },
  { key: "filters", value: [{ field: "id", operator: "like", value: "%".repeat(5000) }], must: false },
  { key: "filters", value: [{ field: "created_at", operator: ">", value: "not a date" }], must: false },
  { key: "filters", value: Array(3000).fill({ field: "id", operator: ">", value: -1 }), must: false },
  { key: "filters", value: [{ field: "id", operator: "=", value: "x", nested: {} }], must: false },
  { key: "sort", value: "id", must: true },
  { key: "sort", value: [null], must: true },
  { key: "sort", value: [{}], must: true },
  { key: "sort", value: [{ field: "zzz_unknown" }], must: true },
  { key: "sort", value: [{ field: "id", direction: "sideways" }], must: true },
  { key: "sort", value: [{ field: "hash" }], must: true },
  { key: "sort", value: [{ field: "a.b.c.d" }], must: true },
  { key: "sort", value: [{ field: "id; DROP TABLE User" }], must: true },
  { key: "scopes", value: {}, must: true },
  { key: "scopes", value: [null], must: true },
  { key: "scopes", value: [{ name: "zzz_unknown" }], must: true },
  { key: "scopes", value: [{ name: -1 }], must: true },
  { key: "scopes", value: [{ name: "__proto__" }], must: true },
  { key: "scopes", value: [{ name: "constructor", parameters: [] }], must: true },
  { key: "search", value: "text", must: true },
  { key: "search", value: [], must: true },
  { key: "search", value: { value: -1 }, must: true },
  { key: "search", value: { value: { a: "b" } }, must: true },
  { key: "search", value: { value: "x", case_sensitive: "maybe" }, must: false },
  { key: "search", value: { value: "%_\\".repeat(3000) }, must: false },
  { key: "search", value: { value: "x".repeat(60_000) }, must: false },
  { key: "search", value: { value: "ẞ".repeat(20_000) }, must: false },
  { key: "includes", value: {}, must: true },
  { key: "includes", value: [{ relation: "zzz_unknown" }], must: true },
  { key: "includes", value: [{ relation: -1 }], must: true },
  { key: "includes", value: [{}], must: true },
  { key: "includes", value: [{ relation: "a.b.c.d" }], must: true },
  { key: "aggregates", value: [{ relation: "x", type: "count" }], must: true },
  { key: "aggregates", value: "x", must: true },
  { key: "page", value: -1, must: true },
  { key: "page", value: "abc", must: true },
  { key: "limit", value: 0, must: true },
  { key: "limit", value: { a: 1 }, must: true },
  { key: "limit", value: 1.5, must: true },
];

const hasBody = (op: Operation) => op.method !== "GET";
const lists = (op: Operation) => op.kind === "list" || op.kind === "search";

/*
 * Issue 14's categories. Requests go over real HTTP with their path sent as is (test/support/raw-http.ts),
 * so encoded and raw dot segments reach the server; `new URL` would resolve them on the client.
 */

/** Dot segments and slashes, encoded or not, for path positions (ids and literal segments alike). */
const DOT_SEGMENTS = [
  "%2e%2e",
  ".%2e",
  "%2e.",
  "%2E%2E",
  "%2e",
  "%2E",
  "..",
  ".",
  "%2e%2e%2f",
  "..%2f",
  "%2f",
  "%2F",
  "1%2f..",
  "%2e%2e/%2e%2e",
  "%2f%2e%2e%2f",
  "%5c..",
  "..%5c",
];
const ENCODED_DOT = new Set(["%2e", ".%2e", "%2e.", "%2e%2e"]);
/** A segment URL parsers resolve as `.` or `..` and that is percent-encoded: a client meant it as data, never as a step up. */
const hasEncodedDotSegment = (path: string) =>
  path
    .replace(/\?.*$/, "")
    .split("/")
    .some((s) => ENCODED_DOT.has(s.toLowerCase()));

/**
 * Names every JavaScript object answers to (Object.prototype's); `rank.constructor` walks into a
 * relation first. `prototype` is not one: as a pivot key it is an unknown attribute, ignored like any.
 */
export const PROTOTYPE_NAMES = [
  "constructor",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "__proto__",
  "rank.constructor",
  "isPrototypeOf",
  "propertyIsEnumerable",
  "__defineGetter__",
];
/** Where a request names something the server looks up by name. */
export type ProtoPlace =
  | "include"
  | "filter"
  | "sort"
  | "scope"
  | "searchInclude"
  | "searchValue"
  | "pivot"
  | "resourceKey"
  | "resourcePivot";

/** Numbers past what an int32 id, a double or a 64-bit column holds, and zeros with a sign. */
export const EXTREME_NUMBERS = [
  "1e308",
  "-1e308",
  "1e309",
  "1E400",
  "-0",
  "-0.0",
  "0e0",
  "9223372036854775808",
  "9223372036854775807",
  "-9223372036854775809",
  "2147483648",
  "4294967296",
  "18446744073709551616",
  "123456789012345678901234567890",
];

/** Byte sequences that are not UTF-8: a lone continuation byte, 0xff, overlong `/`, an encoded surrogate, past U+10FFFF, cut short. */
export const INVALID_UTF8: number[][] = [
  [0xff],
  [0x80],
  [0xc0, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xf5, 0x80, 0x80, 0x80],
  [0xc3],
  [0xe2, 0x82],
  [0xfe, 0xfe, 0xff, 0xff],
];

export const PLAIN_TYPES = ["text/plain", "text/plain; charset=utf-8", "Text/Plain", "text/plain;charset=UTF-8"];

const isSearch = (op: Operation) => op.kind === "search";
const hasPivotBody = (op: Operation) => op.kind === "pivot";
const linksWithPivot = (op: Operation) =>
  ["attach", "sync"].includes(op.kind) && Object.keys(pivotOf(op)?.fields ?? {}).length > 0;
const hasResources = (op: Operation) =>
  ["batchCreate", "batchUpdate", "batchDelete", "attach", "detach", "sync", "toggle"].includes(op.kind);

function protoPlaces(op: Operation): ProtoPlace[] {
  return [
    "include",
    ...(isSearch(op) ? (["filter", "sort", "scope", "searchInclude", "searchValue"] as const) : []),
    ...(hasPivotBody(op) ? (["pivot"] as const) : []),
    ...(hasResources(op) ? (["resourceKey"] as const) : []),
    ...(linksWithPivot(op) ? (["resourcePivot"] as const) : []),
  ];
}

/** A pivot key is one attribute's name: `rank.constructor` there is merely unknown (ignored), not a walk into a relation. */
const prototypeNamesAt = (place: ProtoPlace) =>
  place === "pivot" || place === "resourcePivot" ? PROTOTYPE_NAMES.filter((n) => !n.includes(".")) : PROTOTYPE_NAMES;

/** Path segments of a planned URL (`/v2/ranks/5` → v2, ranks, 5) where a dot segment can go: all of them. */
const urlSegmentCount = (op: Operation) => op.path.split("/").filter(Boolean).length + 1;

/** Issue 14's recipes that apply to `op`. */
function issue14Recipes(op: Operation): Array<fc.WeightedArbitrary<Recipe>> {
  const ids = idSegments(op);
  const out: Array<fc.WeightedArbitrary<Recipe>> = [
    {
      weight: 2,
      arbitrary: fc.record({
        t: fc.constant("dotSegment" as const),
        at: fc.nat({ max: urlSegmentCount(op) - 1 }),
        segment: fc.constantFrom(...DOT_SEGMENTS),
        mode: fc.constantFrom("replace" as const, "cancel" as const),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.oneof(
        ...protoPlaces(op).map((place) =>
          fc.record({
            t: fc.constant("protoName" as const),
            name: fc.constantFrom(...prototypeNamesAt(place)),
            place: fc.constant(place),
          }),
        ),
      ),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        t: fc.constant("extreme" as const),
        where: fc.constantFrom(
          ...(["page", "limit"] as const),
          ...(ids.length ? (["id"] as const) : []),
          ...(hasBody(op) ? (["field"] as const) : []),
          ...(isSearch(op) ? (["bodyPage"] as const) : []),
          ...(hasResources(op) ? (["resources"] as const) : []),
        ),
        literal: fc.constantFrom(...EXTREME_NUMBERS),
        at: fc.nat(),
      }),
    },
  ];
  if (hasBody(op)) {
    out.push(
      {
        weight: 1,
        arbitrary: fc.record({
          t: fc.constant("deep" as const),
          depth: fc.integer({ min: 5_000, max: 20_000 }),
          shape: fc.constantFrom(...(["array", "object"] as const), ...(isSearch(op) ? (["filters"] as const) : [])),
          at: fc.nat(),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          t: fc.constant("oversize" as const),
          as: fc.constantFrom("json" as const, "urlencoded" as const, "multipart" as const),
          chunked: fc.boolean(),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          t: fc.constant("invalidUtf8" as const),
          bytes: fc.nat({ max: INVALID_UTF8.length - 1 }),
          at: fc.nat(),
          inKey: fc.boolean(),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({ t: fc.constant("plainWrite" as const), type: fc.constantFrom(...PLAIN_TYPES) }),
      },
    );
  }
  if (op.kind === "batchUpdate")
    out.push({
      weight: 1,
      arbitrary: fc.record({ t: fc.constant("batchList" as const), variant: fc.nat({ max: 2 }) }),
    });
  return out;
}

/**
 * One request of each of issue 14's categories for `op`, so every category reaches every route
 * whatever the seed draws. Where a category has several forms (where a dot segment goes, which body
 * is oversized, where an extreme number goes), routes take turns by `turn` (the route's index), so
 * each form reaches many routes and the suite stays inside its time budget.
 */
export function issue14Examples(op: Operation, turn: number): Recipe[] {
  const ids = idSegments(op);
  const pick = <T>(forms: T[]): T => forms[turn % forms.length];
  const out: Recipe[] = [
    pick<Recipe>([
      { t: "dotSegment", at: 1, segment: "%2E%2E", mode: "cancel" },
      ...(ids.length ? [{ t: "dotSegment", at: ids.at(-1)! + 1, segment: "%2e%2e", mode: "replace" } as const] : []),
      { t: "dotSegment", at: urlSegmentCount(op) - 1, segment: ".%2e", mode: "cancel" },
    ]),
    { t: "protoName", name: pick(["constructor", "rank.constructor", "__proto__", "toString"]), place: "include" },
    pick<Recipe>([
      ...(ids.length
        ? [{ t: "extreme", where: "id", literal: "9223372036854775808", at: ids.length - 1 } as const]
        : []),
      ...(lists(op)
        ? [
            { t: "extreme", where: "page", literal: "1e308", at: 0 } as const,
            { t: "extreme", where: "limit", literal: "-0", at: 0 } as const,
          ]
        : []),
      ...(hasBody(op)
        ? [
            { t: "extreme", where: "field", literal: "1e308", at: turn } as const,
            { t: "extreme", where: "field", literal: "-0", at: turn } as const,
          ]
        : []),
      ...(isSearch(op) ? [{ t: "extreme", where: "bodyPage", literal: "9223372036854775808", at: turn } as const] : []),
      ...(hasResources(op) ? [{ t: "extreme", where: "resources", literal: "2147483648", at: 0 } as const] : []),
      { t: "extreme", where: "limit", literal: "9223372036854775808", at: 0 },
    ]),
  ];
  if (hasBody(op)) {
    out.push(
      { t: "deep", depth: 5_000, shape: pick(["array", "object"] as const), at: turn },
      { t: "oversize", as: pick(["json", "urlencoded", "multipart"] as const), chunked: false },
      { t: "invalidUtf8", bytes: turn, at: turn, inKey: false },
      { t: "plainWrite", type: "text/plain" },
    );
  }
  if (isSearch(op)) {
    out.push(
      { t: "deep", depth: 5_000, shape: "filters", at: 0 },
      { t: "protoName", name: "__proto__", place: "filter" },
      { t: "protoName", name: "toString", place: "sort" },
      { t: "protoName", name: "hasOwnProperty", place: "scope" },
      { t: "protoName", name: "rank.constructor", place: "searchInclude" },
      { t: "protoName", name: "valueOf", place: "searchValue" },
    );
  }
  if (hasPivotBody(op)) out.push({ t: "protoName", name: "constructor", place: "pivot" });
  if (hasResources(op)) out.push({ t: "protoName", name: pick(["__proto__", "constructor"]), place: "resourceKey" });
  if (linksWithPivot(op)) out.push({ t: "protoName", name: "toString", place: "resourcePivot" });
  if (op.kind === "batchUpdate") out.push({ t: "batchList", variant: turn });
  return out;
}

/** The recipes that apply to `op`, weighted towards its body where it has one. */
export function recipesFor(op: Operation, writableKeys: string[]): fc.Arbitrary<Recipe> {
  const ids = idSegments(op);
  const options: Array<fc.WeightedArbitrary<Recipe>> = [
    {
      weight: 2,
      arbitrary: ids.length
        ? fc.record({ t: fc.constant("path" as const), at: fc.nat({ max: ids.length - 1 }), id: badId })
        : fc.record({ t: fc.constant("extraSegment" as const), segment: badId }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        t: fc.constant("version" as const),
        version: fc.constantFrom("v3", "v0", "V2", "v2.0", "v02", "%76%32x", "api", "v-1", "vv2"),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        t: fc.constant("include" as const),
        value: fc.oneof(
          fc.constantFrom(
            "zzz_unknown",
            "a.b.c.d",
            "*",
            "*.*",
            ",",
            ",,,",
            ",".repeat(5000),
            " , ",
            ".",
            "..",
            "rank.",
            ".rank",
            "rank..image",
            "rank.*.*",
            "rank.image.zzz",
            "\u0000",
            "😀",
            "__proto__",
            "constructor",
            "toString",
            "pivot.__proto__",
            "rank,".repeat(2000),
            "a".repeat(10_000),
            ...op.includes.flatMap((i) => [
              `${i}.zzz`,
              `${i}.${i}.${i}.${i}`,
              `${i},zzz`,
              `${i}.*.*`,
              i.toUpperCase(),
              ` ${i} `,
              `${i},`.repeat(1000),
            ]),
          ),
          fc
            .tuple(
              fc.array(fc.oneof(fc.constantFrom(...op.includes, "*", "zzz"), fc.string({ maxLength: 8 })), {
                maxLength: 6,
              }),
              fc.constantFrom(",", ".", ",,", ", "),
            )
            .map(([values, separator]) => values.join(separator)),
        ),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        t: fc.constant("query" as const),
        name: fc.constantFrom(
          "page",
          "limit",
          "include[]",
          "limit[]",
          "filter[name]",
          "sort",
          "page[number]",
          "with_trashed",
          "_method",
          "only_trashed",
        ),
        value: fc.constantFrom(
          "-1",
          "0",
          "abc",
          "1e3",
          "1.5",
          "99999999999999999999",
          "%00",
          "",
          " ",
          "NaN",
          "0x10",
          "١",
          "x".repeat(50_000),
          "DELETE",
        ),
      }),
    },
  ];
  if (hasBody(op)) {
    options.push(
      { weight: 4, arbitrary: fc.record({ t: fc.constant("field" as const), at: fc.nat(), value: badValue }) },
      {
        weight: 3,
        arbitrary: fc.record({
          t: fc.constant("addKey" as const),
          key: writableKeys.length
            ? fc.oneof(
                fc.nat({ max: writableKeys.length - 1 }),
                fc.constantFrom("pivot", "resources", "id", "_method", "__proto__"),
              )
            : fc.constantFrom("pivot", "resources", "id"),
          value: badValue,
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          t: fc.constant("everyLeaf" as const),
          as: fc.constantFrom("null" as const, "swap" as const, "array" as const, "object" as const),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          t: fc.constant("whole" as const),
          value: fc.oneof(
            fc.constantFrom<Json>([], null, "str", -1, true, [{}], [[]]),
            badValue.filter((v) => typeof v !== "object" || v === null || Array.isArray(v)),
          ),
        }),
      },
      {
        weight: 2,
        arbitrary: fc.record({
          t: fc.constant("raw" as const),
          text: fc.constantFrom(...RAW_BODIES),
          contentType: fc.constantFrom<string | null>("application/json", "text/plain", null),
        }),
      },
      {
        weight: 2,
        arbitrary: fc.record({
          t: fc.constant("contentType" as const),
          variant: fc.nat({ max: CONTENT_TYPES.length + 5 }),
          value: badValue,
          keys: fc.integer({ min: 1, max: 2 ** FORM_KEYS.length - 1 }),
        }),
      },
      { weight: 1, arbitrary: fc.constant({ t: "overCap" as const }) },
      {
        weight: 1,
        arbitrary: fc.record({
          t: fc.constant("spoof" as const),
          method: fc.constantFrom<Json>(
            op.method,
            op.method.toLowerCase(),
            ` ${op.method} `,
            "GET",
            "HEAD",
            "OPTIONS",
            "TRACE",
            "CONNECT",
            "POST",
            "",
            "PUT\u0000",
            "PATCH, DELETE",
            -1,
            null,
            true,
            [op.method],
            { m: op.method },
            ...(op.method === "PATCH" ? ["PUT", "put"] : []),
          ),
          as: fc.constantFrom("json" as const, "form" as const),
        }),
      },
    );
  }
  if (op.kind === "search") {
    options.push({
      weight: 5,
      arbitrary: fc.constantFrom(...SEARCH_CASES).map((c) => ({ t: "search" as const, ...c })),
    });
  }
  options.push(...issue14Recipes(op));
  return fc.oneof(...options);
}

/** Every place in a JSON value a bad value can be put: paths of keys and indexes. */
export function slots(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (Array.isArray(value)) return value.flatMap((v, i) => [[...prefix, i], ...slots(v, [...prefix, i])]);
  if (value && typeof value === "object" && !(value instanceof FormData)) {
    return Object.entries(value).flatMap(([k, v]) => [[...prefix, k], ...slots(v, [...prefix, k])]);
  }
  return [];
}

export function setAt<T>(root: T, path: Array<string | number>, value: unknown): T {
  const copy = structuredClone(root);
  let node = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  Object.defineProperty(node, path.at(-1)!, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

/** `value` with every leaf (a value that is neither an array nor an object) replaced. */
export function mapLeaves(value: unknown, leaf: (v: unknown) => Json): Json {
  if (Array.isArray(value)) return value.map((v) => mapLeaves(v, leaf));
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapLeaves(v, leaf)]));
  return leaf(value);
}

/** PHP-style form pairs of a JSON value: `resources[0][name]=...`; null is left out, booleans are 1/0. */
export function formPairs(value: unknown, prefix = ""): Array<[string, string]> {
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) return value.flatMap((v, i) => formPairs(v, `${prefix}[${i}]`));
  if (typeof value === "object")
    return Object.entries(value).flatMap(([k, v]) => formPairs(v, prefix ? `${prefix}[${k}]` : k));
  return [[prefix, typeof value === "boolean" ? (value ? "1" : "0") : String(value)]];
}

const json = (value: unknown) => JSON.stringify(value) ?? "null";
/** A value as form text: strings as they are, anything else as JSON. */
const asText = (value: unknown) => (typeof value === "string" ? value : json(value));
const isPlainObject = (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v);

/** Whether a value of `include` names something `op` does not allow (as src/rest/includes.ts reads it). */
export function includeRejected(op: Operation, raw: string): boolean {
  const values = raw
    .split(",")
    .map((v) => v.trim())
    .filter(Boolean);
  return values.some(
    (v) =>
      !(
        op.includes.includes(v) ||
        op.includes.some((a) => a.endsWith(".*") && v.startsWith(a.slice(0, -1)) && v.length > a.length - 1)
      ),
  );
}

/** The request a recipe makes of a well-formed one. */
export function applyRecipe(
  op: Operation,
  target: Target,
  recipe: Recipe,
  writableKeys: string[],
  bodyMaxBytes: number,
): Sent {
  const base = target.body ?? {};
  const jsonHeaders = { "content-type": "application/json" };
  const send = (over: Partial<Sent> & { recipe: string }): Sent => ({
    method: target.method,
    url: target.url,
    headers: hasBody(op) ? jsonHeaders : {},
    body: hasBody(op) ? json(base) : undefined,
    mustReject: false,
    ...over,
  });
  switch (recipe.t) {
    case "field": {
      const all = slots(base);
      if (!all.length)
        return send({
          recipe: "field (no slot: whole body replaced)",
          body: json(recipe.value),
          mustReject: !isPlainObject(recipe.value),
        });
      const at = all[recipe.at % all.length];
      return send({ recipe: `field ${at.join(".")}`, body: json(setAt(base, at, recipe.value)) });
    }
    case "addKey": {
      const key = typeof recipe.key === "number" ? writableKeys[recipe.key] : recipe.key;
      const body = isPlainObject(base) ? setAt(base, [key], recipe.value) : { [key]: recipe.value };
      return send({ recipe: `addKey ${key}`, body: json(body) });
    }
    case "everyLeaf": {
      const swap = (v: unknown): Json =>
        typeof v === "number" ? "abc" : typeof v === "string" ? -1 : typeof v === "boolean" ? "maybe" : -1;
      const leaf = {
        null: () => null,
        swap,
        array: (v: unknown) => [v as Json],
        object: (v: unknown) => ({ value: v as Json }),
      }[recipe.as];
      return send({ recipe: `every leaf of the body as ${recipe.as}`, body: json(mapLeaves(base, leaf)) });
    }
    case "whole":
      return send({ recipe: "whole body", body: json(recipe.value), mustReject: !isPlainObject(recipe.value) });
    case "raw": {
      let parsed: unknown;
      let valid = true;
      try {
        parsed = JSON.parse(recipe.text.replace(/^\ufeff/, ""));
      } catch {
        valid = false;
      }
      const headers: Record<string, string> = recipe.contentType === null ? {} : { "content-type": recipe.contentType };
      return send({
        recipe: `raw body as ${recipe.contentType ?? "no content type"}`,
        headers,
        body: new TextEncoder().encode(recipe.text),
        mustReject: !valid || !isPlainObject(parsed) || recipe.contentType === "text/plain",
      });
    }
    case "overCap":
      return send({
        recipe: "body over the cap",
        body: json({ ...(isPlainObject(base) ? (base as object) : {}), padding: "x".repeat(bodyMaxBytes) }),
        mustReject: true,
        expect: { status: 413, because: `a body over the body cap (${bodyMaxBytes} bytes)` },
      });
    case "path": {
      const segments = target.url.split("/");
      const at = idSegments(op)[recipe.at] + 2;
      segments[at] = recipe.id;
      return send({
        recipe: `path id ${op.path.split("/").filter(Boolean)[at - 2]} = ${recipe.id}`,
        url: segments.join("/"),
        mustReject: true,
      });
    }
    case "extraSegment":
      return send({
        recipe: `extra segment ${recipe.segment}`,
        url: `${target.url}/${recipe.segment}`,
        mustReject: true,
      });
    case "version":
      return send({
        recipe: `version ${recipe.version}`,
        url: target.url.replace(/^\/v2\//, `/${recipe.version}/`),
        mustReject: true,
      });
    case "include":
      return send({
        recipe: "include",
        url: `${target.url}?include=${encodeURIComponent(recipe.value).replace(/%2C/g, ",")}`,
        mustReject: includeRejected(op, recipe.value),
      });
    case "query": {
      const must =
        (lists(op) &&
          (recipe.name === "page" || recipe.name === "limit") &&
          !/^\d+$/.test(recipe.value.trim()) &&
          recipe.value.trim() !== "") ||
        (lists(op) && (recipe.name === "page" || recipe.name === "limit") && recipe.value.trim() === "0");
      return send({
        recipe: `query ${recipe.name}`,
        url: `${target.url}?${encodeURIComponent(recipe.name)}=${encodeURIComponent(recipe.value)}`,
        mustReject: must,
      });
    }
    case "contentType": {
      const text = json(base);
      const v = recipe.variant;
      if (v < CONTENT_TYPES.length) {
        const type = CONTENT_TYPES[v];
        const form = type.startsWith("multipart/") || type.startsWith("application/x-www-form-urlencoded");
        const plain = type.toLowerCase().startsWith("text/plain");
        return send({
          recipe: `JSON body sent as "${type}"`,
          headers: { "content-type": type },
          body: text,
          mustReject: (form && type.startsWith("multipart/")) || plain,
          expect: plain ? { status: 415, because: "a write whose body is text/plain" } : undefined,
        });
      }
      const pairs = formPairs(base);
      switch (v - CONTENT_TYPES.length) {
        case 0:
          return send({
            recipe: "text/plain garbage",
            headers: { "content-type": "text/plain" },
            body: `garbage ${asText(recipe.value)}`,
            mustReject: true,
          });
        case 1: {
          const body = new URLSearchParams([
            ...pairs,
            ...oddKeys(recipe.keys).map((k) => [k, asText(recipe.value)] as [string, string]),
          ]).toString();
          return send({
            recipe: "urlencoded body with an odd key",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body,
          });
        }
        case 2: {
          const form = new FormData();
          for (const [k, val] of pairs) form.append(k, val);
          for (const key of oddKeys(recipe.keys)) form.append(key, asText(recipe.value));
          return send({ recipe: "multipart body with odd keys", headers: {}, body: form });
        }
        case 3: {
          const form = new FormData();
          const [first] = pairs;
          for (const [k, val] of pairs) form.append(k, val);
          form.set(
            first?.[0] ?? "name",
            new File([new Uint8Array([0, 1, 2, 255])], "garbage.bin", { type: "application/octet-stream" }),
          );
          for (const key of writableKeys)
            form.set(key, new File([asText(recipe.value)], `${key}.txt`, { type: "text/plain" }));
          return send({ recipe: "multipart body with files for plain fields", headers: {}, body: form });
        }
        case 4:
          return send({
            recipe: "multipart with a broken boundary",
            headers: { "content-type": "multipart/form-data; boundary=XYZ" },
            body: `--XYZ\r\nContent-Disposition: form-data; name="name"\r\n\r\n${asText(recipe.value)}\r\n--XY`,
            mustReject: true,
          });
        default: {
          const body = new URLSearchParams(
            pairs.map(([k, val]) => [k, asText(recipe.value) === "null" ? val : asText(recipe.value)]),
          ).toString();
          return send({
            recipe: "urlencoded body, every value replaced",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body,
          });
        }
      }
    }
    case "spoof": {
      const value = recipe.method;
      if (recipe.as === "json") {
        return send({
          recipe: `POST with _method ${json(value)} (JSON)`,
          method: "POST",
          body: json({ ...(isPlainObject(base) ? (base as object) : {}), _method: value }),
        });
      }
      const body = new URLSearchParams([
        ...formPairs(base),
        ...formPairs(value, "_method").map(([k, v]) => [k || "_method", v] as [string, string]),
      ]).toString();
      return send({
        recipe: `POST with _method ${json(value)} (urlencoded)`,
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body,
      });
    }
    case "search":
      return send({
        recipe: `search ${recipe.key}`,
        body: json({ ...(base as object), [recipe.key]: recipe.value }),
        mustReject: recipe.must,
      });
    default:
      return applyIssue14Recipe(op, target, recipe, bodyMaxBytes, send);
  }
}

const PLACEHOLDER = "@@raw-value-7f3a@@";
/** `base` as JSON text with the value at `at` (a slot index, or `name` where there is none) replaced by raw JSON text. */
function withRawValue(base: unknown, at: number, raw: string): { text: string; where: string } {
  const all = slots(base);
  const path = all.length ? all[at % all.length] : ["name"];
  const text = json(
    isPlainObject(base) || Array.isArray(base) ? setAt(base, path, PLACEHOLDER) : { name: PLACEHOLDER },
  );
  return { text: text.replace(`"${PLACEHOLDER}"`, () => raw), where: path.join(".") };
}

const concat = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));
const utf8 = (text: string) => new TextEncoder().encode(text);

/** The page number or size a search body's JSON number reads as, if the server must take it. */
function acceptablePage(literal: string): boolean {
  const value: unknown = JSON.parse(literal);
  return typeof value === "number" && /^\d+$/.test(String(value)) && value >= 1;
}

function applyIssue14Recipe(
  op: Operation,
  target: Target,
  recipe: Exclude<
    Recipe,
    {
      t:
        | "field"
        | "addKey"
        | "whole"
        | "everyLeaf"
        | "raw"
        | "overCap"
        | "path"
        | "extraSegment"
        | "version"
        | "include"
        | "contentType"
        | "spoof"
        | "query"
        | "search";
    }
  >,
  bodyMaxBytes: number,
  send: (over: Partial<Sent> & { recipe: string }) => Sent,
): Sent {
  const base = (target.body ?? {}) as Record<string, unknown>;
  switch (recipe.t) {
    case "dotSegment": {
      const segments = target.url.split("/");
      const at = (recipe.at % (segments.length - 1)) + 1;
      if (recipe.mode === "replace") segments[at] = recipe.segment;
      else segments.splice(at, 0, "zzz", recipe.segment);
      const url = segments.join("/");
      // In the version's place a dot segment is a bad version (400); anywhere else it names nothing (404).
      const encoded = hasEncodedDotSegment(url) && !(recipe.mode === "replace" && at === 1);
      return send({
        recipe: `dot segment ${recipe.segment} (${recipe.mode}) at ${at}`,
        url,
        mustReject: true,
        expect: encoded ? { status: 404, because: "an encoded dot segment names no resource" } : undefined,
      });
    }
    case "deep": {
      const d = recipe.depth;
      if (recipe.shape === "filters") {
        const text = `{"filters":[${'{"nested":['.repeat(d)}{"field":"id","operator":">","value":-1}${"]}".repeat(d)}]}`;
        return send({ recipe: `search filters nested ${d} levels`, body: text, mustReject: true });
      }
      const raw =
        recipe.shape === "array" ? `${"[".repeat(d)}1${"]".repeat(d)}` : `${'{"a":'.repeat(d)}1${"}".repeat(d)}`;
      const { text, where } = withRawValue(base, recipe.at, raw);
      return send({ recipe: `${recipe.shape} nested ${d} levels at ${where}`, body: text, mustReject: true });
    }
    case "protoName":
      return protoNameRequest(op, target, recipe.name, recipe.place, send);
    case "oversize": {
      const size = Math.max(3 * 1024 * 1024, bodyMaxBytes + 1024);
      const padding = "x".repeat(size);
      const expect = { status: 413, because: `a ${recipe.as} body over the body cap (${bodyMaxBytes} bytes)` };
      const what = `${(size / 1024 / 1024).toFixed(1)} MB ${recipe.as} body${recipe.chunked ? ", chunked" : ""}`;
      const pairs = formPairs(base);
      switch (recipe.as) {
        case "json":
          return send({
            recipe: what,
            body: json({ ...base, padding }),
            chunked: recipe.chunked,
            mustReject: true,
            expect,
          });
        case "urlencoded":
          return send({
            recipe: what,
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams([...pairs, ["padding", padding]]).toString(),
            chunked: recipe.chunked,
            mustReject: true,
            expect,
          });
        case "multipart": {
          const form = new FormData();
          for (const [k, v] of pairs) form.append(k, v);
          form.append("padding", padding);
          return send({ recipe: what, headers: {}, body: form, chunked: recipe.chunked, mustReject: true, expect });
        }
      }
      break;
    }
    case "invalidUtf8": {
      const bad = new Uint8Array(INVALID_UTF8[recipe.bytes % INVALID_UTF8.length]);
      const hex = [...bad].map((b) => b.toString(16).padStart(2, "0")).join(" ");
      const text = recipe.inKey
        ? json({ ...base, [PLACEHOLDER]: "x" })
        : withRawValue(base, recipe.at, `"${PLACEHOLDER}"`).text;
      const [before, after] = text.split(PLACEHOLDER) as [string, string];
      return send({
        recipe: `bytes ${hex} (not UTF-8) in a JSON ${recipe.inKey ? "key" : "string"}`,
        body: concat(utf8(`${before}a`), bad, utf8(`b${after}`)),
        mustReject: true,
        expect: { status: 400, because: "a JSON body that is not UTF-8" },
      });
    }
    case "plainWrite":
      return send({
        recipe: `JSON write sent as "${recipe.type}"`,
        headers: { "content-type": recipe.type },
        body: json(base),
        mustReject: true,
        expect: { status: 415, because: "a write whose body is text/plain" },
      });
    case "batchList": {
      const resources = isPlainObject(base.resources)
        ? (base.resources as Record<string, Record<string, unknown>>)
        : {};
      const ids = Object.keys(resources).map(Number);
      const list = [ids, ids.map((id) => ({ id, ...resources[String(id)] })), []][recipe.variant % 3];
      return send({
        recipe: `batch update with resources as a list (${json(list).slice(0, 60)})`,
        body: json({ ...base, resources: list }),
        mustReject: true,
        expect: { status: 422, field: "resources", because: "a batch update's resources is an object keyed by id" },
      });
    }
    case "extreme": {
      const n = recipe.literal;
      switch (recipe.where) {
        case "id": {
          const segments = target.url.split("/");
          const ids = idSegments(op);
          segments[ids[recipe.at % ids.length] + 2] = n;
          return send({ recipe: `path id ${n}`, url: segments.join("/"), mustReject: true });
        }
        case "page":
        case "limit": {
          const must = lists(op) && (!/^\d+$/.test(n) || Number(n) < 1);
          return send({
            recipe: `query ${recipe.where}=${n}`,
            url: `${target.url}?${recipe.where}=${encodeURIComponent(n)}`,
            mustReject: must,
          });
        }
        case "field": {
          const { text, where } = withRawValue(base, recipe.at, n);
          return send({ recipe: `number ${n} at ${where}`, body: text });
        }
        case "bodyPage": {
          const key = recipe.at % 2 ? "limit" : "page";
          const text = json({ ...base, [key]: PLACEHOLDER }).replace(`"${PLACEHOLDER}"`, () => n);
          return send({ recipe: `search body ${key} ${n}`, body: text, mustReject: !acceptablePage(n) });
        }
        case "resources": {
          const resources = base.resources;
          const text = Array.isArray(resources)
            ? json({ ...base, resources: [...resources, PLACEHOLDER] }).replace(`"${PLACEHOLDER}"`, () => n)
            : json({
                ...base,
                resources: { ...(resources as object), [n]: Object.values((resources as object) ?? {})[0] ?? [] },
              });
          return send({ recipe: `resources id ${n}`, body: text, mustReject: true });
        }
      }
    }
  }
  throw new Error(`unknown recipe ${json(recipe)}`);
}

/** A request naming `name` where the server looks a name up: a 422 naming the field, or (a search value) plain text. */
function protoNameRequest(
  op: Operation,
  target: Target,
  name: string,
  place: ProtoPlace,
  send: (over: Partial<Sent> & { recipe: string }) => Sent,
): Sent {
  const base = (target.body ?? {}) as Record<string, unknown>;
  const rejected = (field: string | RegExp, over: Partial<Sent>): Sent =>
    send({
      recipe: `prototype name ${name} as ${place}`,
      mustReject: true,
      expect: { status: 422, field, because: `${name} is no ${place} name` },
      ...over,
    });
  const first = (value: unknown) => (isPlainObject(value) ? Object.keys(value as object)[0] : undefined);
  switch (place) {
    case "include":
      return rejected("include", { url: `${target.url}?include=${encodeURIComponent(name)}` });
    case "filter":
      return rejected("filters", { body: json({ ...base, filters: [{ field: name, operator: "=", value: "x" }] }) });
    case "sort":
      return rejected("sort", { body: json({ ...base, sort: [{ field: name, direction: "asc" }] }) });
    case "scope":
      return rejected("scopes", { body: json({ ...base, scopes: [{ name, parameters: [] }] }) });
    case "searchInclude":
      // Search includes join the `include` parameter's (src/http/rest-plugin.ts), so either name is the field's.
      return rejected(/^include/, { body: json({ ...base, includes: [{ relation: name }] }) });
    case "searchValue":
      return send({
        recipe: `prototype name ${name} as search text`,
        body: json({ ...base, search: { value: name } }),
        expect: { status: 200, because: "a search for the text of a prototype name is an ordinary search" },
      });
    case "pivot":
      return rejected("pivot", {
        body: json(setAt({ ...base, pivot: isPlainObject(base.pivot) ? base.pivot : {} }, ["pivot", name], "x")),
      });
    case "resourceKey": {
      const resources = base.resources;
      const body = Array.isArray(resources)
        ? { ...base, resources: [...resources, name] }
        : setAt(
            { ...base, resources: isPlainObject(resources) ? resources : {} },
            ["resources", name],
            Object.values((resources as object) ?? {})[0] ?? [],
          );
      return rejected("resources", { body: json(body) });
    }
    case "resourcePivot": {
      const resources = base.resources;
      const key = first(resources);
      const body =
        key !== undefined
          ? setAt(base, ["resources", key], { ...((resources as Record<string, object>)[key] ?? {}), [name]: "x" })
          : {
              ...base,
              resources: Array.isArray(resources)
                ? resources.map((id) =>
                    isPlainObject(id) ? { ...(id as object), [name]: "x" } : { id, pivot: { [name]: "x" } },
                  )
                : resources,
            };
      return rejected("resources", { body: json(body) });
    }
  }
}

/** Writable attribute names of `op`'s rows, as REST names them. */
export const writableKeysOf = (op: Operation): string[] =>
  Object.entries(op.def.fields)
    .filter(([, f]) => f.writable !== false && !f.hidden)
    .map(([n]) => snake(n));

/** A batch or link body with one bad entry among good ones: where it goes, and which bad entry. */
export interface BatchRecipe {
  at: number;
  choice: number;
}

export const batchRecipe: fc.Arbitrary<BatchRecipe> = fc.record({
  at: fc.nat({ max: 8 }),
  choice: fc.nat({ max: 200 }),
});

const BAD_IDS: Json[] = [
  0,
  -1,
  1.5,
  "abc",
  null,
  {},
  [],
  2_000_000_001,
  true,
  "",
  "1.5",
  -2147483649,
  2 ** 53,
  "2000000001",
  " ",
  [2_000_000_001],
];
const BAD_KEYS = ["abc", "0", "-1", "1.5", "2000000001", "", " ", "1e3", "__proto__", "constructor"];

/** A value of `type` that its field cannot take. */
const wrongTyped: Record<string, Json[]> = {
  string: [-1, { a: "b" }, [], true, "x".repeat(70_000)],
  text: [-1, { a: "b" }, true, "x".repeat(70_000)],
  int: ["abc", 1.5, { a: 1 }, [], true, 2 ** 40, "-"],
  boolean: ["maybe", 2, { a: 1 }, []],
  datetime: ["not a date", "2024-13-45T99:99:99Z", { a: 1 }, [], true],
};

export interface BadEntry {
  description: string;
  body: unknown;
}

/**
 * Every way to spoil `resources` of a well-formed batch or link body with one bad entry, for the
 * operation's rows (`op.def`): items that are not objects, attributes of the wrong type or breaking
 * a rule, ids that are malformed or name no row, keys that are not ids.
 */
export function badEntries(
  op: Operation,
  base: unknown,
  invalid?: { key: string; value: unknown },
): Array<(at: number) => BadEntry> {
  const resources = (base as { resources?: unknown })?.resources;
  const pivotTypes = new Map(Object.entries(pivotOf(op)?.fields ?? {}).map(([n, f]) => [snake(n), f.type as string]));
  const fieldTypes = new Map(
    Object.entries(op.def.fields)
      .filter(([, f]) => f.writable !== false && !f.oneOf)
      .map(([n, f]) => [snake(n), f.type as string]),
  );
  const out: Array<(at: number) => BadEntry> = [];
  const insert = (list: unknown[], at: number, item: unknown) => {
    const copy = [...list];
    copy.splice(at % (copy.length + 1), 0, item);
    return { ...(base as object), resources: copy };
  };
  if (Array.isArray(resources)) {
    const objects = resources.filter(isPlainObject) as Array<Record<string, unknown>>;
    if (objects.length) {
      const good = objects[0];
      for (const v of [null, -1, "x", [], true, "abc"])
        out.push((at) => ({ description: `item ${json(v)}`, body: insert(resources, at, v) }));
      for (const [key, value] of Object.entries(good)) {
        const type = fieldTypes.get(key);
        if (!type || !wrongTyped[type] || value === null) continue;
        for (const v of wrongTyped[type])
          out.push((at) => ({
            description: `item with ${key} = ${json(v).slice(0, 40)}`,
            body: insert(resources, at, { ...good, [key]: v }),
          }));
      }
      if (invalid)
        out.push((at) => ({
          description: `item with ${invalid.key} = ${json(invalid.value).slice(0, 40)}`,
          body: insert(resources, at, { ...good, [invalid.key]: invalid.value }),
        }));
      if (isPlainObject(good.pivot)) {
        for (const key of Object.keys(good.pivot as object)) {
          for (const v of wrongTyped[pivotTypes.get(key) ?? ""] ?? []) {
            out.push((at) => ({
              description: `item with pivot.${key} = ${json(v).slice(0, 40)}`,
              body: insert(resources, at, { ...good, pivot: { ...(good.pivot as object), [key]: v } }),
            }));
          }
        }
      }
    } else {
      for (const v of BAD_IDS) out.push((at) => ({ description: `id ${json(v)}`, body: insert(resources, at, v) }));
    }
  } else if (isPlainObject(resources)) {
    const entries = Object.entries(resources as Record<string, unknown>);
    const [firstKey, firstValue] = entries[0] ?? ["", {}];
    for (const key of BAD_KEYS) {
      out.push(() => ({
        description: `key ${json(key)}`,
        body: { ...(base as object), resources: Object.fromEntries([...entries, [key, firstValue]]) },
      }));
    }
    if (op.kind === "batchUpdate") {
      for (const v of [null, -1, "x", [], true]) {
        out.push(() => ({
          description: `value ${json(v)} for ${firstKey}`,
          body: { ...(base as object), resources: { ...(resources as object), [firstKey]: v } },
        }));
      }
      if (isPlainObject(firstValue)) {
        const good = firstValue as Record<string, unknown>;
        for (const [key, value] of Object.entries(good)) {
          const type = fieldTypes.get(key);
          if (!type || !wrongTyped[type] || value === null) continue;
          for (const v of wrongTyped[type]) {
            out.push(() => ({
              description: `${firstKey}.${key} = ${json(v).slice(0, 40)}`,
              body: { ...(base as object), resources: { ...(resources as object), [firstKey]: { ...good, [key]: v } } },
            }));
          }
        }
        if (invalid)
          out.push(() => ({
            description: `${invalid.key} = ${json(invalid.value).slice(0, 40)}`,
            body: {
              ...(base as object),
              resources: { ...(resources as object), [firstKey]: { ...good, [invalid.key]: invalid.value } },
            },
          }));
      }
    }
    if (isPlainObject(firstValue) && Object.keys(firstValue as object).length && op.kind !== "batchUpdate") {
      for (const key of Object.keys(firstValue as object)) {
        for (const v of wrongTyped[pivotTypes.get(key) ?? ""] ?? []) {
          out.push(() => ({
            description: `pivot ${key} = ${json(v).slice(0, 40)}`,
            body: {
              ...(base as object),
              resources: { ...(resources as object), [firstKey]: { ...(firstValue as object), [key]: v } },
            },
          }));
        }
      }
    }
  }
  return out;
}

/** The issue-14 category a recipe belongs to, with the answer the issue settles: how failures are tallied. */
export function categoryOf(recipe: Recipe): string {
  switch (recipe.t) {
    case "dotSegment":
      return /%2e/i.test(recipe.segment) && !/%2f|%5c/i.test(recipe.segment)
        ? "encoded dot segment in the path → 404"
        : "dot segment or encoded slash in the path → 4xx";
    case "deep":
      return "deep nesting → 4xx";
    case "protoName":
      return recipe.place === "searchValue"
        ? "prototype name as search text → 200"
        : `prototype name as ${recipe.place} → 422 naming it`;
    case "oversize":
      return `${recipe.as} body over the cap → 413`;
    case "invalidUtf8":
      return "invalid UTF-8 in JSON → 400";
    case "plainWrite":
      return "text/plain write → 415";
    case "batchList":
      return "batch update with resources as a list → 422";
    case "extreme":
      return `extreme number in ${recipe.where} → never 5xx`;
    default:
      return recipe.t;
  }
}
