import { CAPTCHA_TOKEN_KEYS } from "../rest/public-forms.ts";
import type { OperationKind, PivotDef, ResourceDef } from "../resources/define.ts";
import { pivotOf, type Operation } from "../resources/operations.ts";
import { pascal, snake } from "../core/names.ts";
import { Components, fieldSchema, idSchema, nullable, object, schemaName, type Schema } from "./schema.ts";
import { includeValues } from "./parameters.ts";
import { openapiKinds } from "./kinds.ts";
import { filterableFields, operators } from "../data/search.ts";

type Mode = "create" | "update";
type Encoding = "json" | "multipart";

const created = { type: "string", description: "Overrides the timestamp (ISO-8601 or `YYYY-MM-DD HH:MM:SS`)." };

/** Columns a nested route sets itself on create: the parent's foreign key, or the polymorphic owner. */
function fixedColumns(op: Operation): string[] {
  const relation = op.parent?.relation;
  if (relation?.kind === "hasMany") return [relation.foreignKey];
  if (relation?.kind === "morphOne" || relation?.kind === "morphMany") return ["modelType", "modelId"];
  return [];
}

/** The configurable cap on `resources` (see `BATCH_MAX_ITEMS`); beyond it a 422. */
const capped = "At most `BATCH_MAX_ITEMS` items (1000 unless configured).";
const idMap = (value: Schema): Schema => ({
  type: "object",
  propertyNames: { pattern: "^[1-9][0-9]*$" },
  additionalProperties: value,
});

/** Request body schemas of the registry, by operation kind. */
export class Bodies {
  constructor(readonly components: Components) {}

  /** A resource's writable attributes, snake_case, as a create or update accepts them. */
  attributes(def: ResourceDef, mode: Mode, encoding: Encoding, fixed: string[] = [], prefix = ""): Schema {
    const name = `${prefix}${schemaName(def)}${pascal(mode)}${encoding === "multipart" ? "Multipart" : ""}`;
    return this.components.ref(name, () => {
      const properties: Record<string, Schema> = {};
      const required: string[] = [];
      for (const [key, f] of Object.entries(def.fields)) {
        if (f.writable === false || key === def.spread || (mode === "create" && fixed.includes(key))) continue;
        properties[snake(key)] = fieldSchema(f, true);
        if (mode === "create" && f.required) required.push(snake(key));
      }
      for (const [key, upload] of Object.entries(def.uploads ?? {})) {
        const file: Schema =
          encoding === "multipart"
            ? {
                type: "string",
                format: "binary",
                contentMediaType: upload.image ? "image/*" : "application/octet-stream",
              }
            : { type: "string", pattern: "^data:", description: "The file as a `data:` URI (base64)." };
        properties[snake(key)] = upload.required ? file : nullable(file);
        if (mode === "create" && upload.required) required.push(snake(key));
      }
      properties.created_at = nullable(created);
      properties.updated_at = nullable(created);
      const spread = def.spread
        ? {
            description: `Any other attribute is a custom value, kept in \`${snake(def.spread)}\`.`,
            additionalProperties: true,
          }
        : {};
      return object(properties, required, spread);
    });
  }

  pivot(pivot: PivotDef): Schema {
    if (Object.keys(pivot.fields).length === 0)
      return { type: "object", description: `${pivot.model} has no writable link columns.` };
    return this.components.ref(`${pivot.model}Pivot`, () =>
      object(
        Object.fromEntries(
          Object.entries(pivot.fields)
            .filter(([, f]) => f.writable !== false)
            .map(([k, f]) => [snake(k), fieldSchema(f, true)]),
        ),
      ),
    );
  }

  /** A create or update body: the attributes, plus the link columns under `pivot` on many-to-many routes that have them. */
  private write(op: Operation, mode: Mode, encoding: Encoding): Schema {
    const fixed = mode === "create" ? fixedColumns(op) : [];
    const attributes = this.attributes(
      op.def,
      mode,
      encoding,
      fixed,
      fixed.length && op.parent ? schemaName(op.parent.def) : "",
    );
    const pivot = pivotOf(op);
    if (!pivot || Object.keys(pivot.fields).length === 0) return attributes;
    const columns = this.components.schemas[String(attributes.$ref).split("/").at(-1)!];
    return this.components.ref(
      this.shapeName(op, `${pascal(mode)}${encoding === "multipart" ? "Multipart" : ""}`),
      () => ({
        ...columns,
        properties: { ...(columns.properties as Record<string, Schema>), pivot: this.pivot(pivot) },
      }),
    );
  }

  /** `resources` of attach, sync and toggle: ids, `{id, pivot}` objects, an object keyed by id, or one id. */
  private linkResources(op: Operation): Schema {
    const pivot = pivotOf(op);
    return this.components.ref(`${pivot?.model ?? schemaName(op.def)}Resources`, () => {
      const values = pivot ? this.pivot(pivot) : { type: "object" };
      return {
        description: `Related ids: a list of ids or of \`{id, pivot}\` objects, an object keyed by id whose values are link columns, or one id. ${capped}`,
        anyOf: [
          {
            type: "array",
            items: {
              anyOf: [this.id(), object({ id: this.id(), pivot: values }, ["id"], { additionalProperties: true })],
            },
          },
          idMap({ anyOf: [values, { type: "array", maxItems: 0 }] }),
          this.id(),
        ],
      };
    });
  }

  id(): Schema {
    return this.components.ref("Id", () => idSchema);
  }

  private idsBody(): Schema {
    return this.components.ref("IdsRequest", () =>
      object(
        {
          resources: {
            description: `Ids: a list, or one id. ${capped}`,
            anyOf: [{ type: "array", items: this.id() }, this.id()],
          },
        },
        ["resources"],
      ),
    );
  }

  /** Names a body after the operation's write shape: the resource, and the link model where link columns come along. */
  private shapeName(op: Operation, what: string): string {
    const pivot = pivotOf(op);
    const withPivot = pivot && Object.keys(pivot.fields).length ? pivot.model : "";
    const prefix = fixedColumns(op).length && op.parent ? schemaName(op.parent.def) : "";
    return `${prefix}${schemaName(op.def)}${withPivot ? `Via${withPivot}` : ""}${what}`;
  }

  /** A column name `filters` and `sort` accept: the listed rows' columns, or `relation.column` / `pivot.column`. */
  private column(op: Operation): Schema {
    const names = filterableFields(op.def, pivotOf(op));
    const exact = names.filter((n) => !n.endsWith(".*"));
    const prefixes = names.filter((n) => n.endsWith(".*")).map((n) => n.slice(0, -2));
    const anyOf: Schema[] = [{ type: "string", enum: exact }];
    if (prefixes.length) anyOf.push({ type: "string", pattern: `^(?:${prefixes.join("|")})\\.[a-z0-9_]+$` });
    return { description: `One of ${names.map((n) => `\`${n}\``).join(", ")}.`, anyOf };
  }

  /** Orion's search body: `filters` (nested one level), `scopes`, `search`, `sort`, `includes`, `page`, `limit`. */
  private search(op: Operation): Schema {
    const pivot = pivotOf(op);
    const shape = `${schemaName(op.def)}${pivot ? `Via${pivot.model}` : ""}`;
    const condition = (nested?: Schema): Schema => ({
      type: "object",
      additionalProperties: false,
      properties: {
        type: { type: "string", enum: ["and", "or"], default: "and" },
        field: this.column(op),
        operator: { type: "string", enum: [...operators], default: "=" },
        value: { description: "The value compared with: a list for the `in` operators." },
        ...(nested ? { nested: { type: "array", items: nested } } : {}),
      },
    });
    const filter = this.components.ref(`${shape}SearchFilter`, () =>
      condition(this.components.ref(`${shape}SearchCondition`, () => condition())),
    );
    return this.components.ref(`${pascal(op.field)}${pascal(op.kind)}Request`, () => {
      const scopes = Object.entries(op.def.scopes ?? {});
      const includes = includeValues(op);
      const relation = { type: "string", enum: includes };
      return object({
        filters: { type: "array", items: filter },
        scopes: {
          type: "array",
          items: scopes.length
            ? {
                anyOf: scopes.map(([name, s]) =>
                  object(
                    {
                      name: { const: name },
                      parameters: {
                        type: "array",
                        ...(s.parameters !== undefined ? { minItems: s.parameters, maxItems: s.parameters } : {}),
                      },
                    },
                    ["name"],
                  ),
                ),
              }
            : { not: {}, description: "This collection exposes no scopes." },
        },
        search: object({
          value: { type: ["string", "null"], description: "Matched against every text column." },
          case_sensitive: { type: "boolean", default: false },
        }),
        sort: {
          type: "array",
          items: object(
            { field: this.column(op), direction: { type: "string", enum: ["asc", "desc"], default: "asc" } },
            ["field"],
            { additionalProperties: false },
          ),
        },
        includes: includes.length
          ? { type: "array", items: { anyOf: [relation, object({ relation }, ["relation"])] } }
          : { type: "array", maxItems: 0, description: "This collection allows no includes." },
        aggregates: { type: "array", maxItems: 0, description: "No aggregates are available." },
        page: { type: "integer", minimum: 1 },
        limit: { type: "integer", minimum: 1 },
      });
    });
  }

  /** The body schema of each kind; `undefined` when the kind takes none. */
  private readonly byKind: Record<
    OperationKind,
    ((op: Operation, encoding: Encoding) => Schema | undefined) | undefined
  > = {
    list: undefined,
    show: undefined,
    delete: undefined,
    dissociate: undefined,
    command: undefined,
    feed: undefined,
    publicShow: undefined,
    publicSubmit: () =>
      this.components.ref("PublicSubmissionRequest", () =>
        object(
          Object.fromEntries(
            CAPTCHA_TOKEN_KEYS.map((k) => [
              k,
              {
                type: "string",
                description:
                  k === "captcha_token"
                    ? "The captcha's token, when the server verifies captchas (or under the key its widget posts)."
                    : "The captcha's token as this vendor's widget posts it.",
              },
            ]),
          ),
          [],
          {
            description:
              "The values of the form's fields, each under its field's `key` (a string, number or boolean); the submitter's name and email are the fields keyed `name` and `email`. A key that names no field of the form is a 422.",
            additionalProperties: { anyOf: [{ type: "string" }, { type: "number" }, { type: "boolean" }] },
          },
        ),
      ),
    // An action without input takes no body.
    action: (op) =>
      !op.action!.input
        ? undefined
        : this.components.ref(`${pascal(op.field)}Request`, () => {
            const input = Object.entries(op.action!.input ?? {});
            return object(
              Object.fromEntries(input.map(([k, f]) => [snake(k), fieldSchema(f, true)])),
              input.filter(([, f]) => f.required).map(([k]) => snake(k)),
            );
          }),
    create: (op, encoding) => this.write(op, "create", encoding),
    update: (op, encoding) => this.write(op, "update", encoding),
    search: (op) => this.search(op),
    batchCreate: (op) =>
      this.components.ref(this.shapeName(op, "BatchCreate"), () =>
        object({ resources: { type: "array", description: capped, items: this.write(op, "create", "json") } }, [
          "resources",
        ]),
      ),
    batchUpdate: (op) =>
      this.components.ref(this.shapeName(op, "BatchUpdate"), () =>
        object(
          {
            resources: {
              description: `Attributes keyed by id (or a list of ids, which changes nothing). ${capped}`,
              anyOf: [idMap(this.write(op, "update", "json")), { type: "array", items: this.id() }],
            },
          },
          ["resources"],
        ),
      ),
    batchDelete: () => this.idsBody(),
    detach: () => this.idsBody(),
    attach: (op) =>
      object(
        {
          resources: this.linkResources(op),
          duplicates: {
            type: "boolean",
            default: false,
            description: "Attach ids that are already attached once more.",
          },
        },
        ["resources"],
      ),
    sync: (op) =>
      object(
        {
          resources: this.linkResources(op),
          detaching: { type: "boolean", default: true, description: "Detach the ids not listed." },
        },
        ["resources"],
      ),
    toggle: (op) => object({ resources: this.linkResources(op) }, ["resources"]),
    pivot: (op) => object({ pivot: pivotOf(op) ? this.pivot(pivotOf(op)!) : { type: "object" } }, ["pivot"]),
    associate: (op) =>
      object({ related_key: { ...idSchema, description: `Id of the ${op.def.label.toLowerCase()} to associate.` } }, [
        "related_key",
      ]),
  };

  /** The operation's `requestBody`, with a multipart alternative where the resource stores uploads. */
  requestBody(op: Operation): Schema | undefined {
    const kind = openapiKinds[op.kind];
    const json = this.byKind[op.kind]?.(op, "json");
    if (!json) return undefined;
    const content: Record<string, Schema> = { "application/json": { schema: json } };
    if (kind.uploads && Object.keys(op.def.uploads ?? {}).length) {
      content["multipart/form-data"] = { schema: this.byKind[op.kind]!(op, "multipart")! };
    }
    return { required: kind.bodyRequired?.(op, fixedColumns(op)) ?? true, content };
  }
}
