import type { ComputedField, FieldDef, PivotDef, RelationDef, ResourceDef } from "../resources/define.ts";
import { linkResourceOf, resourceNamed } from "../resources/index.ts";
import { morphOwnersOf } from "../resources/index.ts";
import { hasUpdatedAt } from "../data/attributes.ts";
import { camel, pascal, snake } from "../core/names.ts";
import { jsonSchemaOf } from "../resources/json-shapes.ts";

/** A JSON Schema (2020-12, as OpenAPI 3.1 uses it). */
export type Schema = Record<string, unknown>;

/**
 * Named schemas under `components.schemas`, made on first reference. A later reference makes its
 * schema again, one level deep, and must get the same one: two shapes never share a name.
 */
export class Components {
  readonly schemas: Record<string, Schema> = {};
  private readonly making = new Set<string>();
  private checking = false;

  ref(name: string, make: () => Schema): Schema {
    const ref = { $ref: `#/components/schemas/${name}` };
    if (this.making.has(name) || (this.checking && name in this.schemas)) return ref;
    if (!(name in this.schemas)) {
      this.making.add(name);
      this.schemas[name] = make();
      this.making.delete(name);
      return ref;
    }
    this.checking = true;
    try {
      if (JSON.stringify(make()) !== JSON.stringify(this.schemas[name]))
        throw new Error(`OpenAPI: two different schemas are named ${name}`);
    } finally {
      this.checking = false;
    }
    return ref;
  }

  /**
   * A reference to `schema` under `base`, or under `base2`, `base3`... when a different schema holds
   * that name: equal schemas share one component.
   */
  named(base: string, schema: Schema): Schema {
    const text = JSON.stringify(schema);
    for (let n = 1; ; n++) {
      const name = n === 1 ? base : `${base}${n}`;
      const existing = this.schemas[name];
      if (existing && JSON.stringify(existing) !== text) continue;
      this.schemas[name] ??= schema;
      return { $ref: `#/components/schemas/${name}` };
    }
  }
}

/** The schema, or null. A schema without a type (any JSON value) already admits null. */
export const nullable = (schema: Schema): Schema => {
  if (typeof schema.type === "string")
    return {
      ...schema,
      type: [schema.type, "null"],
      ...(schema.enum ? { enum: [...(schema.enum as unknown[]), null] } : {}),
    };
  if (!["type", "$ref", "anyOf", "oneOf", "allOf"].some((k) => k in schema)) return schema;
  return { anyOf: [schema, { type: "null" }] };
};

export const object = (properties: Record<string, Schema>, required: string[] = [], extra: Schema = {}): Schema => ({
  type: "object",
  properties,
  ...(required.length ? { required } : {}),
  ...extra,
});

/** A positive 32-bit id, as path parameters and `resources` lists take them. */
export const idSchema: Schema = { type: "integer", minimum: 1, maximum: 2147483647 };

/** What `parseDate` accepts: ISO-8601, `YYYY-MM-DD` and `YYYY-MM-DD HH:MM:SS`, with an optional offset. */
const dateInput: Schema = {
  type: "string",
  pattern:
    "^\\s*\\d{4}-\\d{2}-\\d{2}(?:[Tt ]\\d{2}:\\d{2}(?::\\d{2})?(?:\\.\\d+)?)?\\s*(?:[Zz]|[+-]\\d{2}:?\\d{2})?\\s*$",
  description: "ISO-8601 date-time, `YYYY-MM-DD` or `YYYY-MM-DD HH:MM:SS` (UTC unless an offset is given).",
};

/**
 * An ECMA-262 pattern without flags: JSON Schema has none, so a case-insensitive expression is
 * rewritten with both cases of each letter (`a-z` → `a-zA-Z`, `x` → `[xX]`).
 */
export function patternOf(re: RegExp): string {
  if (!re.flags.includes("i")) return re.source;
  const other = (c: string) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase());
  const isLetter = (c: string | undefined) => !!c && /[a-z]/i.test(c);
  const src = re.source;
  let out = "";
  let inClass = false;
  let extra = "";
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === "\\") {
      out += c + (src[i + 1] ?? "");
      i++;
    } else if (inClass) {
      if (c === "]") {
        out += extra + c;
        inClass = false;
      } else if (isLetter(c) && src[i + 1] === "-" && isLetter(src[i + 2])) {
        out += `${c}-${src[i + 2]}`;
        extra += `${other(c)}-${other(src[i + 2])}`;
        i += 2;
      } else {
        out += c;
        if (isLetter(c)) extra += other(c);
      }
    } else if (c === "[") {
      inClass = true;
      extra = "";
      out += c;
      if (src[i + 1] === "^") out += src[++i];
    } else if (c === "(" && src.startsWith("(?<", i) && !src.startsWith("(?<=", i) && !src.startsWith("(?<!", i)) {
      const end = src.indexOf(">", i);
      out += src.slice(i, end + 1);
      i = end;
    } else if (isLetter(c)) {
      out += `[${c}${other(c)}]`;
    } else out += c;
  }
  return out;
}

/** "a rank", "an award", "a user": by sound, so a `u` read as "you" (user, unit) takes "a". */
export const article = (noun: string) =>
  `${/^(?:[aeio]|u(?![b-df-hj-np-tv-z][aeiou]))/i.test(noun) ? "an" : "a"} ${noun}`;

const notes = (f: FieldDef): string[] => [
  ...(f.references ? [`Id of ${article(resourceNamed(f.references).label.toLowerCase())} of the account.`] : []),
  ...(f.unique ? ["Unique within the account."] : []),
  ...(f.autoOrder ? ["After the last one when omitted on create."] : []),
  ...(f.defaultsToCaller
    ? [
        "The caller when omitted on create: the signed-in person (an SSO or access token), or the API key's user. A person's token may name only them unless it has `*`.",
      ]
    : []),
];

/** A column's value, as the API returns it (`input: false`) or accepts it (`input: true`). */
export function fieldSchema(f: Pick<FieldDef, "type"> & Partial<FieldDef>, input = false): Schema {
  if (f.type === "json") {
    const shape = input ? (f.input ?? f.shape) : f.shape;
    if (!shape) throw new Error("OpenAPI: a json field declares no shape (FieldDef.shape)");
    const schema = jsonSchemaOf(shape, input);
    return f.nullable ? nullable(schema) : schema;
  }
  let schema: Schema =
    f.type === "int"
      ? { type: "integer" }
      : f.type === "boolean"
        ? { type: "boolean" }
        : f.type === "datetime"
          ? input
            ? { ...dateInput }
            : { type: "string", format: "date-time" }
          : { type: "string" };
  if (f.max !== undefined && (f.type === "string" || f.type === "text")) schema.maxLength = f.max;
  if (input && f.pattern) schema.pattern = patternOf(f.pattern);
  if (f.oneOf) schema.enum = [...f.oneOf];
  const description = [schema.description as string | undefined, ...(input ? notes(f as FieldDef) : [])]
    .filter(Boolean)
    .join(" ");
  if (description) schema.description = description;
  if (f.nullable) schema = nullable(schema);
  return schema;
}

const computedSchema = (c: ComputedField): Schema => {
  const schema: Schema =
    c.type === "json"
      ? c.shape
        ? jsonSchemaOf(c.shape)
        : {}
      : c.type === "datetime"
        ? { type: "string", format: "date-time" }
        : { type: c.type };
  return c.nullable ? nullable(schema) : schema;
};

/** The component name of a resource's rows. */
export const schemaName = (def: ResourceDef) => pascal(def.name);

/** Relations to embed, by REST name, each with the relations embedded under it: an `include` list as a tree. */
export type IncludeTree = Map<string, IncludeTree>;

/** The tree of `include` values (`rank.image` → rank → image); `x.*` stands for `x`, its expansions are listed beside it. */
export function includeTree(values: readonly string[]): IncludeTree {
  const root: IncludeTree = new Map();
  for (const value of values) {
    let at = root;
    for (const segment of value.replace(/\.\*$/, "").split(".")) {
      if (!at.has(segment)) at.set(segment, new Map());
      at = at.get(segment)!;
    }
  }
  return root;
}

const none: IncludeTree = new Map();
const byName = ([a]: [string, IncludeTree], [b]: [string, IncludeTree]) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Row schemas of the registry. A resource's component (`Rank`) holds its columns only: snake_case
 * columns, computed fields, `id`, `label`, timestamps. What an operation can embed is spelled out
 * from its `include` tree, as rows that name the component of each embedded resource
 * (`RankWithImage`: a rank's columns and `image`). Each tree is finite, so no schema refers back to
 * itself through another: renderers can expand every reference eagerly, and no `allOf` is needed.
 */
export class RowSchemas {
  constructor(readonly components: Components) {}

  /** A row of `def` with the relations of `tree` embedded. */
  row(def: ResourceDef, tree: IncludeTree = none): Schema {
    const plain = this.components.ref(schemaName(def), () => this.columns(def));
    const relations = [...tree].filter(([name]) => name in def.relations && !def.link).sort(byName);
    if (!relations.length) return plain;
    const schema = this.columns(def);
    Object.assign(schema.properties as Record<string, Schema>, this.relations(def, relations));
    return this.components.named(`${schemaName(def)}${withName(relations)}`, schema);
  }

  /** A row listed through a many-to-many relation: the related row plus the link columns under `pivot.as`. */
  linkRow(pivot: PivotDef, tree: IncludeTree = none): Schema {
    const related = resourceNamed(pivot.related);
    const relations = [...tree].filter(([name]) => name !== pivot.as && name in related.relations).sort(byName);
    const schema = this.columns(related);
    (schema.properties as Record<string, Schema>)[pivot.as] = this.row(linkResourceOf(pivot));
    if (pivot.always) schema.required = [...(schema.required as string[]), pivot.as];
    Object.assign(schema.properties as Record<string, Schema>, this.relations(related, relations));
    schema.description = `${pascal(article(related.label.toLowerCase()))} with its ${pivot.model} link columns under \`${pivot.as}\`${pivot.always ? "" : " (when included)"}.`;
    return this.components.named(`${schemaName(related)}Via${pivot.model}${withName(relations)}`, schema);
  }

  private columns(def: ResourceDef): Schema {
    const properties: Record<string, Schema> = { id: { type: "integer" } };
    if (!def.link) properties.label = { type: "string", examples: [`${def.label}: 1`] };
    for (const [name, f] of Object.entries(def.fields)) {
      if (f.hidden || name === def.spread) continue;
      properties[snake(name)] = fieldSchema(f);
    }
    for (const [name, c] of Object.entries(def.computed ?? {})) properties[snake(name)] = computedSchema(c);
    properties.created_at = { type: "string", format: "date-time" };
    if (hasUpdatedAt(def.model)) properties.updated_at = { type: "string", format: "date-time" };
    const spread = def.spread
      ? {
          description: `Custom values (the \`${snake(def.spread)}\` column) are shown as further top-level attributes.`,
          additionalProperties: true,
        }
      : {};
    return object(properties, Object.keys(properties), {
      ...(def.link ? { description: `Link columns of ${def.label.toLowerCase()}.` } : {}),
      ...spread,
    });
  }

  private relations(def: ResourceDef, relations: Array<[string, IncludeTree]>): Record<string, Schema> {
    return Object.fromEntries(relations.map(([name, below]) => [name, this.relation(def.relations[name], below)]));
  }

  private relation(relation: RelationDef, below: IncludeTree): Schema {
    switch (relation.kind) {
      case "belongsTo":
      case "morphOne":
        return nullable(this.row(resourceNamed(relation.target), below));
      case "hasMany":
      case "morphMany":
        return { type: "array", items: this.row(resourceNamed(relation.target), below) };
      case "belongsToMany":
        return { type: "array", items: this.linkRow(relation.pivot, below) };
      case "morphTo": {
        const owners = morphOwnersOf(relation.morphRelation);
        return owners.length ? nullable({ anyOf: owners.map((o) => this.row(o)) }) : { type: "null" };
      }
    }
  }
}

/** `WithImage`, `WithAuthorCommentable`: the embedded relations when few, else `WithIncludes`. */
const withName = (relations: Array<[string, IncludeTree]>) =>
  !relations.length
    ? ""
    : relations.length <= 3
      ? `With${relations.map(([name]) => pascal(camel(name))).join("")}`
      : "WithIncludes";
