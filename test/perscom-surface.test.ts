/**
 * The whole PERSCOM v2 surface: every one of the 483 operations of the reference OpenAPI document
 * (test/fixtures/perscom/perscom-openapi.json) is sent a well-formed request against one seeded
 * organisation, and must answer its documented 2xx with a body valid for the documented success
 * schema. Where the reference document is wrong, or our spec overrides it, the difference is written
 * down in DEVIATIONS below, one entry per difference, with its reason; nothing is skipped.
 *
 * A JSON report of every operation not served, grouped by cause, goes to test-artifacts/surface-report.json.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import { sqlitePlan, startHarness, testProvider, type Harness } from "./harness.ts";
import {
  clone,
  editProperty,
  flatten,
  loadReference,
  nullable,
  requireIn,
  toJsonSchema,
  unrequire,
  type JsonSchema,
  type RefOp,
} from "./perscom/reference.ts";
import { Organisation, SetupError } from "./perscom/organisation.ts";
import { planOperation } from "./perscom/plan.ts";
import {
  ajvErrors,
  groupByCause,
  normalise,
  replyCause,
  schemaCause,
  writeReport,
  type Outcome,
} from "./perscom/report.ts";

/** ajv-formats as either module system hands it over: the plugin itself, or a namespace whose default it is. */
const formatsModule = addFormatsModule as unknown as ((ajv: Ajv) => unknown) & { default?: (ajv: Ajv) => unknown };
const addFormats: (ajv: Ajv) => unknown = formatsModule.default ?? formatsModule;

/** One difference between the reference document and what this suite expects, with the reason. */
interface Deviation {
  id: string;
  /** The operations it concerns: `METHOD path` keys, or a predicate over the reference operations. */
  ops: string[] | ((op: RefOp) => boolean);
  /** What differs, concretely. */
  differs: string;
  /** Why: the section of perscom-behaviour.md or of our spec that says so. */
  reason: string;
  /** The success status expected instead of the documented one. */
  status?: number;
  /** Edits a copy of the success body schema; returns how many places changed (0 means the entry is wrong). */
  response?: (schema: JsonSchema, op: RefOp) => number;
  /** The request body schema, for an operation that documents none. */
  requestSchema?: JsonSchema;
  /** Edits a copy of the request body schema (which this suite builds bodies from); returns how many places changed. */
  request?: (schema: JsonSchema, op: RefOp) => number;
}

const action = (op: RefOp) => op.notes.app.orionAction;
const refersTo = (op: RefOp, component: string) => JSON.stringify(op.successSchema).includes(`/${component}"`);
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

/**
 * Rows of behaviour §7.2 that need no entry here: #1 (routes outside the document are not exercised),
 * #2 (with_trashed/only_trashed/force are optional and not sent; deleted_at is not required), #3 (meta.links
 * is an extra member, which the schemas allow), #4 (error bodies), #6 (order values), #7 (the event body sent
 * has every attribute either side requires), #8 (phone_number and timezone are not sent), #10 (options are always
 * answered as the specification's array of objects, `{label, value}`; PERSCOM's keyed form is shown as that list), #13 (/me is a
 * list, as documented), #14 (only documented include values are sent), #17 and #18 (401 text, v1 extras).
 * #15 and #16, where PERSCOM itself fails with 500, are expected to succeed here: our spec asks for the
 * sensible behaviour instead of PERSCOM's defects.
 */
const DEVIATIONS: Deviation[] = [
  {
    id: "create-answers-200",
    ops: (op) => op.documentedStatus === 201,
    differs: "success status 200 instead of the documented 201 (every single-entity store, top-level and nested)",
    reason:
      "Our spec (personnel-api.md, Endpoints) answers every success with 200, creates included (operations 4, 5, 6, 11); PERSCOM answers 201 (behaviour §2.1).",
    status: 200,
  },
  {
    id: "pagination-neighbours-null",
    ops: (op) => op.notes.success.shape === "collection+paginated",
    differs:
      "links.prev and links.next are null when there is no previous or next page (ResourceLinks types them as non-null URIs)",
    reason:
      'behaviour §2.3: the envelope is Laravel\'s LengthAwarePaginator, whose example shows "prev": null on the first page.',
    response: (s) =>
      editProperty(s, "prev", nullable, "ResourceLinks") + editProperty(s, "next", nullable, "ResourceLinks"),
  },
  {
    id: "attachment-file-is-input",
    ops: (op) => refersTo(op, "AttachmentResource"),
    differs: "AttachmentResource: `file` is not required in responses (read as writeOnly, as SPEC marks Image.image)",
    reason:
      "behaviour §3.1 Attachment: `file` is the upload, which sets `path` and `filename`; an attachment is returned with filename, path and attachment_url.",
    response: (s) => unrequire(s, "file", "Attachment"),
  },
  {
    id: "settings-payload-any-json",
    ops: ["GET /{version}/settings"],
    differs: "Settings.payload is any JSON value, not only a string or an integer",
    reason: "behaviour §7.2 #12: the payload is JSON-decoded.",
    response: (s) => editProperty(s, "payload", () => ({}), "Settings"),
  },
  {
    id: "roster-image-null",
    ops: ["GET /{version}/roster", "GET /{version}/roster/{roster}"],
    differs:
      "RosterGroup.image and RosterUnit.image are null for a group or unit without an image (SPEC: a non-null Image)",
    reason:
      "behaviour §3.1 Roster: `image` and `units.image` are always-loaded one-to-one relations; a missing one serialises as null.",
    response: (s) =>
      editProperty(s, "image", nullable, "RosterGroup") + editProperty(s, "image", nullable, "RosterUnit"),
  },
  {
    id: "dissociated-key-null",
    ops: (op) => action(op) === "dissociate" && !op.path.includes("/image/"),
    differs:
      "the dissociated row comes back with its parent key null: `user_id` (users/*-records) or `form_id` (forms/submissions)",
    reason:
      "behaviour §2.8: dissociate sets the child's foreign key to null and returns the child; SPEC types these keys as non-null integers.",
    response: (s, op) => editProperty(s, op.path.startsWith("/{version}/users/") ? "user_id" : "form_id", nullable),
  },
  {
    id: "newsfeed-causer-id-integer",
    ops: ["GET /{version}/newsfeed"],
    differs: "NewsfeedResource.causer_id is an integer (or null), not a string",
    reason:
      "behaviour §3.1 Newsfeed and §7.2 #11: items are the raw activity-log rows, whose causer_id is the integer key of the causing user (like subject_id, which SPEC types integer).",
    response: (s) => editProperty(s, "causer_id", () => ({ type: ["integer", "null"] }), "NewsfeedResource"),
  },
  {
    id: "message-recipients-null",
    ops: (op) => refersTo(op, "MessageResource"),
    differs: "MessageResource.recipients is null for a message to everyone (SPEC: always an array)",
    reason:
      'behaviour §3.1 Message: recipients is an array of user ids, null meaning everyone (SPEC\'s own description: "Defaults to everyone if no recipients are provided").',
    response: (s) => editProperty(s, "recipients", nullable, "Message"),
  },
  {
    id: "message-channels-single",
    ops: (op) =>
      op.path.startsWith("/{version}/messages") &&
      ["store", "update", "batchStore", "batchUpdate"].includes(action(op)),
    differs: "request `channels` is one channel name (a string), not an array of them",
    reason:
      "behaviour §7.2 #9 and §3.1 Message: the rule is a single NotificationChannel value; an array fails validation.",
    request: (s) => editProperty(s, "channels", (p) => clone(p.items!), "Message"),
  },
  {
    id: "category-create-required",
    ops: ["POST /{version}/categories", "POST /{version}/categories/batch"],
    differs: "request: `name` and `resource` are required on create (SPEC's Category requires nothing)",
    reason: "behaviour §3.1 Category: name and resource are required on create.",
    request: (s) => requireIn(s, "Category", ["name", "resource"]),
  },
  {
    id: "field-create-required",
    ops: ["POST /{version}/users/{user}/fields", "POST /{version}/users/{user}/fields/batch"],
    differs: "request: `name`, `key` and `type` are required on create, and `type` is one of PERSCOM's field types",
    reason:
      "behaviour §3.1 Field: name, key and type are required on create; type is an enum. SPEC's Field lists no required attribute.",
    request: (s) =>
      requireIn(s, "Field", ["name", "key", "type"]) +
      editProperty(s, "type", (p) => ({ ...p, enum: FIELD_TYPES }), "Field"),
  },
  {
    id: "assignment-type-required",
    ops: [
      "POST /{version}/assignment-records",
      "POST /{version}/assignment-records/batch",
      "POST /{version}/users/{user}/assignment-records",
      "POST /{version}/users/{user}/assignment-records/batch",
    ],
    differs: "request: `type` (primary|secondary) is required on create",
    reason: "behaviour §3.1 AssignmentRecord: type is required on create.",
    request: (s) => requireIn(s, "AssignmentRecord", ["type"]),
  },
  {
    id: "associate-body",
    ops: (op) => action(op) === "associate",
    differs: 'request body {"related_key": <id>}; SPEC documents no request body',
    reason: "behaviour §2.8: associate reads the required `related_key`, the id of the row to tie to the parent.",
    requestSchema: { type: "object", required: ["related_key"], properties: { related_key: { type: "integer" } } },
  },
  {
    id: "link-resources-shape",
    ops: (op) => ["attach", "detach", "sync", "toggle"].includes(action(op)),
    differs:
      "request `resources` is a list of ids, or an object keyed by id whose values are pivot attributes; not SPEC's array of key-value objects",
    reason:
      "behaviour §2.7: resources is read as a list of ids, an object {id: pivot}, or one id; an array of objects would be read as ids 0, 1, ...",
    request: (s) =>
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
    differs: "request: `image` (Image) and `file` (Attachment) are not required when updating; the stored file is kept",
    reason: "behaviour §7.2 #5: update rules are all optional, while SPEC reuses the create schema for updates.",
    request: (s) => unrequire(s, "image", "Image") + unrequire(s, "file", "Attachment"),
  },
];

const ref = loadReference();
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);

const matches = (d: Deviation, op: RefOp) => (Array.isArray(d.ops) ? d.ops.includes(op.key) : d.ops(op));
const deviationUse = new Map<string, string[]>(DEVIATIONS.map((d) => [d.id, []]));
const deviationProblems: string[] = [];

/**
 * Our own strictness on top of the document, whose success schemas require nothing: the envelope's
 * members (`data`, `links`, `meta`, `attached`, ...) must be present, and a `data` list must not be
 * empty (the seeded organisation has a row for every list, and every batch names at least one row).
 */
function tighten(schema: JsonSchema): void {
  if (schema.type === "object" && schema.properties) schema.required = Object.keys(schema.properties);
  if (schema.properties?.data?.type === "array") schema.properties.data.minItems = 1;
}

interface Prepared {
  op: RefOp;
  /** Position in the reference document. */
  index: number;
  expectedStatus: number;
  validate: ValidateFunction;
  request?: JsonSchema;
  validateRequest?: ValidateFunction;
}

const compiled = new Map<string, ValidateFunction>();
const compile = (schema: JsonSchema) => {
  const key = JSON.stringify(schema);
  let fn = compiled.get(key);
  if (!fn) compiled.set(key, (fn = ajv.compile(schema)));
  return fn;
};

function prepare(op: RefOp, index: number): Prepared {
  const success = toJsonSchema(op.successSchema, ref.components, "response");
  tighten(success);
  let request = op.requestSchema ? toJsonSchema(op.requestSchema, ref.components, "request") : undefined;
  let expectedStatus = op.documentedStatus;
  for (const d of DEVIATIONS.filter((d) => matches(d, op))) {
    deviationUse.get(d.id)!.push(op.key);
    if (d.status !== undefined) expectedStatus = d.status;
    if (d.response && d.response(success, op) === 0)
      deviationProblems.push(`${d.id}: changes nothing in the success schema of ${op.key}`);
    if (d.requestSchema) {
      if (request) deviationProblems.push(`${d.id}: ${op.key} documents a request schema already`);
      request = clone(d.requestSchema);
    }
    if (d.request && (!request || d.request(request, op) === 0))
      deviationProblems.push(`${d.id}: changes nothing in the request schema of ${op.key}`);
  }
  return {
    op,
    index,
    expectedStatus,
    validate: compile(success),
    request,
    validateRequest: request && compile(request),
  };
}

const prepared = ref.ops.map(prepare);
const byKey = new Map(prepared.map((p) => [p.op.key, p]));
/** The create body schema of a collection, from its reference store operation (deviations applied). */
const createSchemaOf = (collection: string): JsonSchema => {
  const key = collection === "fields" ? "POST /{version}/users/{user}/fields" : `POST /{version}/${collection}`;
  const request = byKey.get(key)?.request;
  if (!request) throw new SetupError(`no request schema for ${key}`);
  return request;
};

/** One include value of the operation's documented list, chosen by the operation so that different ones are exercised. */
function includeFor(op: RefOp): string | undefined {
  const values = op.notes.includes;
  if (!values.length) return undefined;
  let hash = 0;
  for (const c of op.key) hash = (hash * 31 + c.charCodeAt(0)) >>> 0;
  return values[hash % values.length];
}

const urlPattern = (op: RefOp) =>
  new RegExp(
    `^${op.path
      .replace("{version}", "v2")
      .replace(/\{\w+\}/g, "[1-9]\\d*")
      .replace(/[/.]/g, "\\$&")}(\\?.*)?$`,
  );

let h: Harness;
let org: Organisation;
const outcomes: Outcome[] = [];
/** Every distinct statement of our own (reader and writer) the operations sent, for their plans. */
const statements = new Set<string>();
const cleanupErrors: string[] = [];
/**
 * The order operations run in: the document's, or shuffled with PERSCOM_SURFACE_SHUFFLE=<seed> to show
 * that no operation depends on another (the served set must not change).
 */
function runOrder(): Prepared[] {
  const seed = Number(process.env.PERSCOM_SURFACE_SHUFFLE ?? "");
  if (!seed) return prepared;
  let state = seed >>> 0;
  const random = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const order = [...prepared];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/** PERSCOM_SURFACE_VERBOSE=1 keeps every request body and answer in the report. */
const verbose = process.env.PERSCOM_SURFACE_VERBOSE === "1";
let routeKnown: (method: string, url: string) => boolean | undefined = () => undefined;

async function exercise(p: Prepared): Promise<Outcome> {
  const { op } = p;
  const outcome: Outcome = { key: op.key, method: op.method, path: op.path, served: false };
  let plan;
  try {
    plan = await planOperation(op, org, p.request, includeFor(op));
  } catch (e) {
    if (!(e instanceof SetupError)) throw e;
    return { ...outcome, cause: `setup: ${normalise(e.message)}`, detail: e.message };
  }
  if (plan.method !== op.method || !urlPattern(op).test(plan.url))
    throw new Error(`${op.key}: planned ${plan.method} ${plan.url}`);
  outcome.url = plan.url;
  if (p.validateRequest && plan.body !== undefined && !p.validateRequest(plan.body))
    outcome.requestProblems = ajvErrors(p.validateRequest.errors);
  try {
    const r = await org.api.send(plan.method, plan.url, plan.body);
    outcome.status = r.status;
    if (verbose) outcome.exchange = { request: plan.body, response: r.body ?? r.text.slice(0, 2000) };
    if (r.body === undefined) {
      outcome.cause = `${r.status} non-JSON body`;
      outcome.detail = r.text.slice(0, 500);
    } else if (r.status !== p.expectedStatus) {
      outcome.cause = replyCause(r, p.expectedStatus, routeKnown(plan.method, plan.url));
      outcome.detail = r.body?.error ?? r.body;
    } else if (!p.validate(r.body)) {
      outcome.cause = schemaCause(p.validate.errors);
      outcome.detail = ajvErrors(p.validate.errors);
    } else {
      outcome.served = true;
    }
  } catch (e) {
    outcome.cause = `request failed: ${e instanceof Error ? e.message : String(e)}`;
  } finally {
    try {
      await plan.cleanup?.();
    } catch (e) {
      cleanupErrors.push(`${op.key}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return outcome;
}

function countBy<T>(items: T[], key: (item: T) => string): Record<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]));
}

const root = fileURLToPath(new URL("../", import.meta.url));
const reportFile = path.join(root, "test-artifacts", "surface-report.json");

beforeAll(async () => {
  try {
    const { matchRoute } = await import("../src/rest/routes.ts");
    routeKnown = (method, url) => {
      try {
        return "route" in matchRoute(method, url.replace(/\?.*$/, ""));
      } catch {
        return undefined;
      }
    };
  } catch {
    // Diagnostics only: without the route table, 404s are not told apart.
  }
  h = await startHarness();
  org = new Organisation(h, createSchemaOf);
  await org.seed();
  const started = Date.now();
  h.db.onReaderStatement.add((sql) => void statements.add(sql));
  for (const p of runOrder()) outcomes.push(await exercise(p));
  outcomes.sort((a, b) => byKey.get(a.key)!.index - byKey.get(b.key)!.index);
  const served = outcomes.filter((o) => o.served).length;
  const causes = groupByCause(outcomes);
  writeReport(reportFile, {
    generatedAt: new Date().toISOString(),
    served,
    total: ref.ops.length,
    seconds: (Date.now() - started) / 1000,
    answered5xx: outcomes
      .filter((o) => (o.status ?? 0) >= 500)
      .map((o) => ({ method: o.method, path: o.path, url: o.url, status: o.status, detail: o.detail })),
    seedErrors: org.seedErrors,
    setup5xx: org.setup5xx,
    cleanupErrors,
    requestProblems: outcomes
      .filter((o) => o.requestProblems)
      .map((o) => ({ key: o.key, url: o.url, problems: o.requestProblems })),
    deviations: DEVIATIONS.map((d) => ({
      id: d.id,
      differs: d.differs,
      reason: d.reason,
      operations: deviationUse.get(d.id),
    })),
    notServedBy: {
      action: countBy(
        outcomes.filter((o) => !o.served),
        (o) => byKey.get(o.key)!.op.notes.app.orionAction,
      ),
      tag: countBy(
        outcomes.filter((o) => !o.served),
        (o) => byKey.get(o.key)!.op.notes.tag ?? "(untagged)",
      ),
    },
    causes,
    ...(verbose
      ? {
          exchanges: outcomes.map((o) => ({
            key: o.key,
            url: o.url,
            status: o.status,
            served: o.served,
            ...o.exchange,
          })),
        }
      : {}),
  });
  console.log(`served ${served}/${ref.ops.length}`);
  for (const c of causes.slice(0, 12)) console.log(`  ${String(c.count).padStart(3)}  ${c.cause.slice(0, 160)}`);
}, 120_000);
afterAll(() => h?.close());

describe("PERSCOM v2 surface (reference OpenAPI, 483 operations)", () => {
  test("the reference document has 483 operations, each with one documented success", () => {
    expect(ref.ops.length).toBe(483);
    expect(new Set(ref.ops.map((o) => o.key)).size).toBe(483);
  });

  test("the request schemas this suite builds bodies from agree with perscom-ops.json's request fields", () => {
    const disagreements: string[] = [];
    for (const op of ref.ops) {
      const fields = op.notes.request?.fields;
      if (!fields || !op.requestSchema) continue;
      const { properties, required } = flatten(toJsonSchema(op.requestSchema, ref.components, "request"));
      const expected = Object.entries(fields)
        .filter(([, f]) => f.required && !f.readOnly)
        .map(([name]) => name)
        .sort();
      if (JSON.stringify([...required].sort()) !== JSON.stringify(expected))
        disagreements.push(`${op.key}: required ${required} vs ${expected}`);
      for (const [name, f] of Object.entries(fields)) {
        const type = properties[name]?.type;
        if (!(Array.isArray(type) ? type.includes(f.type) : type === f.type))
          disagreements.push(`${op.key}: ${name} is ${JSON.stringify(type)} vs ${f.type}`);
        if (Array.isArray(type) !== Boolean(f.nullable))
          disagreements.push(`${op.key}: ${name} nullable ${Array.isArray(type)} vs ${Boolean(f.nullable)}`);
      }
    }
    expect(disagreements).toEqual([]);
  });

  test("every deviation concerns operations of the reference and changes what it says it changes", () => {
    expect(deviationProblems).toEqual([]);
    expect([...deviationUse].filter(([, ops]) => ops.length === 0).map(([id]) => id)).toEqual([]);
  });

  test("the seed built the whole organisation", () => {
    expect(org.seedErrors).toEqual({});
  });

  test("every request body sent is valid for the reference request schema (with the listed deviations)", () => {
    expect(outcomes.filter((o) => o.requestProblems).map((o) => [o.key, o.requestProblems])).toEqual([]);
  });

  test("no operation answers 5xx", () => {
    expect(outcomes.filter((o) => (o.status ?? 0) >= 500).map((o) => `${o.key} → ${o.status} ${o.cause}`)).toEqual([]);
  });

  // An operation's work must not grow with the size of a table it only looks up rows in. On SQLite, whose plans say
  // so plainly: no statement reads a whole table (`SCAN <table>`; a scan of a subquery's rows is fine).
  test.runIf(testProvider === "sqlite")("no statement the operations send reads a whole table", async () => {
    const scans: string[] = [];
    for (const sql of statements) {
      if (!/^(SELECT|UPDATE|DELETE|WITH)\b/.test(sql)) continue;
      const plan = await sqlitePlan(h.db, sql);
      const derived = new Set(plan.map((line) => /^(?:CO-ROUTINE|MATERIALIZE) (\S+)/.exec(line)?.[1]));
      for (const line of plan) {
        const scanned = /^SCAN (\S+)/.exec(line)?.[1];
        if (scanned && scanned !== "CONSTANT" && !derived.has(scanned) && !/^(json_each|\(subquery)/.test(scanned))
          scans.push(`${line} ← ${sql.slice(0, 300)}`);
      }
    }
    expect(statements.size).toBeGreaterThan(300);
    expect(scans).toEqual([]);
  });

  test("every operation answers its documented 2xx with a body valid for its success schema", () => {
    const served = outcomes.filter((o) => o.served).length;
    expect(outcomes.length).toBe(483);
    expect(served, `see ${path.relative(root, reportFile)}`).toBe(483);
  });
});
