import type { FieldDef, ResourceDef } from "../../src/resources/define.ts";
import { operations, isOneToOne, type Operation } from "../../src/resources/operations.ts";
import { resourceNamed, resources } from "../../src/resources/index.ts";
import { morphOwnersOf } from "../../src/resources/index.ts";
import { snake } from "../../src/core/names.ts";
import { client, type Client, type Harness, type Reply } from "../harness.ts";
import type { Database } from "../../src/db/prisma.ts";
import { fixedColumns, makingAction, pathOf, topOp } from "./registry.ts";

/** A row as REST answers it: its id, and its other members unread until a test narrows them. */
export type Row = { id: number; [member: string]: unknown };
export type Attrs = Record<string, unknown>;

/** A 1×1 transparent PNG: passes the image signature check. */
export const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);
export const pngDataUri = `data:image/png;base64,${PNG.toString("base64")}`;
export const pngFile = (name = "pixel.png") => new File([PNG], name, { type: "image/png" });

let counter = 0;
/** A number no other value in this process has used: fresh values for unique columns. */
export const fresh = () => ++counter;

/** A body as the client means it: typed attributes (REST names) plus the upload fields to send a file in. */
export interface Built {
  def: ResourceDef;
  attrs: Attrs;
  files: string[];
}

export interface BuildOptions {
  /** 0 for a create; 1, 2... for updates: every value differs from the previous variant's. */
  variant?: number;
  /** Also fill optional columns (references, morph owner, optional uploads); only at depth 0. */
  full?: boolean;
  /** Columns the route sets (camelCase): left out. */
  omit?: string[];
  /** Only plain columns (no references, owners, uploads, JSON): what an update changes. */
  scalarsOnly?: boolean;
  depth?: number;
  /** Point foreign keys at one shared row per target (default), or at new rows. */
  reuse?: boolean;
}

/** A date as the API writes it; every datetime of one body gets the same one, so `ends >= starts` style rules hold. */
export const isoDate = (n: number, variant = 0) => {
  const d = new Date(Date.UTC(2020 + variant, n % 12, 1 + (n % 27), 13, 45, 12));
  return d.toISOString().replace(/\.\d{3}Z$/, ".000000Z");
};

/** Values a column of this name conventionally holds (any resource's `color`, `email`, `url`). */
const conventional = (name: string, n: number): string[] =>
  ({
    color: [`#${((n * 7919) % 0xffffff).toString(16).padStart(6, "0")}`],
    email: [`user${n}@example.com`],
    // A custom field's rules name only the rules public forms apply (src/resources/form-rules.ts).
    rules: [`max:${255 + n}`],
    // A name that never resolves (RFC 6761): a webhook made with it is accepted, and a delivery to it fails at once.
    url: [`https://example.invalid/${n}`],
    // An automation's cron expression (five fields) and condition (Jexl), checked when it is saved.
    schedule: [`${n % 60} 8 * * 1`],
    condition: [`data.id != ${n}`],
  })[name] ?? [];

/**
/**
 * JSON a column of this name must hold where `[]` will not do (a webhook's `events`: a non-empty list of types; an
 * automation's triggers and actions; an API key's `scopes`: at least one, held by its maker, who holds `create:apikey`
 * whatever else it holds).
 */
const conventionalJson: Record<string, unknown> = {
  events: ["*"],
  triggers: ["user.created"],
  actions: [{ type: "webhook", url: "https://example.invalid/automation", body: { text: "{{ data.id }}" } }],
  scopes: ["create:apikey"],
};

/**
 * Booleans a column of this name must hold (an OAuth client's `public`: a confidential client has a secret to rotate;
 * an API key's `publishable`: one that is needs origins).
 */
const conventionalBoolean: Record<string, boolean> = { public: false, publishable: false };

/** Candidate strings tried against a column's `pattern`, in order; the first that matches is used. */
const patterned = (name: string, n: number) => [
  `${snake(name)} ${n}`,
  `value${n}`,
  `value-${n}`,
  `value_${n}`,
  `user${n}@example.com`,
  `#${((n * 7919) % 0xffffff).toString(16).padStart(6, "0")}`,
  `https://example.com/${n}`,
  `${n}`,
  `2024-01-${String(1 + (n % 27)).padStart(2, "0")}`,
];

/**
 * A value of a plain column for variant `variant` (`n` makes it unique, `day` is the body's date).
 * JSON columns get `[]`, which every list-of-values rule accepts.
 */
export function scalarValue(name: string, f: FieldDef, n: number, variant = 0, day = n): unknown {
  if (f.oneOf) return f.oneOf[variant % f.oneOf.length];
  switch (f.type) {
    case "string":
    case "text": {
      const plain = `${snake(name)} ${variant ? `v${variant} ` : ""}${n}`;
      const options = [...conventional(name, n), ...(f.pattern ? patterned(name, n) : [plain])];
      const value = options.find(
        (s) => (!f.pattern || f.pattern.test(s)) && (f.max === undefined || s.length <= f.max),
      );
      if (value === undefined)
        throw new Error(
          `No generated value matches ${name}'s pattern ${f.pattern}: add a candidate in test/support/factory.ts`,
        );
      return value;
    }
    case "int":
      return 10 + n + variant * 1000;
    case "boolean":
      return conventionalBoolean[name] ?? variant % 2 === 0;
    case "datetime":
      return isoDate(day, variant);
    case "json":
      return conventionalJson[name] ?? [];
  }
}

/** The morph pair (`model_type`, `model_id`) of a resource that belongs to any owner, if it has one. */
const morphRelationOf = (def: ResourceDef) => {
  const rel = Object.values(def.relations).find((r) => r.kind === "morphTo");
  return rel?.kind === "morphTo" && def.fields.modelType && def.fields.modelId ? rel : undefined;
};

/** Resources a test can make a row of, and how: the create operation and the columns its route sets. */
export function createOperationOf(def: ResourceDef): Operation | undefined {
  return (
    topOp(def, "create") ?? operations.find((o) => o.kind === "create" && o.def === def && o.parent && !isOneToOne(o))
  );
}

export class ApiFailure extends Error {
  constructor(
    readonly reply: Reply,
    what: string,
  ) {
    super(`${what}: ${reply.status} ${JSON.stringify(reply.body)}`);
  }
}

/** `reply.body.data` of a 200, or a failure naming the request. */
export function ok<T = Row>(reply: Reply, what: string): T {
  if (reply.status !== 200) throw new ApiFailure(reply, what);
  return reply.body.data ?? reply.body;
}

/**
 * Rows only the service writes, which no route or action of the API makes (an automation's runs: its runner's), by
 * resource: made in the database, for a parent row made through the API.
 */
const serviceWritten: Record<string, (db: Database, parentId: number) => Promise<number>> = {
  automationRun: async (db, automationId) => {
    const { accountId } = await db.prisma.automation.findUniqueOrThrow({ where: { id: automationId } });
    const run = await db.prisma.automationRun.create({
      data: { accountId, automationId, status: "succeeded", conditionValue: true, outcomes: [], attempts: 1 },
    });
    return run.id;
  },
};

/** Builds valid bodies from a resource's definition and makes rows through the REST API. */
export class Factory {
  constructor(
    readonly api: Client,
    /** The database, for the rows only the service writes (`serviceWritten`). */
    readonly db?: Database,
  ) {}

  /** Whether rows of `def` are made in the database, under a parent (an automation's runs). */
  writtenByService(def: ResourceDef): boolean {
    return Object.hasOwn(serviceWritten, def.name);
  }

  /** A row of `def` that only the service writes, under the parent row `parentId`. */
  async serviceRow(def: ResourceDef, parentId: number): Promise<Row> {
    if (!this.db) throw new Error(`${def.name}: only the service writes these; give the factory the database`);
    return { id: await serviceWritten[def.name](this.db, parentId) };
  }

  /** A valid body for `def`, creating through the API whatever its references need. */
  async build(def: ResourceDef, options: BuildOptions = {}): Promise<Built> {
    const { variant = 0, full = false, omit = [], scalarsOnly = false, depth = 0, reuse = true } = options;
    const pending: Promise<void>[] = [];
    const fill = full && depth === 0;
    const attrs: Attrs = {};
    const day = fresh();
    const morph = morphRelationOf(def);
    for (const [name, f] of Object.entries(def.fields)) {
      if (f.writable === false || f.hidden || name === def.spread || omit.includes(name)) continue;
      if (morph && (name === "modelType" || name === "modelId")) continue;
      const key = snake(name);
      if (f.references) {
        if (scalarsOnly || !(f.required || (fill && f.references !== def.name))) continue;
        pending.push(
          this.reference(resourceNamed(f.references), depth + 1, reuse).then((row) => void (attrs[key] = row.id)),
        );
        continue;
      }
      if (f.type === "json" && scalarsOnly) continue;
      if (!f.required && !fill && !scalarsOnly) continue;
      attrs[key] = scalarValue(name, f, fresh(), variant, day);
    }
    if (morph && fill && !scalarsOnly && !omit.includes("modelType")) {
      const owner = morphOwnersOf(morph.morphRelation).find(
        (o) => o !== def && topOp(o, "create") && !Object.values(o.uploads ?? {}).some((u) => u.required),
      );
      if (owner) {
        attrs.model_type = owner.morphClass;
        pending.push(this.reference(owner, depth + 1, reuse).then((row) => void (attrs.model_id = row.id)));
      }
    }
    await Promise.all(pending);
    const ordered = Object.fromEntries(
      Object.keys(def.fields)
        .map(snake)
        .filter((k) => k in attrs)
        .map((k) => [k, attrs[k]]),
    );
    const files = scalarsOnly
      ? []
      : Object.entries(def.uploads ?? {})
          .filter(([, u]) => u.required || fill)
          .map(([name]) => snake(name));
    return { def, attrs: ordered, files };
  }

  private readonly references = new Map<string, Promise<Row>>();

  /** A row for a foreign key: one per target and factory when `reuse`, a new one otherwise. */
  reference(def: ResourceDef, depth: number, reuse: boolean): Promise<Row> {
    if (!reuse) return this.create(def, { depth });
    let row = this.references.get(def.name);
    if (!row) {
      row = this.create(def, { depth });
      this.references.set(def.name, row);
    }
    return row;
  }

  /** A row of `def` made through its own create route, or a nested one under a new parent. */
  async create(
    def: ResourceDef,
    options: BuildOptions & { multipart?: boolean; parent?: Promise<Row> | Row } = {},
  ): Promise<Row> {
    const op = createOperationOf(def);
    if (!op) throw new Error(`${def.name} has no create operation: use Factory.any()`);
    const params: Record<string, number> = {};
    let omit = options.omit ?? [];
    if (op.parent) {
      params[op.parent.def.param] = (await (options.parent ?? this.any(op.parent.def, (options.depth ?? 0) + 1))).id;
      omit = [...omit, ...fixedColumns(op.parent)];
    }
    const built = await this.build(def, { ...options, omit });
    return ok(
      await this.api.post(pathOf(op, params), options.multipart ? asForm(built) : asJson(built)),
      `create ${def.name}`,
    );
  }

  /**
   * A new row of `def`: made through the API when it can create one; rows that only appear as a side
   * effect (newsfeed items) are made by creating rows of resources whose create has an `afterInsert` or
   * `afterCreate` hook until a new one shows at the head of the list.
   */
  async any(def: ResourceDef, depth = 0): Promise<Row> {
    if (createOperationOf(def)) return this.create(def, { depth });
    const parent = this.writtenByService(def) && Object.values(def.relations).find((r) => r.kind === "belongsTo");
    if (parent) return this.serviceRow(def, (await this.reference(resourceNamed(parent.target), depth + 1, true)).id);
    const action = makingAction(def);
    if (action) {
      const subject = await this.reference(action.subject!, depth + 1, true);
      return ok(await this.api.post(pathOf(action, { [action.subject!.param]: subject.id })), action.field);
    }
    const list = topOp(def, "list");
    if (!list) throw new Error(`${def.name}: neither creatable nor listable`);
    const first = async () =>
      ok(await this.api.get(pathOf(list, {}, "limit=1")), `list ${def.name}`)[0] as Row | undefined;
    const before = (await first())?.id;
    for (const other of resources) {
      if (!(other.hooks?.afterInsert || other.hooks?.afterCreate) || !topOp(other, "create")) continue;
      await this.create(other, { depth: depth + 1 });
      const head = await first();
      if (head && head.id !== before) return head;
    }
    throw new Error(`${def.name}: no new row appeared after creating rows with afterInsert or afterCreate hooks`);
  }
}

/** The body as JSON: files as `data:` URIs. */
export const asJson = (built: Built): Attrs => ({
  ...built.attrs,
  ...Object.fromEntries(built.files.map((f) => [f, pngDataUri])),
});

/** The body as multipart/form-data, as PHP clients send it: booleans as 1/0, JSON as text, files as parts. */
export function asForm(built: Built): FormData {
  const form = new FormData();
  for (const [key, value] of Object.entries(built.attrs)) {
    if (value === null || value === undefined) continue;
    form.set(
      key,
      typeof value === "boolean"
        ? value
          ? "1"
          : "0"
        : typeof value === "object"
          ? JSON.stringify(value)
          : String(value),
    );
  }
  for (const key of built.files) form.set(key, pngFile(`${key}.png`));
  return form;
}

const normal = (f: FieldDef | undefined, value: unknown) =>
  f?.type === "datetime" && typeof value === "string" ? new Date(value).toISOString() : value;

/** The written attributes as the API should show them. */
export function expected(built: Built): Attrs {
  const byKey = new Map(Object.entries(built.def.fields).map(([name, f]) => [snake(name), f]));
  return Object.fromEntries(Object.entries(built.attrs).map(([k, v]) => [k, normal(byKey.get(k), v)]));
}

/** The same attributes of a row read back from the API. */
export function shown(built: Built, row: Row): Attrs {
  const byKey = new Map(Object.entries(built.def.fields).map(([name, f]) => [snake(name), f]));
  return Object.fromEntries(Object.keys(built.attrs).map((k) => [k, normal(byKey.get(k), row[k])]));
}

/** Stored-file columns of a row for each upload sent: the path column and file name must be set. */
export function storedFiles(built: Built, row: Row): Record<string, unknown> {
  return Object.fromEntries(
    built.files.map((key) => {
      const upload = Object.entries(built.def.uploads ?? {}).find(([name]) => snake(name) === key)![1];
      return [
        key,
        {
          stored: typeof row[snake(upload.column)] === "string" && row[snake(upload.column)] !== "",
          filename: upload.filenameColumn ? row[snake(upload.filenameColumn)] : undefined,
        },
      ];
    }),
  );
}

/**
 * One writable attribute of `def` with a value its rules reject, for all-or-nothing checks: an
 * over-long string, an unknown foreign key, a value outside `oneOf`, or null where null is not allowed.
 */
export function invalidAttribute(def: ResourceDef, omit: string[] = []): { key: string; value: unknown } {
  const writable = Object.entries(def.fields).filter(
    ([name, f]) => f.writable !== false && !f.hidden && name !== def.spread && !omit.includes(name),
  );
  const tooLong = writable
    .filter(([, f]) => (f.type === "string" || f.type === "text") && f.max !== undefined)
    .sort(([, a], [, b]) => a.max! - b.max!)[0];
  if (tooLong) return { key: snake(tooLong[0]), value: "x".repeat(tooLong[1].max! + 1) };
  const reference = writable.find(([, f]) => f.references);
  if (reference) return { key: snake(reference[0]), value: 2147483000 };
  const choice = writable.find(([, f]) => f.oneOf);
  if (choice)
    return { key: snake(choice[0]), value: typeof choice[1].oneOf![0] === "number" ? 987654 : "not-an-option" };
  const notNull = writable.find(([, f]) => !f.nullable);
  if (notNull) return { key: snake(notNull[0]), value: null };
  throw new Error(`${def.name}: no attribute the builder knows how to make invalid`);
}

/** A new account with a key of `scopes`, its REST client and a factory: tests that share nothing can run concurrently. */
export async function account(h: Harness, scopes = "*") {
  const name = `account ${fresh()}`;
  const api = client(h, await h.key(name, scopes));
  return { api, factory: new Factory(api), name };
}
