import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { OperationKind, PivotDef } from "../src/resources/define.ts";
import { resourceNamed } from "../src/resources/index.ts";
import { snake } from "../src/core/names.ts";
import { startHarness, type Client, type Harness, type Reply } from "./harness.ts";
import { account, fresh, scalarValue, type Attrs, type Factory, type Row } from "./support/factory.ts";
import { linkCollections, pathOf, type NestedGroup } from "./support/registry.ts";
import { data, rejected } from "./support/checks.ts";

const BATCH_MAX = 3;
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ batchMaxItems: BATCH_MAX });
});
afterAll(() => h?.close());

const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);
const BAD_ID = 2147483000;

describe.each(linkCollections().map((g) => [g.key, g] as const))("%s", (_key, g: NestedGroup) => {
  const op = (kind: OperationKind) => g.ops.get(kind);
  const pivot: PivotDef | undefined = g.pivot;
  const pivotFields = Object.entries(pivot?.fields ?? {});
  /** The pivot accessor the nested list embeds the link columns under, when it has any. */
  const accessor =
    pivot && pivotFields.length && (pivot.always || op("list")?.includes.includes(pivot.as)) ? pivot.as : undefined;
  /** `include=` that shows it: none when the link columns are always shown. */
  const showPivot = accessor && !pivot!.always ? `include=${accessor}&` : "";
  const at = (parentId: number, id?: number) => ({
    [g.parent.param]: parentId,
    ...(id === undefined ? {} : { [g.route.param]: id }),
  });

  let api: Client;
  let factory: Factory;
  /** Rows of the related resource, ascending ids; and one of another account. */
  let related: Row[];
  let foreign: Row;
  beforeAll(async () => {
    ({ api, factory } = await account(h));
    // A new person gets the account's default roles (test/roles.test.ts); here none, so every parent starts unlinked.
    await h.db.store.prisma.setting.updateMany({
      where: { group: "permission", name: "default_roles" },
      data: { payload: [] },
    });
    related = [];
    for (let i = 0; i < 5; i++) related.push(await factory.create(g.def));
    foreign = await (await account(h)).factory.create(g.def);
  });
  const ids = () => related.map((r) => r.id);

  /** Link columns for one item, variant `variant`: REST names and values. */
  const pivotValues = async (variant: number): Promise<Attrs> => {
    const values: Attrs = {};
    const day = fresh();
    for (const [name, f] of pivotFields) {
      values[snake(name)] = f.references
        ? (await factory.reference(resourceNamed(f.references), 1, true)).id
        : scalarValue(name, f, fresh(), variant, day);
    }
    return values;
  };
  const normal = (values: Attrs) =>
    Object.fromEntries(
      Object.entries(values).map(([k, v]) => [
        k,
        pivot?.fields[k.replace(/_([a-z])/g, (_, c) => c.toUpperCase())]?.type === "datetime" && v
          ? new Date(String(v)).toISOString()
          : v,
      ]),
    );

  /** The related rows the parent is linked to (one id per link row), ascending, and each link's columns. */
  const state = async (parentId: number) => {
    const list = op("list")!;
    const rows: Row[] = [];
    for (let page = 1; ; page++) {
      const r = await api.get(pathOf(list, at(parentId), `${showPivot}limit=100&page=${page}`));
      rows.push(...data<Row[]>(r, "nested list"));
      if (page >= r.body.meta.last_page) break;
    }
    return {
      ids: sorted(rows.map((r) => r.id)),
      pivots: accessor
        ? rows.map((r) => [
            r.id,
            normal(
              Object.fromEntries(
                pivotFields.map(([name]) => [
                  snake(name),
                  (r[accessor] as Record<string, unknown> | undefined)?.[snake(name)],
                ]),
              ),
            ),
          ])
        : [],
    };
  };
  const linked = async (parentId: number) => (await state(parentId)).ids;
  const pivotOf = async (parentId: number, id: number) =>
    (await state(parentId)).pivots.filter(([rid]) => rid === id).map(([, p]) => p);
  const newParent = () => factory.any(g.parent);
  const changes = (r: Reply, what: string) => {
    expect(r.status, `${what} ${JSON.stringify(r.body)}`).toBe(200);
    return r.body;
  };

  test("attach: a list of ids, then only what is not yet linked", async () => {
    const attach = op("attach");
    if (!attach) return;
    const parent = await newParent();
    const [a, b, c] = ids();
    expect(changes(await api.post(pathOf(attach, at(parent.id)), { resources: [a, b] }), "attach")).toEqual({
      attached: [a, b],
    });
    expect(await linked(parent.id)).toEqual([a, b]);
    const again = changes(await api.post(pathOf(attach, at(parent.id)), { resources: [a, c] }), "attach again");
    if (pivot?.duplicates) {
      expect(again).toEqual({ attached: [a, c] });
      expect(await linked(parent.id)).toEqual(sorted([a, a, b, c]));
    } else {
      expect(again).toEqual({ attached: [c] });
      expect(await linked(parent.id)).toEqual([a, b, c]);
    }
    expect(
      changes(await api.post(pathOf(attach, at(parent.id)), { resources: [b, b] }), "attach one id twice"),
    ).toEqual({
      attached: pivot?.duplicates ? [b] : [],
    });
  });

  test("attach with duplicates: true links already linked rows again and lists them", async () => {
    const attach = op("attach");
    if (!attach || g.relation.kind !== "belongsToMany") return;
    const parent = await newParent();
    const [a, b] = ids();
    changes(await api.post(pathOf(attach, at(parent.id)), { resources: [a, b] }), "attach");
    expect(
      changes(await api.post(pathOf(attach, at(parent.id)), { resources: [b], duplicates: true }), "attach duplicates"),
    ).toEqual({ attached: [b] });
    expect(await linked(parent.id)).toEqual(sorted([a, b, b]));
    rejected(await api.post(pathOf(attach, at(parent.id)), { resources: [a], duplicates: "maybe" }), ["duplicates"]);
  });

  test("attach: an object keyed by id with link columns or [], and a list of objects; the columns are read back through the nested list", async () => {
    const attach = op("attach");
    if (!attach) return;
    const parent = await newParent();
    const [a, b, c] = ids();
    const values = await pivotValues(0);
    expect(
      changes(
        await api.post(pathOf(attach, at(parent.id)), { resources: { [a]: values, [b]: [] } }),
        "attach object form",
      ),
    ).toEqual({
      attached: [a, b],
    });
    expect(
      changes(
        await api.post(pathOf(attach, at(parent.id)), { resources: [{ id: c, ...values }] }),
        "attach list of objects",
      ),
    ).toEqual({
      attached: [c],
    });
    expect(await linked(parent.id)).toEqual([a, b, c]);
    if (accessor) {
      expect(await pivotOf(parent.id, a)).toEqual([normal(values)]);
      expect(await pivotOf(parent.id, c)).toEqual([normal(values)]);
    }
    const single = ids()[3];
    expect(changes(await api.post(pathOf(attach, at(parent.id)), { resources: single }), "attach a single id")).toEqual(
      { attached: [single] },
    );
  });

  test("detach: lists every existing id asked for, linked or not, and unlinks them", async () => {
    const attach = op("attach");
    const detach = op("detach");
    if (!attach || !detach) return;
    const parent = await newParent();
    const [a, b, c, d] = ids();
    changes(await api.post(pathOf(attach, at(parent.id)), { resources: [a, b, c] }), "attach");
    expect(changes(await api.delete(pathOf(detach, at(parent.id)), { resources: [a, d] }), "detach")).toEqual({
      detached: [a, d],
    });
    expect(await linked(parent.id)).toEqual([b, c]);
    expect(
      changes(await api.delete(pathOf(detach, at(parent.id)), { resources: { [b]: [] } }), "detach object form"),
    ).toEqual({ detached: [b] });
    expect(await linked(parent.id)).toEqual([c]);
  });

  test("sync: attaches the missing, updates changed link columns, detaches the rest unless detaching is false", async () => {
    const sync = op("sync");
    if (!sync) return;
    const parent = await newParent();
    const [a, b, c, d, e] = ids();
    const first = await pivotValues(0);
    const second = await pivotValues(1);
    expect(
      changes(
        await api.patch(pathOf(sync, at(parent.id)), { resources: { [a]: first, [b]: first, [c]: first } }),
        "sync from nothing",
      ),
    ).toEqual({
      attached: [a, b, c],
      detached: [],
      updated: [],
    });
    expect(await linked(parent.id)).toEqual([a, b, c]);
    const r = changes(
      await api.patch(pathOf(sync, at(parent.id)), { resources: { [a]: first, [b]: second, [d]: second } }),
      "sync",
    );
    expect(r).toEqual({ attached: [d], detached: [c], updated: pivotFields.length ? [b] : [] });
    expect(await linked(parent.id)).toEqual([a, b, d]);
    if (accessor) {
      expect(await pivotOf(parent.id, a)).toEqual([normal(first)]);
      expect(await pivotOf(parent.id, b)).toEqual([normal(second)]);
      expect(await pivotOf(parent.id, d)).toEqual([normal(second)]);
    }
    expect(
      changes(
        await api.patch(pathOf(sync, at(parent.id)), { resources: [e], detaching: false }),
        "sync without detaching",
      ),
    ).toEqual({
      attached: [e],
      detached: [],
      updated: [],
    });
    expect(await linked(parent.id)).toEqual([a, b, d, e]);
    expect(
      changes(await api.patch(pathOf(sync, at(parent.id)), { resources: [a, e], detaching: true }), "sync detaching"),
    ).toEqual({
      attached: [],
      detached: [b, d],
      updated: [],
    });
    expect(await linked(parent.id)).toEqual([a, e]);
    expect(changes(await api.patch(pathOf(sync, at(parent.id)), { resources: [] }), "sync to nothing")).toEqual({
      attached: [],
      detached: [a, e],
      updated: [],
    });
    expect(await linked(parent.id)).toEqual([]);
  });

  test("toggle: unlinks what is linked and links what is not", async () => {
    const attach = op("attach");
    const toggle = op("toggle");
    if (!attach || !toggle) return;
    const parent = await newParent();
    const [a, b, c] = ids();
    changes(await api.post(pathOf(attach, at(parent.id)), { resources: [a, b] }), "attach");
    expect(changes(await api.patch(pathOf(toggle, at(parent.id)), { resources: [a, c] }), "toggle")).toEqual({
      attached: [c],
      detached: [a],
    });
    expect(await linked(parent.id)).toEqual([b, c]);
    const values = await pivotValues(0);
    expect(
      changes(
        await api.patch(pathOf(toggle, at(parent.id)), { resources: { [a]: values, [b]: [] } }),
        "toggle object form",
      ),
    ).toEqual({
      attached: [a],
      detached: [b],
    });
    expect(await linked(parent.id)).toEqual([a, c]);
    if (accessor) expect(await pivotOf(parent.id, a)).toEqual([normal(values)]);
  });

  test("pivot: updates one link's columns, answers {updated: [id]}, and 404 when the row is not linked", async () => {
    const attach = op("attach");
    const pivotOp = op("pivot");
    if (!attach || !pivotOp) return;
    const parent = await newParent();
    const [a, b] = ids();
    changes(await api.post(pathOf(attach, at(parent.id)), { resources: { [a]: await pivotValues(0) } }), "attach");
    const values = await pivotValues(1);
    expect(changes(await api.patch(pathOf(pivotOp, at(parent.id, a)), { pivot: values }), "pivot")).toEqual({
      updated: [a],
    });
    if (accessor) expect(await pivotOf(parent.id, a)).toEqual([normal(values)]);
    expect(
      (await api.patch(pathOf(pivotOp, at(parent.id, b)), { pivot: values })).status,
      "a row that is not linked",
    ).toBe(404);
    rejected(await api.patch(pathOf(pivotOp, at(parent.id, a)), {}), ["pivot"], "no pivot object");
    expect(await linked(parent.id)).toEqual([a]);
  });

  test("link columns the definition lets be null accept null", async () => {
    const attach = op("attach");
    const nullable = pivotFields.filter(([, f]) => f.nullable && !f.references);
    if (!attach || !nullable.length) return;
    const parent = await newParent();
    const [a] = ids();
    const values = Object.fromEntries(nullable.map(([name]) => [snake(name), null]));
    expect(
      changes(
        await api.post(pathOf(attach, at(parent.id)), { resources: { [a]: values } }),
        "attach with null link columns",
      ),
    ).toEqual({ attached: [a] });
    expect(await linked(parent.id)).toEqual([a]);
  });

  test("unknown ids, another account's ids and malformed ids are 422, and nothing changes", async () => {
    const parent = await newParent();
    const [a, b, c] = ids();
    const attach = op("attach");
    if (attach)
      changes(await api.post(pathOf(attach, at(parent.id)), { resources: { [a]: await pivotValues(0) } }), "attach");
    const before = await state(parent.id);
    const bodies = (bad: number) => ({
      attach: { resources: [b, bad] },
      detach: { resources: [a, bad] },
      sync: { resources: [c, bad] },
      toggle: { resources: [a, bad] },
    });
    for (const kind of ["attach", "detach", "sync", "toggle"] as const) {
      const o = op(kind);
      if (!o) continue;
      for (const bad of [BAD_ID, foreign.id]) {
        const r = await api.send(o.method, pathOf(o, at(parent.id)), bodies(bad)[kind]);
        rejected(r, ["resources"], `${kind} with id ${bad}`);
      }
      if (kind !== "attach" && g.key !== linkCollections()[0].key) continue;
      rejected(
        await api.send(o.method, pathOf(o, at(parent.id)), { resources: ["x"] }),
        ["resources.0"],
        `${kind} with a non-numeric id`,
      );
      rejected(await api.send(o.method, pathOf(o, at(parent.id)), {}), ["resources"], `${kind} without resources`);
    }
    expect(await state(parent.id), "nothing changed").toEqual(before);
    expect(
      (await api.post(pathOf(attach ?? op("sync")!, at(BAD_ID)), { resources: [a] })).status,
      "unknown parent",
    ).toBe(404);
  });

  test(`resources lists hold at most batchMaxItems (${BATCH_MAX}) items`, async () => {
    const parent = await newParent();
    const four = ids().slice(0, BATCH_MAX + 1);
    for (const kind of ["attach", "detach", "sync", "toggle"] as const) {
      const o = op(kind);
      if (!o) continue;
      rejected(
        await api.send(o.method, pathOf(o, at(parent.id)), { resources: four }),
        ["resources"],
        `${kind} over the cap`,
      );
    }
    expect(await linked(parent.id)).toEqual([]);
  });
});
