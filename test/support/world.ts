import type { FieldDef, PivotDef, ResourceDef } from "../../src/resources/define.ts";
import { resourceNamed, resources } from "../../src/resources/index.ts";
import { isOneToOne, operations, type Operation } from "../../src/resources/operations.ts";
import { snake } from "../../src/core/names.ts";
import { client, type Client, type Harness } from "../harness.ts";
import type { Database } from "../../src/db/prisma.ts";
import {
  asJson,
  createOperationOf,
  Factory,
  fresh,
  ok,
  scalarValue,
  type Attrs,
  type BuildOptions,
  type Built,
  type Row,
} from "./factory.ts";
import { fixedColumns, makingAction, nestedGroups, pathOf, topOp, type NestedGroup } from "./registry.ts";

/**
 * Writes `marker` into every string value whose column accepts it (patterns and lengths permitting),
 * so that any row of the account can be recognised in a response body by that one word.
 */
export function markValue(marker: string, f: FieldDef | undefined, value: unknown): unknown {
  if (
    typeof value !== "string" ||
    !f ||
    (f.type !== "string" && f.type !== "text") ||
    f.oneOf ||
    value.startsWith("data:") ||
    value.includes("\\")
  )
    return value;
  const candidates = f.pattern
    ? [`${marker}${value}`, `${marker}-${value.replace(/\s+/g, "-")}`, `${marker}_${value.replace(/[\s-]+/g, "_")}`]
    : [`${marker} ${value}`];
  return (
    candidates.find((c) => (!f.pattern || f.pattern.test(c)) && (f.max === undefined || c.length <= f.max)) ?? value
  );
}

/** Columns that hold code, which a marker would make invalid (an automation's cron expression and condition). */
const UNMARKED = new Set(["schedule", "condition"]);

function markAttrs(marker: string, fields: Record<string, FieldDef>, attrs: Attrs): Attrs {
  const byKey = new Map(Object.entries(fields).map(([name, f]) => [snake(name), f]));
  for (const [key, value] of Object.entries(attrs))
    if (!UNMARKED.has(key)) attrs[key] = markValue(marker, byKey.get(key), value);
  return attrs;
}

/** The generic body builder of test/support/factory.ts, with every string it writes marked. */
export class MarkedFactory extends Factory {
  constructor(
    api: Client,
    readonly marker: string,
    db?: Database,
  ) {
    super(api, db);
  }

  override async build(def: ResourceDef, options: BuildOptions = {}): Promise<Built> {
    const built = await super.build(def, options);
    markAttrs(this.marker, def.fields, built.attrs);
    return built;
  }
}

/** A seeded parent and one row related to it through a nested route (`/users/{user}/rank-records/{rank_record}`). */
export interface Pair {
  parent: number;
  child: number;
}

/**
 * One account's organisation, built from the registry through the REST API with a `*` key: a row of
 * every resource (optional references and uploads filled), and for every nested route a parent with a
 * related row. Every string written carries the account's marker.
 */
export class World {
  readonly rows = new Map<string, Row>();
  readonly pairs = new Map<string, Pair>();
  /** A row each view (`/roster`) shows, by view path: views filter their resource's rows. */
  readonly viewRows = new Map<string, number>();
  /** The account's user the keys of `key()` are bound to (so `/me` has someone to show). */
  user!: Row;
  api!: Client;
  factory!: MarkedFactory;
  private readonly keys = new Map<string, string>();

  constructor(
    readonly h: Harness,
    readonly account: string,
    readonly marker: string,
  ) {}

  /** A key of this account holding `scopes` (space separated), bound to the world's user; cached. */
  async key(scopes: string): Promise<string> {
    let key = this.keys.get(scopes);
    if (!key) this.keys.set(scopes, (key = await this.h.key(this.account, scopes, this.user?.id ?? null)));
    return key;
  }

  client(scopes: string, headers: Record<string, string> = {}): Promise<Client> {
    return this.key(scopes).then((key) => client(this.h, key, headers));
  }

  row(def: ResourceDef): Row {
    const row = this.rows.get(def.name);
    if (!row) throw new Error(`${this.account}: no seeded ${def.name}`);
    return row;
  }

  id(def: ResourceDef): number {
    return this.row(def).id;
  }

  pair(g: NestedGroup): Pair {
    const pair = this.pairs.get(g.key);
    if (!pair) throw new Error(`${this.account}: no seeded pair for ${g.key}`);
    return pair;
  }

  async seed(): Promise<this> {
    const bootstrap = client(this.h, await this.h.key(this.account, "*"));
    this.user = ok(
      await bootstrap.post("/v2/users", {
        name: `${this.marker} Keyholder`,
        email: `${this.marker}keyholder@example.com`,
      }),
      "seed user",
    );
    this.api = await this.client("*");
    this.factory = new MarkedFactory(this.api, this.marker, this.h.db);
    for (const def of resources) {
      if (def.link || !operations.some((op) => op.def === def || op.parent?.def === def)) continue;
      this.rows.set(def.name, await this.anyRow(def));
    }
    for (const g of nestedGroups()) this.pairs.set(g.key, await this.seedPair(g));
    for (const op of operations)
      if (op.view && op.kind === "list") this.viewRows.set(op.view.path, await this.viewRow(op));
    return this;
  }

  /** A row the view lists: the first one, or a new row of another variant (booleans flipped) until one shows. */
  private async viewRow(list: Operation): Promise<number> {
    for (let variant = 1; variant <= 3; variant++) {
      const first = ok(await this.api.get(pathOf(list, {}, "limit=1")), `list ${list.path}`)[0] as Row | undefined;
      if (first) return first.id;
      await this.factory.create(list.def, { full: true, variant });
    }
    throw new Error(`${list.path}: lists nothing however its rows are made`);
  }

  /** A full row of `def`, or for resources the API makes itself (settings, newsfeed items) an existing one. */
  private async anyRow(def: ResourceDef): Promise<Row> {
    if (createOperationOf(def)) return this.factory.create(def, { full: true });
    const list = topOp(def, "list");
    if (list) {
      const first = ok(await this.api.get(pathOf(list, {}, "limit=1")), `list ${def.name}`)[0] as Row | undefined;
      if (first) return first;
    }
    return this.factory.any(def);
  }

  private async seedPair(g: NestedGroup): Promise<Pair> {
    const parent = this.row(g.parent);
    if (g.relation.kind === "belongsTo") {
      const child = parent[snake(g.relation.foreignKey)];
      if (typeof child !== "number")
        throw new Error(`${g.key}: the seeded ${g.parent.name} has no ${g.relation.foreignKey}`);
      return { parent: parent.id, child };
    }
    return { parent: parent.id, child: await this.linkedChild(g, parent.id) };
  }

  /** Link columns for one link row: marked strings, references to the world's rows. */
  pivotValues(pivot: PivotDef | undefined): Attrs {
    const values: Attrs = {};
    const day = fresh();
    for (const [name, f] of Object.entries(pivot?.fields ?? {})) {
      values[snake(name)] = f.references
        ? this.id(resourceNamed(f.references))
        : markValue(this.marker, f, scalarValue(name, f, fresh(), 0, day));
    }
    return values;
  }

  /** A valid body for a nested create or batch item under `g`: the related row's attributes and, on link routes, `pivot`. */
  async nestedBody(g: NestedGroup, options: BuildOptions = {}): Promise<Attrs> {
    const built = await this.factory.build(g.def, { ...options, omit: [...(options.omit ?? []), ...fixedColumns(g)] });
    const body = asJson(built);
    if (g.pivot && Object.keys(g.pivot.fields).length && !options.scalarsOnly) body.pivot = this.pivotValues(g.pivot);
    return body;
  }

  /** A new row related to `parent` through `g`: made by the nested create, or made and attached. */
  async linkedChild(g: NestedGroup, parent: number): Promise<number> {
    if (this.factory.writtenByService(g.def)) return (await this.factory.serviceRow(g.def, parent)).id;
    const create = g.ops.get("create");
    if (create) {
      const row = ok(
        await this.api.post(pathOf(create, { [g.parent.param]: parent }), await this.nestedBody(g, { full: true })),
        `create under ${g.key}`,
      );
      return row.id;
    }
    const action = makingAction(g.def);
    if (action?.subject === g.parent)
      return ok(await this.api.post(pathOf(action, { [g.parent.param]: parent })), `${action.field} under ${g.key}`).id;
    const attach = g.ops.get("attach");
    if (!attach) throw new Error(`${g.key}: neither create nor attach to link a row with`);
    const id = (await this.freshRow(g.def)).id;
    const pivot = g.pivot && Object.keys(g.pivot.fields).length ? this.pivotValues(g.pivot) : [];
    ok(
      await this.api.post(pathOf(attach, { [g.parent.param]: parent }), { resources: { [id]: pivot } }),
      `attach under ${g.key}`,
    );
    return id;
  }

  /** A new row of `def` (made through its own create route, or under a new parent). */
  freshRow(def: ResourceDef, options: BuildOptions = {}): Promise<Row> {
    return createOperationOf(def) ? this.factory.create(def, options) : this.factory.any(def);
  }

  /** A new row of `def` made through its top-level create with some attributes set. */
  async freshRowWith(def: ResourceDef, overrides: Attrs): Promise<Row> {
    const create = topOp(def, "create");
    if (!create) throw new Error(`${def.name}: no top-level create`);
    const built = await this.factory.build(def);
    return ok(await this.api.post(pathOf(create), { ...asJson(built), ...overrides }), `create ${def.name}`);
  }

  /** A fresh parent and its one-to-one related row (`/users/{user}/rank/{rank}`, `/ranks/{rank}/image/{image}`). */
  async freshOneToOne(g: NestedGroup): Promise<Pair> {
    if (g.relation.kind === "belongsTo") {
      const child = (await this.freshRow(g.def)).id;
      const parent = (await this.freshRowWith(g.parent, { [snake(g.relation.foreignKey)]: child })).id;
      return { parent, child };
    }
    const parent = (await this.freshRow(g.parent)).id;
    return { parent, child: await this.linkedChild(g, parent) };
  }
}

/** True for routes that address the parent's single related row. */
export const oneToOne = (g: NestedGroup) => isOneToOne([...g.ops.values()][0]);
