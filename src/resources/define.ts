import type { Context } from "../request/context.ts";
import type { StoreTransaction } from "../db/transaction.ts";
import type { InsertedId } from "../db/writer.ts";
import { wireValues, type EnumDef } from "./enums.ts";
import type { JsonShape, ShapeProblem } from "./json-shapes.ts";
import type { Prisma } from "../generated/prisma/client.ts";

/** A Prisma model of the schema (`Rank`, `RankRecord`). */
export type ModelName = Prisma.ModelName;
/** The scalar columns of model `M`, as Prisma names them (camelCase). */
export type ColumnOf<M extends ModelName> = keyof Prisma.TypeMap["model"][M]["payload"]["scalars"] & string;
/** A row of model `M`: its scalar columns as Prisma types them (the same `TypeMap` as `ColumnOf`). */
export type ModelRow<M extends ModelName> = Prisma.TypeMap["model"][M]["payload"]["scalars"];
/** A row of a resource whose model is known only at run time (the registry's erased form): its values are unknown. */
export type AnyRow = Record<string, unknown>;
/**
 * The row a hook or callback of a resource of model `M` is given: `M`'s row (`ModelRow`) where `M` is one model, as in
 * a resource file; `AnyRow` where it is every model, as in the registry (`ResourceDef`), which code above reads.
 */
export type RowOf<M extends ModelName> = ModelName extends M ? AnyRow : ModelRow<M>;
/** The values of a new row of `M` about to be inserted: what the write sets; the database fills the rest (`id`). */
export type InsertValues<M extends ModelName> = Partial<RowOf<M>>;
/** A new row of `M` right behind its INSERT (`Hooks.afterInsert`): its `id` an `InsertedId` where statements pipeline. */
export type InsertedRow<M extends ModelName> = Omit<RowOf<M>, "id"> & { id: number | InsertedId };
/** A resource's fields: keyed by its model's columns only, so a misspelt key fails to compile. */
export type FieldsOf<M extends ModelName> = { [K in ColumnOf<M>]?: FieldDef };

export type FieldType = "string" | "text" | "int" | "boolean" | "datetime" | "json";

/** A column of a resource as the API sees it. Keys are Prisma field names (camelCase); REST uses snake_case. */
export interface FieldDef {
  type: FieldType;
  /** What the column holds, for API documentation; defaults to the shared wording of its name (descriptions.ts). */
  description?: string;
  /** Accepts and returns null. */
  nullable?: boolean;
  /** Must be present on create. */
  required?: boolean;
  /** Maximum length of a string. */
  max?: number;
  /** Foreign key: the referenced resource's name; the id must exist in the caller's account. */
  references?: string;
  /** A polymorphic key: the column holding the referenced row's morph class (`subjectType` for `subjectId`). */
  morphType?: string;
  /** Unique within the account. */
  unique?: boolean;
  oneOf?: readonly (string | number)[];
  /** The closed set the values come from (src/resources/enums.ts): a GraphQL enum; REST keeps the wire values. */
  enum?: EnumDef;
  pattern?: RegExp;
  /** False for columns the API shows but never writes. */
  writable?: boolean;
  /** `max(order)+1` within the account when omitted on create. */
  autoOrder?: boolean;
  /** Set to the caller on create when omitted: the signed-in person, or the API key's user (src/data/write.ts). */
  defaultsToCaller?: boolean;
  /** Not shown in GraphQL or REST. */
  hidden?: boolean;
  /**
   * Personal: never shown to a publishable key (absent on REST, null with a FORBIDDEN error on GraphQL), whatever its
   * scopes (src/resources/publishable.ts).
   */
  private?: boolean;
  /**
   * A JSON column's shape (src/resources/json-shapes.ts), declared once: its OpenAPI schema, the check of a write, and
   * its GraphQL type where closed (else `JSON`).
   */
  shape?: JsonShape;
  /** What a REST write may send where it is wider than `shape` (PERSCOM's forms); GraphQL inputs take `shape`. */
  input?: JsonShape;
  /**
   * The field's error when a write does not fit the shape (or, a string, the `pattern`), in place of the generic one (`The x.0.label field must be a
   * string.`): one message under the field's key, or a message for the key of the part that does not fit.
   */
  invalid?: string | ((problem: ShapeProblem) => string);
}

export interface PivotDef {
  /** Prisma model of the link rows. */
  model: ModelName;
  /** Link row field naming the parent and the related row. */
  parentKey: string;
  relatedKey: string;
  /** Link relation that leads to the related row. */
  related: string;
  /** What one link row means, for API documentation. */
  description?: string;
  /** Writable link columns (pivot attributes). */
  fields: Record<string, FieldDef>;
  /** REST name under which the link columns are shown on the related row, when requested or `always`. */
  as: string;
  always?: boolean;
  /** Order of the related rows when listed through the parent. */
  orderBy?: Record<string, "asc" | "desc">[];
  /** Several links to the same related row are allowed (history rows such as status records); deleting removes links, not the related row. */
  duplicates?: boolean;
}

/**
 * A subset of a Prisma relation shown under its own GraphQL name: `primaryAssignmentRecords` reads
 * `assignmentRecords` where `type` is primary. On many-to-many relations `where` applies to the link rows.
 */
export interface RelationFilter {
  name: string;
  where: Record<string, unknown>;
}

export type RelationDef = (
  | { kind: "belongsTo"; target: string; field: string; foreignKey: string }
  | {
      kind: "hasMany";
      target: string;
      field: string;
      foreignKey: string;
      orderBy?: Record<string, "asc" | "desc">[];
      filter?: RelationFilter;
    }
  | { kind: "belongsToMany"; target: string; field: string; pivot: PivotDef; filter?: RelationFilter }
  | { kind: "morphOne" | "morphMany"; target: string; field: string }
  | { kind: "morphTo"; field: string; morphRelation: string }
) & {
  /** What the related rows are, for API documentation; defaults to wording from the relation's kind and target. */
  description?: string;
};

export type OperationKind =
  | "list"
  | "show"
  | "create"
  | "update"
  | "delete"
  | "search"
  | "batchCreate"
  | "batchUpdate"
  | "batchDelete"
  | "associate"
  | "dissociate"
  | "attach"
  | "detach"
  | "sync"
  | "toggle"
  | "pivot"
  | "command"
  | "action"
  | "feed"
  | "publicShow"
  | "publicSubmit";
/**
 * Kinds that work on rows (every kind but `command` and `action`, which a resource declares one by one, `feed`, and the
 * public routes a resource declares in `publicRoutes`).
 */
export type RowKind = Exclude<OperationKind, "command" | "action" | "feed" | "publicShow" | "publicSubmit">;

/**
 * A route anyone may call, without any credential (and alike with any): `/{version}/public/{account}/<path>`, the
 * account named by its slug. `publicShow` reads one public row (a public form and its fields); `publicSubmit` writes a
 * row under it (a submission) through the ordinary write path, held to the anonymous-write limits (captcha, rate).
 */
export interface PublicRouteDef {
  kind: "publicShow" | "publicSubmit";
  /** Below `/{version}/public/{account}`, with the resource's `{param}` (its slug or id). */
  path: string;
  /** GraphQL root field (public graph), and the REST facade's. */
  field: string;
  description: string;
}

/** A nested REST collection under `/{parent}/{id}/<path>`, served by one relation of the parent. */
export interface NestedRoute {
  path: string;
  param: string;
  relation: string;
  operations: RowKind[];
  /** Allowed `include` values per operation where they differ from the related resource's. */
  includes?: Partial<Record<RowKind, string[]>>;
}

/**
 * Writes a hook makes to other records (a rank record setting its user's rank, a newsfeed item): made through these so
 * they are recorded as events like the request's own writes (src/data/tracked.ts). `resource` is a registry name.
 */
export interface RecordWrites {
  create(resource: string, data: Record<string, unknown>): Promise<AnyRow>;
  /** Null when there is no row `id`. */
  update(resource: string, id: number, data: Record<string, unknown>): Promise<AnyRow | null>;
}

/**
 * What a resource of model `M` does around its writes. Its rows are typed by `M` (`RowOf`) in a resource file
 * (`defineResource<"User">`: `row.rankId` is a `number | null`, `row.rankid` fails to compile); the registry keeps the
 * erased form, `Hooks` (every model: rows of unknown values), which the methods' parameters make it assignable to.
 */
export interface Hooks<M extends ModelName = ModelName> {
  /** Adjusts the validated data before it is written; may throw ApiError. `fixed`: the columns the route sets. */
  beforeWrite?(args: {
    data: Record<string, unknown>;
    fixed: Record<string, unknown>;
    existing?: RowOf<M>;
    ctx: Context;
    tx: StoreTransaction;
    writes: RecordWrites;
    /** Every resource, for checks against the whole registry (a webhook's event types); the registry's own files cannot import it. */
    registry: readonly ResourceDef[];
    /** Every scope name a key can hold or a role can give (src/resources/scopes.ts), for the same reason. */
    scopes: readonly string[];
  }): Promise<void> | void;
  /** Refuses (throws ApiError) or prepares the deletion of the caller's rows `ids`, before anything is deleted. */
  beforeDelete?(args: { ids: number[]; ctx: Context; tx: StoreTransaction }): Promise<void>;
  /**
   * Writes a new row makes to other records, asked for just before its INSERT, which does not wait for their answers:
   * where the transaction pipelines its statements (`StoreTransaction.pipelines`) they and the INSERT go out in one
   * round trip, in that order. Only what the hook asks for before its first `await` goes ahead of the INSERT; their
   * events are recorded before the row's all the same. `row`: the values about to be inserted.
   */
  beforeInsert?(args: {
    row: InsertValues<M>;
    ctx: Context;
    tx: StoreTransaction;
    writes: RecordWrites;
  }): Promise<void>;
  /**
   * Writes a new row makes to other records that need no more of it than its values and its id, asked for right behind
   * its INSERT: where the transaction pipelines its statements they go out in the same round trip, with `row.id` an
   * `InsertedId` (src/db/writer.ts) that a write may store as a column's value; elsewhere `row` is the inserted row.
   * Their events are recorded after the row's.
   */
  afterInsert?(args: { row: InsertedRow<M>; ctx: Context; tx: StoreTransaction; writes: RecordWrites }): Promise<void>;
  afterCreate?(args: { row: RowOf<M>; ctx: Context; tx: StoreTransaction; writes: RecordWrites }): Promise<void> | void;
  /**
   * The hooks read rows by key only and write nothing a check depends on, so they leave the resource's writes free to
   * run beside others (src/data/independent-writes.ts).
   */
  independent?: boolean;
}

/**
 * Another entry point to a resource's rows with its own path, scopes and row filter, such as `/me`
 * (the key's user) or `/roster` (groups with their units and people always embedded).
 */
export interface ViewDef {
  /** REST path below `/{version}`, and the GraphQL list field; `show` adds `/{param}` and a singular field. */
  path: string;
  field: string;
  /** What the view lists, for API documentation. */
  description?: string;
  operations: ("list" | "show")[];
  /** Scopes required; empty means any valid key. */
  scopes: string[];
  where?(ctx: Context): Record<string, unknown>;
  /** Allowed `include` values; defaults to none. */
  includes?: string[];
  /** Relations embedded whether requested or not. */
  alwaysIncludes?: string[];
}

/** What a command answers besides a status: named strings, REST's `{ "data": {...} }`, a GraphQL object type. */
export interface CommandAnswer {
  /** The GraphQL object type of the answer (`SsoSecret`). */
  type: string;
  description: string;
  /** Each field (camelCase; REST shows it snake_case) with its description. */
  fields: Record<string, string>;
}

interface CommandBase {
  path: string;
  field: string;
  scopes: string[];
  description: string;
  /**
   * Only an API key may run it (and the CLI): a person's token holding every scope is refused (403), for this reason.
   * Scopes say what a credential may reach, not what kind of credential it is.
   */
  keysOnly?: string;
}

/**
 * An action on the account rather than on rows, such as `POST /cache`: answers `{ "status": ... }`, or, with an
 * `answer`, `{ "data": { ... } }` (a new secret, shown once).
 */
export type CommandDef = CommandBase &
  (
    | { answer?: undefined; run(ctx: Context): Promise<string> | string }
    | { answer: CommandAnswer; run(ctx: Context): Promise<Record<string, string>> }
  );

/**
 * An action on one row of the resource, such as `POST /webhooks/{webhook}/test`: a mutation taking the row's id (and
 * `input`, validated as a resource's fields are) that answers one row, of this resource or of `returns`.
 */
export interface ActionDef {
  /** REST path below the row: `POST /{path}/{param}/<path>`. */
  path: string;
  /** GraphQL mutation (public), and the REST facade's root field. */
  field: string;
  /** Verb of the scope it needs on the resource: `update` is `update:<scope>`. */
  ability: string;
  /** A few words for the API reference: "Rotate a webhook's secret". */
  summary: string;
  description: string;
  /** Attributes of the request body (snake_case in REST), beside the row id. */
  input?: Record<string, FieldDef>;
  /** The resource of the row it answers; the resource's own when absent. */
  returns?: string;
}

/**
 * The work of an action (src/events/actions.ts, by `ActionDef.field`): done on `row` (read in the caller's account:
 * another account's id is a 404), it answers the id of the row to show, read again as the request selects it. `row`
 * is a row of `M` (`ActionRun<"Webhook">`); the runners' table keeps the erased form, whose method parameter (`run`)
 * takes any of them.
 */
export type ActionRun<M extends ModelName = ModelName> = {
  run(args: { row: RowOf<M>; input: Record<string, unknown>; ctx: Context }): Promise<number>;
}["run"];

/** A named filter clients may apply in `POST .../search` (`{"scopes":[{"name":..,"parameters":[..]}]}`). */
export interface ExposedScope {
  parameters?: number;
  where(parameters: unknown[], ctx: Context): Record<string, unknown>;
}

/** A file a resource stores from an upload field: `column` receives the stored path. */
export interface UploadDef {
  column: string;
  /** Column receiving the client's file name, if the resource keeps it. */
  filenameColumn?: string;
  dir: string;
  image: boolean;
  /** Must be sent on create. */
  required?: boolean;
}

export interface ComputedField<M extends ModelName = ModelName> {
  type: "string" | "boolean" | "json" | "datetime";
  /** What the value is, for API documentation; defaults to the shared wording of its name (descriptions.ts). */
  description?: string;
  nullable?: boolean;
  /** The shape of a `json` value (src/resources/json-shapes.ts): its OpenAPI schema, and its GraphQL type where closed. */
  shape?: JsonShape;
  /** Columns the computation reads: `M`'s (any name in the registry's erased form). */
  needs: (ModelName extends M ? string : ColumnOf<M>)[];
  /** Shown only in the answer of the write that made it (a new secret); null in every other answer. */
  once?: boolean;
  /**
   * Read from other rows (a user's latest rank record): left out of events, which are made inside the write's
   * transaction, where such a read would see the rows as they were before it.
   */
  readsOtherRows?: boolean;
  /** `row` has the columns of `needs` (a row of `M`, as `Hooks`). */
  resolve(row: RowOf<M>, ctx: Context): unknown;
}

export interface ResourceDef {
  /** camelCase singular: GraphQL type is its PascalCase form. */
  name: string;
  /** What one row is, for API documentation (descriptions.ts words the resources that give none). */
  description?: string;
  /** The Prisma model of its rows. */
  model: ModelName;
  /** Scope noun: `view:<scope>`. */
  scope: string;
  /** Words of `label`: "Rank Record: 12". */
  label: string;
  /** Value stored in polymorphic `model_type` columns, as PERSCOM writes it. */
  morphClass: string;
  /** Top-level REST collection, e.g. `rank-records`; absent for resources reached only through others. */
  path?: string;
  param: string;
  plural: string;
  operations: RowKind[];
  fields: Record<string, FieldDef>;
  computed?: Record<string, ComputedField>;
  relations: Record<string, RelationDef>;
  /** Allowed `include` values on the resource's own routes. */
  includes: string[];
  orderBy: Record<string, "asc" | "desc">[];
  nested?: NestedRoute[];
  /** A JSON column whose keys are shown as top-level attributes (custom field values). */
  spread?: string;
  hooks?: Hooks;
  /** Files the resource stores, keyed by the (camelCase) input field that carries each one. */
  uploads?: Record<string, UploadDef>;
  views?: ViewDef[];
  commands?: CommandDef[];
  /** Actions on one row (`POST /{path}/{id}/<action>`). */
  actions?: ActionDef[];
  /** Routes anyone may call without a credential (`/public/{account}/...`). */
  publicRoutes?: PublicRouteDef[];
  /** Named filters for `search`. */
  scopes?: Record<string, ExposedScope>;
  /** Link model: no account column of its own; reached through its parents. */
  link?: boolean;
  /** Its writes record no events in the outbox (webhooks themselves). */
  silent?: boolean;
}

/** What a resource file declares: a resource of model `M`, whose field keys are `M`'s columns (`FieldsOf`). */
export type ResourceInput<M extends ModelName = ModelName> = Omit<
  ResourceDef,
  | "model"
  | "fields"
  | "computed"
  | "hooks"
  | "morphClass"
  | "label"
  | "scope"
  | "plural"
  | "param"
  | "operations"
  | "relations"
  | "includes"
  | "orderBy"
> &
  Partial<
    Pick<
      ResourceDef,
      "morphClass" | "label" | "scope" | "plural" | "param" | "operations" | "relations" | "includes" | "orderBy"
    >
  > & {
    model: M;
    fields: FieldsOf<M>;
    /** Computed fields reading rows of `M` (`M` is inferred from `model` alone). */
    computed?: Record<string, ComputedField<NoInfer<M>>>;
    /** Hooks given rows of `M`. */
    hooks?: Hooks<NoInfer<M>>;
  };

const words = (name: string) => name.replace(/([a-z])([A-Z])/g, "$1 $2");
/** Orion's resource routes: CRUD, the three batch routes and search. */
export const crud: RowKind[] = [
  "list",
  "show",
  "create",
  "update",
  "delete",
  "batchCreate",
  "batchUpdate",
  "batchDelete",
  "search",
];
/** A has-many collection under its parent: crud plus associate/dissociate. */
export const hasManyOperations: RowKind[] = [...crud, "associate", "dissociate"];
/** A many-to-many collection under its parent: crud plus the link operations. */
export const m2mOperations: RowKind[] = [...crud, "attach", "detach", "sync", "toggle", "pivot"];
/** The parent's one related row (`/users/{user}/rank`): the trailing id is optional. */
export const belongsToOperations: RowKind[] = ["show", "update", "delete", "batchUpdate", "batchDelete"];
/** A parent's single owned row (`/ranks/{rank}/image`). */
export const hasOneOperations: RowKind[] = ["create", "show", "update", "delete"];

export function defineResource<M extends ModelName>(typed: ResourceInput<M>): ResourceDef {
  // The registry keeps the erased form: its hooks and computed fields take rows of any model (`RowOf<ModelName>`).
  const input = typed as ResourceInput;
  const label = input.label ?? words(input.model);
  return {
    morphClass: `App\\Models\\${input.model}`,
    label,
    scope: input.model.toLowerCase(),
    plural: `${input.name}s`,
    param: input.name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
    operations: input.path ? crud : [],
    relations: {},
    includes: [],
    orderBy: [{ id: "asc" }],
    ...input,
    fields: input.fields as Record<string, FieldDef>,
  };
}

export const string = (o: Partial<FieldDef> = {}): FieldDef => ({ type: "string", max: 255, ...o });
export const text = (o: Partial<FieldDef> = {}): FieldDef => ({ type: "text", max: 65535, nullable: true, ...o });
export const int = (o: Partial<FieldDef> = {}): FieldDef => ({ type: "int", ...o });
export const bool = (o: Partial<FieldDef> = {}): FieldDef => ({ type: "boolean", ...o });
export const datetime = (o: Partial<FieldDef> = {}): FieldDef => ({ type: "datetime", nullable: true, ...o });
export const ref = (target: string, o: Partial<FieldDef> = {}): FieldDef => ({
  type: "int",
  nullable: true,
  references: target,
  ...o,
});
/** A column holding one value of a closed set. */
export const oneOf = (set: EnumDef, o: Partial<FieldDef> = {}): FieldDef => ({
  type: typeof wireValues(set)[0] === "number" ? "int" : "string",
  oneOf: wireValues(set),
  enum: set,
  ...o,
});
export const order = (): FieldDef => ({ type: "int", autoOrder: true });
/** A JSON column of the given shape. */
export const json = (shape: JsonShape, o: Partial<FieldDef> = {}): FieldDef => ({ type: "json", shape, ...o });

/** The row this one points to through `foreignKey` (`rank` of a user, through `rankId`); `field`: its Prisma relation, `target` by default. */
export const belongsTo = (r: { target: string; foreignKey: string; field?: string }): RelationDef => ({
  kind: "belongsTo",
  target: r.target,
  field: r.field ?? r.target,
  foreignKey: r.foreignKey,
});
/** The rows whose `foreignKey` points to this one, through the Prisma relation `field`, in `orderBy` order. */
export const hasMany = (r: {
  target: string;
  field: string;
  foreignKey: string;
  orderBy?: Record<string, "asc" | "desc">[];
  filter?: RelationFilter;
}): RelationDef => ({
  kind: "hasMany",
  target: r.target,
  field: r.field,
  foreignKey: r.foreignKey,
  orderBy: r.orderBy,
  ...(r.filter ? { filter: r.filter } : {}),
});
/** The one polymorphic child (`model_type`/`model_id`) of `target` this row owns (an image). */
export const morphOne = (r: { target: string; field?: string }): RelationDef => ({
  kind: "morphOne",
  target: r.target,
  field: r.field ?? r.target,
});
/** The polymorphic children of `target` this row owns (comments, attachments). */
export const morphMany = (r: { target: string; field: string }): RelationDef => ({
  kind: "morphMany",
  target: r.target,
  field: r.field,
});
/** Rows linked to this one through the link rows of `pivot`. */
export const belongsToMany = (r: { target: string; field: string; pivot: PivotDef }): RelationDef => ({
  kind: "belongsToMany",
  target: r.target,
  field: r.field,
  pivot: r.pivot,
});

/** Pivot of a category link: `order`, always shown as `pivot`. */
export const categoryPivot = (model: ModelName, relatedKey: string, related: string): PivotDef => ({
  model,
  parentKey: "categoryId",
  relatedKey,
  related,
  as: "pivot",
  always: true,
  fields: { order: int() },
  orderBy: [{ order: "asc" }, { id: "asc" }],
});

/**
 * The entry of a registry record (fields, relations, scopes...) under a name a client chose: own entries only, so
 * `constructor`, `toString` or `__proto__` name nothing instead of something of Object.prototype.
 */
export const ownEntry = <T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined =>
  record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;

/** Names every JavaScript object answers to (`constructor`, `toString`, `__proto__`...): never a column, a key or a relation. */
export const isPrototypeName = (name: string): boolean => Object.hasOwn(Object.prototype, name);

/** The GraphQL field a relation is read through: its Prisma field, or the filtered subset's own name. */
export const relationField = (rel: RelationDef): string =>
  "filter" in rel && rel.filter ? rel.filter.name : rel.field;
