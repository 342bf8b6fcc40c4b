/**
 * A well-formed request for every operation of the catalogue, against the organisation that
 * test/perscom seeds: the bad-input tests start from it and break one thing at a time.
 *
 * Operations of the PERSCOM reference are planned by test/perscom/plan.ts (fresh rows for anything
 * destructive); the catalogue's own additions (search everywhere, training records, group units,
 * form fields, `/fields`) by a generic planner over the registry and test/support/factory.ts.
 */
import { operations, pivotOf, type Operation } from "../../src/resources/operations.ts";
import type { OperationKind, ResourceDef } from "../../src/resources/define.ts";
import { snake } from "../../src/core/names.ts";
import { client, type Harness } from "../harness.ts";
import type { Database } from "../../src/db/prisma.ts";
import {
  clone,
  editProperty,
  loadReference,
  requireIn,
  toJsonSchema,
  unrequire,
  type JsonSchema,
  type RefOp,
} from "../perscom/reference.ts";
import { Organisation, SetupError } from "../perscom/organisation.ts";
import { planOperation } from "../perscom/plan.ts";
import { Factory, asJson, fresh, ok, scalarValue, type Row } from "./factory.ts";
import { fixedColumns, makingAction, pathOf } from "./registry.ts";

export interface Target {
  method: string;
  /** `/v2/...`, no query string. */
  url: string;
  body?: unknown;
  /** The path parameters of the operation, by name. */
  params: Record<string, number>;
}

const FIELD_TYPES = [
  "component_text",
  "boolean",
  "code",
  "color",
  "country",
  "date",
  "datetime-local",
  "email",
  "file",
  "number",
  "password",
  "select",
  "text",
  "textarea",
  "timezone",
];
const action = (op: RefOp) => op.notes.app.orionAction;

/**
 * The request-side entries of the DEVIATIONS of test/perscom-surface.test.ts (same ids), which the
 * seeder and the planner build bodies from; see there for each one's reason.
 */
const REQUEST_DEVIATIONS: Array<{
  id: string;
  ops: (op: RefOp) => boolean;
  schema?: JsonSchema;
  edit?: (s: JsonSchema) => void;
}> = [
  {
    id: "message-channels-single",
    ops: (op) =>
      op.path.startsWith("/{version}/messages") &&
      ["store", "update", "batchStore", "batchUpdate"].includes(action(op)),
    edit: (s) => editProperty(s, "channels", (p) => clone(p.items!), "Message"),
  },
  {
    id: "category-create-required",
    ops: (op) => ["POST /{version}/categories", "POST /{version}/categories/batch"].includes(op.key),
    edit: (s) => requireIn(s, "Category", ["name", "resource"]),
  },
  {
    id: "field-create-required",
    ops: (op) => ["POST /{version}/users/{user}/fields", "POST /{version}/users/{user}/fields/batch"].includes(op.key),
    edit: (s) =>
      requireIn(s, "Field", ["name", "key", "type"]) +
      editProperty(s, "type", (p) => ({ ...p, enum: FIELD_TYPES }), "Field"),
  },
  {
    id: "assignment-type-required",
    ops: (op) => /^POST \/\{version\}(\/users\/\{user\})?\/assignment-records(\/batch)?$/.test(op.key),
    edit: (s) => requireIn(s, "AssignmentRecord", ["type"]),
  },
  {
    id: "associate-body",
    ops: (op) => action(op) === "associate",
    schema: { type: "object", required: ["related_key"], properties: { related_key: { type: "integer" } } },
  },
  {
    id: "link-resources-shape",
    ops: (op) => ["attach", "detach", "sync", "toggle"].includes(action(op)),
    edit: (s) =>
      editProperty(s, "resources", () => ({
        anyOf: [
          { type: "array", items: { type: "integer" } },
          { type: "object", additionalProperties: { type: "object" } },
        ],
      })),
  },
  {
    id: "update-keeps-file",
    ops: (op) => ["update", "batchUpdate"].includes(action(op)) && /\/(images|image|attachments)(\/|$)/.test(op.path),
    edit: (s) => unrequire(s, "image", "Image") + unrequire(s, "file", "Attachment"),
  },
];

const ref = loadReference();

/** The request body schema a reference operation's bodies are built from (request deviations applied). */
export function requestSchemaOf(op: RefOp): JsonSchema | undefined {
  let schema = op.requestSchema ? toJsonSchema(op.requestSchema, ref.components, "request") : undefined;
  for (const d of REQUEST_DEVIATIONS.filter((d) => d.ops(op))) {
    if (d.schema) schema = clone(d.schema);
    else if (schema) d.edit!(schema);
  }
  return schema;
}

const refByKey = new Map(ref.ops.map((o) => [o.key, o]));
const shape = (method: string, path: string) => `${method} ${path.replace(/\{\w+\}/g, "{}")}`;
const refByShape = new Map(ref.ops.map((o) => [shape(o.method, o.path.replace("/{version}", "")), o]));

/** The reference operation a catalogue operation serves, if PERSCOM documents it. */
export const referenceOf = (op: Operation): RefOp | undefined => refByShape.get(shape(op.method, op.path));

/** The create schema of a collection, as the seeder asks for it. */
function createSchemaOf(collection: string): JsonSchema {
  const key = collection === "fields" ? "POST /{version}/users/{user}/fields" : `POST /{version}/${collection}`;
  const op = refByKey.get(key);
  const schema = op && requestSchemaOf(op);
  if (!schema) throw new SetupError(`no request schema for ${key}`);
  return schema;
}

/** Seeds the whole organisation of test/perscom through the API; throws when a step failed. */
export async function seedOrganisation(h: Harness): Promise<Organisation> {
  const org = new Organisation(h, createSchemaOf);
  await org.seed();
  if (Object.keys(org.seedErrors).length) throw new Error(`seed failed: ${JSON.stringify(org.seedErrors)}`);
  return org;
}

/** Kinds whose request removes the row or link it names: planned on rows made for it. */
export const DESTRUCTIVE = new Set<OperationKind>(["delete", "batchDelete", "dissociate", "detach", "sync", "toggle"]);

/** The path parameters of `url` (a planned `/v2/...` URL) by the names `op.path` gives them. */
export function paramsOf(op: Operation, url: string): Record<string, number> {
  const pattern = op.path.split("/").filter(Boolean);
  const actual = url.replace(/\?.*$/, "").split("/").filter(Boolean).slice(1);
  const params: Record<string, number> = {};
  pattern.forEach((segment, i) => {
    if (segment.startsWith("{") && actual[i] !== undefined) params[segment.slice(1, -1)] = Number(actual[i]);
  });
  return params;
}

export class Targets {
  readonly factory: Factory;
  private readonly rows = new Map<string, Promise<Row>>();

  constructor(
    readonly org: Organisation,
    readonly api: ReturnType<typeof client>,
    db?: Database,
  ) {
    this.factory = new Factory(api, db);
  }

  static async create(h: Harness, org: Organisation): Promise<Targets> {
    return new Targets(org, client(h, await h.key("alpha", "*", org.ids.admin ?? null)), h.db);
  }

  /** A well-formed request for `op`; a new one (new rows for destructive kinds) on each call. */
  async plan(op: Operation): Promise<Target> {
    const reference = referenceOf(op);
    if (reference) {
      const plan = await planOperation(reference, this.org, requestSchemaOf(reference));
      return { method: plan.method, url: plan.url, body: plan.body, params: paramsOf(op, plan.url) };
    }
    return this.generic(op);
  }

  /** One shared row of `def`: the seeded one when the seed made it, else one made once. */
  private async seeded(def: ResourceDef): Promise<number> {
    const id = def.path ? this.org.ids[def.path] : undefined;
    if (id !== undefined) return id;
    let row = this.rows.get(def.name);
    if (!row) this.rows.set(def.name, (row = this.factory.any(def)));
    return (await row).id;
  }

  private async newRow(def: ResourceDef): Promise<number> {
    return (await this.factory.any(def)).id;
  }

  private group(op: Operation, kind: OperationKind): Operation | undefined {
    return operations.find(
      (o) => o.kind === kind && o.parent?.def === op.parent!.def && o.parent.route.path === op.parent!.route.path,
    );
  }

  private pivotBody(op: Operation): Record<string, unknown> | undefined {
    const pivot = pivotOf(op);
    if (!pivot || !Object.keys(pivot.fields).length) return undefined;
    return Object.fromEntries(
      Object.entries(pivot.fields)
        .filter(([, f]) => f.writable !== false)
        .map(([n, f]) => [snake(n), scalarValue(n, f, fresh())]),
    );
  }

  private async item(op: Operation, variant = 0): Promise<Record<string, unknown>> {
    const omit = op.parent ? fixedColumns(op.parent) : [];
    const built = await this.factory.build(op.def, { omit, variant, scalarsOnly: variant > 0 });
    const pivot = this.pivotBody(op);
    return { ...asJson(built), ...(pivot ? { pivot } : {}) };
  }

  /** A new related row linked to `parent` through the nested route of `op`. */
  private async linked(op: Operation, parent: number): Promise<number> {
    if (this.factory.writtenByService(op.def)) return (await this.factory.serviceRow(op.def, parent)).id;
    const params = { [op.parent!.def.param]: parent };
    const attach = this.group(op, "attach");
    if (attach) {
      const id = await this.newRow(op.def);
      const pivot = this.pivotBody(op);
      ok(
        await this.api.post(pathOf(attach, params), { resources: pivot ? { [id]: pivot } : [id] }),
        `attach ${op.path}`,
      );
      return id;
    }
    const create = this.group(op, "create");
    const action = makingAction(op.def);
    if (!create && action?.subject === op.parent!.def)
      return ok(await this.api.post(pathOf(action, params)), `${action.field} under ${op.path}`).id;
    if (!create) throw new Error(`${op.method} ${op.path}: no way to link a new row`);
    return ok(await this.api.post(pathOf(create, params), await this.item(create)), `create ${create.path}`).id;
  }

  /** A related row already linked to `parent`: the first its list shows, or a new one. */
  private async existing(op: Operation, parent: number): Promise<number> {
    const list = this.group(op, "list");
    if (list) {
      const rows = ok<Row[]>(
        await this.api.get(pathOf(list, { [op.parent!.def.param]: parent }, "limit=1")),
        `list ${list.path}`,
      );
      if (rows[0]?.id) return rows[0].id;
    }
    return this.linked(op, parent);
  }

  /** An action's input: the only ids actions take are events' (a redelivery's `event_id`), the account's first. */
  private async actionInput(op: Operation): Promise<Record<string, unknown>> {
    const body: Record<string, unknown> = {};
    for (const name of Object.keys(op.action!.input!)) {
      if (name === "password") {
        body.password = "a long enough password";
        continue;
      }
      // A given event (an automation's test) is the alternative to an event id: the id alone is a complete input.
      if (name === "event") continue;
      if (name !== "eventId")
        throw new Error(`${op.field}: no value for the action's ${name}: add one in test/support/targets.ts`);
      body.event_id = ok<Row[]>(await this.api.get("/v2/changes?limit=1"), "the change feed")[0].id;
    }
    return body;
  }

  private publicFormId: Promise<number> | undefined;

  /** A public form's route: account alpha by its slug, and a public form with no fields of its own (made once), by id. */
  private async anonymous(op: Operation): Promise<Target> {
    this.publicFormId ??= this.api
      .post("/v2/forms", { name: "Public target", slug: "public-target", is_public: true })
      .then((r) => r.body.data.id as number);
    const form = await this.publicFormId;
    const url = pathOf(op, { account: "alpha", form });
    return { method: op.method, url, params: { form }, body: op.kind === "publicSubmit" ? {} : undefined };
  }

  private async generic(op: Operation): Promise<Target> {
    if (op.anonymous) return this.anonymous(op);
    const destructive = DESTRUCTIVE.has(op.kind);
    const params: Record<string, number> = {};
    let child: () => Promise<number>;
    if (op.parent) {
      const parent =
        destructive || op.kind === "attach" ? await this.newRow(op.parent.def) : await this.seeded(op.parent.def);
      params[op.parent.def.param] = parent;
      child = () => (destructive ? this.linked(op, parent) : this.existing(op, parent));
      if (op.path.includes(`{${op.parent.route.param}}`)) params[op.parent.route.param] = await child();
    } else {
      // An action's path names the row it acts on (`/webhooks/{webhook}/test`), not the row it answers.
      const row = op.subject ?? op.def;
      child = () => (destructive ? this.newRow(row) : this.seeded(row));
      if (op.path.includes(`{${row.param}}`)) params[row.param] = await child();
    }
    const url = pathOf(op, params);
    const pivot = this.pivotBody(op);
    const resources = (ids: number[]) => (pivot ? Object.fromEntries(ids.map((id) => [id, this.pivotBody(op)])) : ids);
    let body: unknown;
    switch (op.kind) {
      case "search":
        body = { filters: [{ field: "id", operator: ">=", value: 1 }], sort: [{ field: "id", direction: "desc" }] };
        break;
      case "create":
        body = await this.item(op);
        break;
      case "update":
        body = await this.item(op, 1);
        break;
      case "batchCreate":
        body = { resources: [await this.item(op), await this.item(op)] };
        break;
      case "batchUpdate":
        body = { resources: { [await child()]: await this.item(op, 1) } };
        break;
      case "batchDelete":
      case "detach":
        body = { resources: [await child()] };
        break;
      case "associate":
        body = { related_key: (await this.factory.any(op.def)).id };
        break;
      case "attach":
        body = { resources: resources([await this.newRow(op.def)]) };
        break;
      case "sync":
        body = { resources: resources([await child(), await this.newRow(op.def)]) };
        break;
      case "toggle":
        body = { resources: [await child(), await this.newRow(op.def)] };
        break;
      case "pivot":
        body = { pivot: pivot ?? {} };
        break;
      case "action":
        if (op.action!.input) body = await this.actionInput(op);
        break;
    }
    return { method: op.method, url, body, params };
  }
}
