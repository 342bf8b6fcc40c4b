import { snake } from "../../src/core/names.ts";
import type { ResourceDef } from "../../src/resources/define.ts";
import { pivotOf, type Operation } from "../../src/resources/operations.ts";
import { nestedGroups, pathOf, type NestedGroup } from "./registry.ts";
import { asJson, type Built } from "./factory.ts";
import type { Pair, World } from "./world.ts";

/** The registry's nested routes, by the group key of test/support/registry.ts. */
const groups = new Map(nestedGroups().map((g) => [g.key, g]));

/** The nested route an operation belongs to, if any. */
export function groupOf(op: Operation): NestedGroup | undefined {
  if (!op.parent) return undefined;
  return groups.get(`${op.parent.def.path}/{${op.parent.def.param}}/${op.parent.route.path}`);
}

/** A REST request for one operation: path parameters, query string and body kept apart so that tests can swap ids. */
export interface Planned {
  op: Operation;
  method: string;
  params: Record<string, number>;
  query: string;
  body?: unknown;
}

export const urlOf = (p: Planned, query = p.query): string => pathOf(p.op, p.params, query);

/** Path parameters of `op` filled with a world's seeded rows (never consumed: the same ids every time). */
export function seededParams(op: Operation, w: World): Record<string, number> {
  const g = groupOf(op);
  if (g) {
    const pair = w.pair(g);
    return op.path.includes(`{${g.route.param}}`)
      ? { [g.parent.param]: pair.parent, [g.route.param]: pair.child }
      : { [g.parent.param]: pair.parent };
  }
  if (op.subject) return { [op.subject.param]: w.id(op.subject) };
  if (!op.path.includes(`{${op.def.param}}`)) return {};
  const viewed = op.view && w.viewRows.get(op.view.path);
  return { [op.def.param]: viewed || w.id(op.def) };
}

/** The resource each path parameter of `op` names. */
export function paramResources(op: Operation): Record<string, ResourceDef> {
  const g = groupOf(op);
  if (g) return { [g.parent.param]: g.parent, [g.route.param]: g.def };
  if (op.subject) return { [op.subject.param]: op.subject };
  return { [op.def.param]: op.def };
}

/** A search body that selects rows by id. */
export const searchById = (value: unknown, operator = "=") => ({ filters: [{ field: "id", operator, value }] });

/**
 * A well-formed request for `op` against world `w` that should succeed with a key of `op.scopes`.
 * Reads and non-destructive writes use the seeded rows; whatever an operation deletes, detaches or
 * moves is made for it first (with `w`'s `*` key), so operations do not depend on each other.
 */
export async function planValid(op: Operation, w: World, query = ""): Promise<Planned> {
  const planned = (params: Record<string, number>, body?: unknown): Planned => ({
    op,
    method: op.method,
    params,
    query,
    body,
  });
  const f = w.factory;
  if (op.kind === "command" || op.kind === "feed") return planned({});
  if (op.kind === "action") return planned(seededParams(op, w), await actionBody(op, w));
  const g = groupOf(op);
  if (!g) {
    const def = op.def;
    const seeded = seededParams(op, w);
    switch (op.kind) {
      case "list":
      case "show":
        return planned(seeded);
      case "search":
        return planned({}, searchById(1, ">="));
      case "create":
        return planned({}, toBody(await f.build(def, { full: true })));
      case "update":
        return planned(seeded, toBody(await f.build(def, { variant: 1, scalarsOnly: true })));
      case "delete":
        return planned({ [def.param]: (await w.freshRow(def)).id });
      case "batchCreate":
        return planned({}, { resources: [toBody(await f.build(def, { full: true })), toBody(await f.build(def))] });
      case "batchUpdate":
        return planned(
          {},
          { resources: { [w.id(def)]: toBody(await f.build(def, { variant: 2, scalarsOnly: true })) } },
        );
      case "batchDelete":
        return planned({}, { resources: [(await w.freshRow(def)).id] });
    }
    throw new Error(`${op.field}: no plan for a top-level ${op.kind}`);
  }

  const at = (pair: Partial<Pair> & { parent: number }) => ({
    [g.parent.param]: pair.parent,
    ...(pair.child === undefined ? {} : { [g.route.param]: pair.child }),
  });
  const seeded = w.pair(g);
  const oneToOne = g.relation.kind === "belongsTo" || (g.relation.kind === "morphOne" && !g.ops.has("list"));
  const scalars = () => w.nestedBody(g, { variant: 1, scalarsOnly: true });
  switch (op.kind) {
    case "list":
      return planned(at({ parent: seeded.parent }));
    case "search":
      return planned(at({ parent: seeded.parent }), searchById(1, ">="));
    case "show":
      return planned(at(seeded));
    case "update":
      return planned(at(seeded), await scalars());
    case "pivot":
      return planned(at(seeded), { pivot: pivotOf(op) ? w.pivotValues(pivotOf(op)) : { order: 7 } });
    case "create": {
      const parent = oneToOne ? (await w.freshRow(g.parent)).id : seeded.parent;
      return planned(at({ parent }), await w.nestedBody(g, { full: true }));
    }
    case "delete":
      return planned(
        at(
          oneToOne ? await w.freshOneToOne(g) : { parent: seeded.parent, child: await w.linkedChild(g, seeded.parent) },
        ),
      );
    case "batchCreate":
      return planned(at({ parent: seeded.parent }), {
        resources: [await w.nestedBody(g, { full: true }), await w.nestedBody(g)],
      });
    case "batchUpdate":
      return planned(at({ parent: seeded.parent }), { resources: { [seeded.child]: await scalars() } });
    case "batchDelete": {
      const pair = oneToOne
        ? await w.freshOneToOne(g)
        : { parent: seeded.parent, child: await w.linkedChild(g, seeded.parent) };
      return planned(at({ parent: pair.parent }), { resources: [pair.child] });
    }
    case "associate":
      return planned(at({ parent: seeded.parent }), { related_key: (await w.freshRow(g.def)).id });
    case "dissociate":
      return planned(at({ parent: seeded.parent, child: await w.linkedChild(g, seeded.parent) }));
    case "attach":
      return planned(at({ parent: seeded.parent }), { resources: linkResources(w, g, [(await w.freshRow(g.def)).id]) });
    case "detach":
      return planned(at({ parent: seeded.parent }), { resources: [await w.linkedChild(g, seeded.parent)] });
    case "sync":
      // The seeded link is kept (it is in the list), so later operations still find it.
      return planned(at({ parent: seeded.parent }), {
        resources: linkResources(w, g, [seeded.child, (await w.freshRow(g.def)).id]),
      });
    case "toggle":
      return planned(at({ parent: seeded.parent }), {
        resources: [await w.linkedChild(g, seeded.parent), (await w.freshRow(g.def)).id],
      });
  }
  throw new Error(`${op.field}: no plan for a nested ${op.kind}`);
}

/** `resources` of a link operation: an object keyed by id with link columns, or a list of ids when the link has none. */
export function linkResources(w: World, g: NestedGroup, ids: number[]): unknown {
  const fields = Object.keys(g.pivot?.fields ?? {});
  return fields.length ? Object.fromEntries(ids.map((id) => [id, w.pivotValues(g.pivot)])) : ids;
}

const toBody = (built: Built) => asJson(built);

/**
 * A request for `op` that uses only the world's seeded rows (nothing is made for it): what the
 * isolation probes start from before putting another account's id in one place. Destructive
 * operations name the seeded rows; the probes never let them succeed.
 */
export async function planSeeded(op: Operation, w: World, query = ""): Promise<Planned> {
  const planned = (body?: unknown): Planned => ({ op, method: op.method, params: seededParams(op, w), query, body });
  const f = w.factory;
  const g = groupOf(op);
  const id = g ? w.pair(g).child : w.rows.has(op.def.name) ? w.id(op.def) : 0;
  const full = async () => (g ? w.nestedBody(g, { full: true }) : toBody(await f.build(op.def, { full: true })));
  const scalars = async () =>
    g
      ? w.nestedBody(g, { variant: 3, scalarsOnly: true })
      : toBody(await f.build(op.def, { variant: 3, scalarsOnly: true }));
  switch (op.kind) {
    case "list":
    case "show":
    case "delete":
    case "dissociate":
    case "command":
    case "feed":
    case "publicShow":
      return planned();
    case "publicSubmit":
      return planned({});
    case "search":
      return planned(searchById(1, ">="));
    case "create":
      return planned(await full());
    case "update":
      return planned(await scalars());
    case "batchCreate":
      return planned({ resources: [await full()] });
    case "batchUpdate":
      return planned({ resources: { [id]: await scalars() } });
    case "batchDelete":
    case "detach":
    case "toggle":
      return planned({ resources: [id] });
    case "attach":
    case "sync":
      return planned({ resources: linkResources(w, g!, [id]) });
    case "pivot":
      return planned({ pivot: pivotOf(op) ? w.pivotValues(pivotOf(op)) : { order: 7 } });
    case "associate":
      return planned({ related_key: id });
    case "action":
      return planned(await actionBody(op, w));
  }
}

/** Values of actions' inputs other than ids: a password long enough for `setUserPassword`. */
const ACTION_VALUES: Record<string, unknown> = { password: "correct horse battery staple" };

/**
 * The body of an action on one of the world's rows: its input attributes. The only ids actions take are events'
 * (`event_id` of a redelivery): the world's account's first event.
 */
async function actionBody(op: Operation, w: World): Promise<Record<string, unknown> | undefined> {
  const input = op.action!.input;
  if (!input) return undefined;
  const body: Record<string, unknown> = {};
  for (const name of Object.keys(input)) {
    if (name in ACTION_VALUES) {
      body[snake(name)] = ACTION_VALUES[name];
      continue;
    }
    // A given event (an automation's test) is the alternative to an event id: the id alone is a complete input.
    if (name === "event") continue;
    if (name !== "eventId")
      throw new Error(`${op.field}: no value for the action's ${name}: add one in test/support/plans.ts`);
    const account = await w.h.db.prisma.account.findUniqueOrThrow({ where: { name: w.account } });
    body.event_id = (
      await w.h.db.prisma.changeEvent.findFirstOrThrow({ where: { accountId: account.id }, orderBy: { id: "asc" } })
    ).id;
  }
  return body;
}
