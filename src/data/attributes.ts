import { GraphQLBoolean, GraphQLInt, GraphQLString } from "graphql";
import type { FieldType, ResourceDef } from "../resources/define.ts";
import { snake } from "../core/names.ts";
import { formatDate } from "../core/dates.ts";
import type { Context } from "../request/context.ts";
import { getDatamodel } from "../generated/pothos-types.ts";
import type { Row } from "../db/models-by-name.ts";
import { hidesPrivate } from "./access.ts";
type Serialize = (value: unknown) => unknown;

const serializers: Record<FieldType, Serialize> = {
  string: GraphQLString.serialize,
  text: GraphQLString.serialize,
  int: GraphQLInt.serialize,
  boolean: GraphQLBoolean.serialize,
  datetime: (value) => formatDate(value as Date | string),
  json: (value) => value,
};

export const everyColumn = (model: string) =>
  Object.fromEntries(
    (getDatamodel().datamodel.models as unknown as Record<string, { fields: Array<{ name: string; kind: string }> }>)[
      model
    ].fields
      .filter((f) => f.kind === "scalar" || f.kind === "enum")
      .map((f) => [f.name, true]),
  );

/** Whether rows of `model` keep when they last changed: an append-only log (webhook deliveries) has no `updatedAt`. */
export const hasUpdatedAt = (model: string): boolean => withUpdatedAt.has(model);
const withUpdatedAt = new Set(
  Object.entries(getDatamodel().datamodel.models as unknown as Record<string, { fields: Array<{ name: string }> }>)
    .filter(([, m]) => m.fields.some((f) => f.name === "updatedAt"))
    .map(([name]) => name),
);

/** `Rank Record: 12`: the `label` every non-link row shows. */
export const labelOf = (def: ResourceDef, row: Row) => `${def.label}: ${row.id}`;

/** One attribute: where its value comes from and how it is shown (the serialisation its GraphQL field has). */
type Attribute = { key: string; type: FieldType } &
  /** A column's value, read from the row. */
  (| { column: string; value?: undefined }
    /** A computed value. */
    | { column?: undefined; value: (row: Row, ctx: Context) => unknown }
  );

/**
 * The attributes of `def`'s rows in the order REST shows them: id, label, the visible columns, the computed fields,
 * then the timestamps; snake_case keys.
 */
function attributesOf(def: ResourceDef, { otherRows = true, privateFields = true } = {}): Attribute[] {
  const column = (name: string, type: FieldType): Attribute => ({ key: snake(name), column: name, type });
  const list: Attribute[] = [column("id", "int")];
  if (!def.link) list.push({ key: "label", value: (row) => labelOf(def, row), type: "json" });
  for (const [name, f] of Object.entries(def.fields))
    if (!f.hidden && (privateFields || !f.private)) list.push(column(name, f.type));
  for (const [name, c] of Object.entries(def.computed ?? {}))
    if (otherRows || !c.readsOtherRows) list.push({ key: snake(name), value: c.resolve, type: c.type });
  list.push(column("createdAt", "datetime"));
  if (hasUpdatedAt(def.model)) list.push(column("updatedAt", "datetime"));
  return list;
}

/** A value already in its shown form needs no serialiser call: the test for each type, as an expression on `v`. */
const shownAsIs: Record<FieldType, string | null> = {
  string: `typeof v === "string"`,
  text: `typeof v === "string"`,
  boolean: `typeof v === "boolean"`,
  int: `typeof v === "number" && (v | 0) === v`,
  datetime: null,
  json: "true",
};

type Attributes = (row: Row, ctx: Context) => Row | Promise<Row>;

/**
 * One function per resource that builds a row's attributes as a single object literal, generated from the list
 * (`new Function`): REST shows every attribute of every row, and the generic loop (a call per attribute to read it
 * and another to serialise it, then a property added at a time) was the largest part of executing W1's documents
 * (bench/FINDINGS.md). Keys and columns come from the registry, written into the source with JSON.stringify.
 * Computed values that load in batches (a DataLoader) are awaited together, so the object keeps its key order.
 */
function compileAttributes(attributes: Attribute[]): Attributes {
  const lines: string[] = [];
  const entries: string[] = [];
  const settle: string[] = [];
  attributes.forEach((a, i) => {
    const read = a.column ? `row[${JSON.stringify(a.column)}]` : `value${i}(row, ctx)`;
    const asIs = shownAsIs[a.type];
    const shown = (v: string) =>
      `(${v} == null ? null : ${asIs === "true" ? v : asIs ? `((v = ${v}), ${asIs}) ? v : serialize${i}(v)` : `serialize${i}(${v})`})`;
    if (a.column) {
      entries.push(`${JSON.stringify(a.key)}: ${shown(read)}`);
    } else {
      lines.push(`const raw${i} = ${read};`, `const later${i} = isPromise(raw${i});`);
      entries.push(`${JSON.stringify(a.key)}: later${i} ? null : ${shown(`raw${i}`)}`);
      settle.push(
        `if (later${i}) (pending ??= []).push(raw${i}.then((loaded) => { out[${JSON.stringify(a.key)}] = ${shown("loaded")}; }));`,
      );
    }
  });
  const source = [
    "return function attributes(row, ctx) {",
    "let v, pending;",
    ...lines,
    `const out = {${entries.join(", ")}};`,
    ...settle,
    "return pending ? Promise.all(pending).then(() => out) : out;",
    "};",
  ].join("\n");
  const names = attributes.flatMap((a, i) => [`value${i}`, `serialize${i}`]);
  const values = attributes.flatMap((a) => [a.value, serializers[a.type]]);
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- a compiled row serialiser, from our own column names
  return new Function("isPromise", ...names, source)(isPromise, ...values) as Attributes;
}

/**
 * A row's attributes as REST shows them, but for the computed ones that read other rows: what an event carries as
 * `data`. A custom-field column REST spreads is spread here too.
 */
export function eventAttributes(def: ResourceDef): (row: Row, ctx: Context) => Row {
  const attributes = compileAttributes(attributesOf(def, { otherRows: false }));
  const spread = def.spread && snake(def.spread);
  return (row, ctx) => {
    const out = attributes(row, ctx) as Row;
    if (spread) spreadAttribute(out, spread);
    return out;
  };
}

/** Moves the keys of the JSON attribute `key` (custom-field values) to the top level of `out`, as REST shows them. */
export function spreadAttribute(out: Row, key: string): void {
  const values = out[key];
  delete out[key];
  if (values && typeof values === "object")
    for (const [k, v] of Object.entries(values)) if (!Object.hasOwn(out, k)) out[k] = v;
}

const isPromise = (value: unknown): value is Promise<unknown> =>
  typeof (value as Promise<unknown> | null)?.then === "function";

/**
 * Resolver of the `attributes` field: every attribute of a row in one JSON object, as its own GraphQL fields would
 * give them. A REST row selects this one field instead of one field per column, so a 20-row page with its includes
 * executes about a hundred fields instead of some fifteen hundred.
 */
export function attributesResolver(def: ResourceDef): Attributes {
  const every = compileAttributes(attributesOf(def));
  if (!Object.values(def.fields).some((f) => f.private && !f.hidden)) return every;
  // A publishable key's rows leave the private fields out (src/data/access.ts `hidesPrivate`), in every include too.
  const publicOnly = compileAttributes(attributesOf(def, { privateFields: false }));
  return (row, ctx) => (hidesPrivate(ctx.auth) ? publicOnly : every)(row, ctx);
}
