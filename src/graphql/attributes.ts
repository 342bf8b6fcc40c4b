import { GraphQLBoolean, GraphQLInt, GraphQLString } from "graphql";
import type { FieldType, ResourceDef } from "../resources/define.ts";
import type { Builder } from "./builder.ts";
import type { Context } from "./context.ts";
import type { ObjectRefs } from "./objects.ts";
import { resources } from "../resources/index.ts";
import { snake } from "./names.ts";
import { formatDate } from "./scalars.ts";
import { getDatamodel } from "../generated/pothos-types.ts";

type Row = Record<string, any>;
type Serialize = (value: unknown) => unknown;

const asIs: Serialize = (value) => value;
const serializers: Record<FieldType | "datetime", Serialize> = {
  string: GraphQLString.serialize, text: GraphQLString.serialize, int: GraphQLInt.serialize, boolean: GraphQLBoolean.serialize,
  datetime: (value) => formatDate(value as Date | string), json: asIs,
};

const everyColumn = (model: string) => Object.fromEntries(
  (getDatamodel().datamodel.models as unknown as Record<string, { fields: Array<{ name: string; kind: string }> }>)[model]!.fields
    .filter((f) => f.kind === "scalar" || f.kind === "enum").map((f) => [f.name, true]),
);

/** Whether rows of `model` keep when they last changed: an append-only log (webhook deliveries) has no `updatedAt`. */
export const hasUpdatedAt = (model: string): boolean => withUpdatedAt.has(model);
const withUpdatedAt = new Set(
  Object.entries(getDatamodel().datamodel.models as unknown as Record<string, { fields: Array<{ name: string }> }>)
    .filter(([, m]) => m.fields.some((f) => f.name === "updatedAt")).map(([name]) => name),
);

/** `Rank Record: 12`: the `label` every non-link row shows. */
export const labelOf = (def: ResourceDef, row: Row) => `${def.label}: ${row.id}`;

/** One attribute: where its value comes from and how it is shown (the serialisation its GraphQL field has). */
interface Attribute {
  key: string;
  value: (row: Row, ctx: Context) => unknown;
  serialize: Serialize;
}

/**
 * The attributes of `def`'s rows in the order REST shows them: id, label, the visible columns, the computed fields,
 * then the timestamps; snake_case keys.
 */
function attributesOf(def: ResourceDef, { otherRows = true } = {}): Attribute[] {
  const column = (name: string, type: FieldType): Attribute => ({ key: snake(name), value: (row) => row[name], serialize: serializers[type] });
  const list: Attribute[] = [column("id", "int")];
  if (!def.link) list.push({ key: "label", value: (row) => labelOf(def, row), serialize: asIs });
  for (const [name, f] of Object.entries(def.fields)) if (!f.hidden) list.push(column(name, f.type));
  for (const [name, c] of Object.entries(def.computed ?? {})) if (otherRows || !c.readsOtherRows) list.push({ key: snake(name), value: c.resolve, serialize: serializers[c.type] });
  list.push(column("createdAt", "datetime"));
  if (hasUpdatedAt(def.model)) list.push(column("updatedAt", "datetime"));
  return list;
}

/**
 * A row's attributes as REST shows them, but for the computed ones that read other rows: what an event carries as
 * `data`. A custom-field column REST spreads is spread here too.
 */
export function eventAttributes(def: ResourceDef): (row: Row, ctx: Context) => Row {
  const attributes = attributesOf(def, { otherRows: false });
  const spread = def.spread && snake(def.spread);
  return (row, ctx) => {
    const out: Row = {};
    for (const { key, value, serialize } of attributes) {
      const raw = value(row, ctx);
      out[key] = raw == null ? null : serialize(raw);
    }
    if (spread) spreadAttribute(out, spread);
    return out;
  };
}

/** Moves the keys of the JSON attribute `key` (custom-field values) to the top level of `out`, as REST shows them. */
export function spreadAttribute(out: Row, key: string): void {
  const values = out[key];
  delete out[key];
  if (values && typeof values === "object") for (const [k, v] of Object.entries(values)) if (!Object.hasOwn(out, k)) out[k] = v;
}

const isPromise = (value: unknown): value is Promise<unknown> => typeof (value as Promise<unknown> | null)?.then === "function";

/**
 * Resolver of the `attributes` field: every attribute of a row in one JSON object, as its own GraphQL fields would
 * give them. A REST row selects this one field instead of one field per column, so a 20-row page with its includes
 * executes about a hundred fields instead of some fifteen hundred. Computed values that load in batches (a DataLoader)
 * are awaited together, so the object keeps its key order.
 */
export function attributesResolver(def: ResourceDef): (row: Row, ctx: Context) => Row | Promise<Row> {
  const attributes = attributesOf(def);
  return (row, ctx) => {
    const out: Row = {};
    let pending: Promise<unknown>[] | undefined;
    for (const { key, value, serialize } of attributes) {
      const raw = value(row, ctx);
      if (isPromise(raw)) {
        out[key] = null;
        (pending ??= []).push(raw.then((loaded) => void (out[key] = loaded == null ? null : serialize(loaded))));
      } else {
        out[key] = raw == null ? null : serialize(raw);
      }
    }
    return pending ? Promise.all(pending).then(() => out) : out;
  };
}

/**
 * `attributes: JSON!` on every resource's type, in the internal graph only: REST documents select it, GraphQL clients
 * select the typed fields (it says nothing they do not, and a JSON blob is no API for a front-end).
 */
export function addAttributesFields(builder: Builder, refs: ObjectRefs): void {
  const b = builder as any;
  for (const def of resources) {
    const attributes = attributesResolver(def);
    b.prismaObjectField(refs.objects.get(def.name), "attributes", (t: any) => t.field({
      // Every column: the attributes, the computed fields' inputs, and a custom-field column REST spreads.
      select: everyColumn(def.model),
      type: "JSON",
      subGraphs: ["internal"],
      description: "The row's columns and computed fields in one object, as the REST API shows them: snake_case keys, PERSCOM dates.",
      resolve: (row: Row, _args: unknown, ctx: Context) => attributes(row, ctx),
    }));
  }
}
