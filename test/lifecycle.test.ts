import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { OperationKind, ResourceDef } from "../src/resources/define.ts";
import type { Operation } from "../src/resources/operations.ts";
import { snake } from "../src/core/names.ts";
import { startHarness, type Client, type Harness } from "./harness.ts";
import { account, type Factory, asForm, asJson, invalidAttribute, type Built, type Row } from "./support/factory.ts";
import { childCollections, creatable, fixedColumns, pathOf, topOp, type NestedGroup } from "./support/registry.ts";
import { allIds, data, expectIncluded, expectWritten, rejected, total } from "./support/checks.ts";

const BATCH_MAX = 3;
let h: Harness;

beforeAll(async () => {
  h = await startHarness({ batchMaxItems: BATCH_MAX });
});
afterAll(() => h?.close());

/**
 * An operation's include values in groups no larger than the configured cap (`includeMaxCount`):
 * a read that shows every include is one request per group.
 */
const includeGroups = (op: Operation): string[][] => {
  const all = [...op.includes].sort();
  const size = h.config.includeMaxCount;
  const groups: string[][] = [];
  for (let i = 0; i < all.length; i += size) groups.push(all.slice(i, i + size));
  return groups.length ? groups : [[]];
};
const withIncludes = (op: Operation, params: Record<string, number> = {}, group = 0) => {
  const values = includeGroups(op)[group] ?? [];
  return pathOf(op, params, values.length ? `include=${values.join(",")}` : "");
};
/**
 * A sample of an operation's include values: one plain relation and one nested or wildcard value,
 * rotating with the operation so that the writes between the full reads cover different ones.
 */
const sampleIncludes = (op: Operation) => {
  const plain = op.includes.filter((i) => !i.includes("."));
  const deep = op.includes.filter((i) => i.includes("."));
  const salt = [...op.field].reduce((n, c) => n + c.charCodeAt(0), 0);
  return [plain[salt % (plain.length || 1)], deep[salt % (deep.length || 1)]].filter((i): i is string => !!i).sort();
};
const withSample = (op: Operation, params: Record<string, number> = {}) => {
  const values = sampleIncludes(op);
  return pathOf(op, params, values.length ? `include=${values.join(",")}` : "");
};
/** A body as its resource is best sent: multipart/form-data when it carries files, JSON otherwise. */
const wire = (built: Built) => (built.files.length ? asForm(built) : asJson(built));
/** A write's answer as later reads show it: an attribute shown once (a new webhook's secret) is null there. */
const asRead = (def: ResourceDef, row: Row): Row => ({
  ...row,
  ...Object.fromEntries(
    Object.entries(def.computed ?? {})
      .filter(([, c]) => c.once)
      .map(([name]) => [snake(name), null]),
  ),
});
/** A row without its embedded relations. */
const own = (row: Row, includes: readonly string[]) => {
  const embedded = new Set(includes.map((i) => i.split(".")[0]));
  return Object.fromEntries(Object.entries(row).filter(([k]) => !embedded.has(k)));
};
/** Body of a search for the rows with these ids, with the includes given in the body. */
const byIds = (op: Operation, ids: number[], includes: readonly string[] = includeGroups(op)[0]) => ({
  filters: [{ field: "id", operator: "in", value: ids }],
  includes: includes.map((relation) => ({ relation })),
  limit: 100,
});

describe.each(creatable().map((def) => [def.name, def] as const))("%s", (_name, def: ResourceDef) => {
  const op = (kind: OperationKind) => topOp(def, kind);
  const param = (id: number) => ({ [def.param]: id });
  /** An account of this resource's own: counts and lists see only what these tests made. */
  let api: Client;
  let factory: Factory;
  beforeAll(async () => {
    ({ api, factory } = await account(h));
  });

  test("create → show → update → list → search → delete over REST, with every include, reads back what was written", async () => {
    const create = op("create")!;
    const built = await factory.build(def, { full: true });
    const created = asRead(def, data(await api.post(withIncludes(create), wire(built)), `POST ${create.path}`));
    expectWritten(built, created, "create");
    expectIncluded(def, includeGroups(create)[0], created, "create");
    const id = created.id;
    const embedded = def.includes;

    let current: Row = created;
    const show = op("show");
    if (show) {
      for (const [group, values] of includeGroups(show).entries()) {
        const shown = data(await api.get(withIncludes(show, param(id), group)), `show, includes ${values}`);
        expectWritten(built, shown, "show");
        expectIncluded(def, values, shown, "show");
        expect(own(shown, embedded)).toEqual(own(created, embedded));
        if (group === 0 && includeGroups(create)[0].join() === values.join()) expect(shown).toEqual(created);
        current = shown;
      }
    }

    const update = op("update");
    if (update) {
      const changes = await factory.build(def, { variant: 1, scalarsOnly: true });
      const updated = data(await api.patch(withSample(update, param(id)), asJson(changes)), "update");
      expectWritten(changes, updated, "update");
      expectWritten(
        { ...built, attrs: Object.fromEntries(Object.entries(built.attrs).filter(([k]) => !(k in changes.attrs))) },
        updated,
        "update keeps the rest",
      );
      expectIncluded(def, sampleIncludes(update), updated, "update");
      if (show) {
        current = data(await api.get(withIncludes(show, param(id))), "show after update");
        expectWritten(changes, current, "show after update");
        expect(own(current, embedded)).toEqual(own(updated, embedded));
      } else current = updated;
    }

    const list = op("list");
    if (list) {
      for (const [group, values] of includeGroups(list).entries()) {
        const r = await api.get(withIncludes(list, {}, group) + `${values.length ? "&" : "?"}limit=100`);
        const page = data<Row[]>(r, `list, includes ${values}`);
        expect(r.body.meta.total).toBe(page.length);
        for (const row of page) expectIncluded(def, values, row, "list");
        const listed = page.find((r: Row) => r.id === id);
        expect(listed, "the created row is listed").toBeDefined();
        expect(own(listed!, embedded)).toEqual(own(current, embedded));
      }
    }

    const search = op("search");
    if (search) {
      for (const values of includeGroups(search)) {
        const found = data<Row[]>(
          await api.post(pathOf(search), byIds(search, [id], values)),
          `search, includes ${values}`,
        );
        expect(found.map((r: Row) => r.id)).toEqual([id]);
        expectIncluded(def, values, found[0], "search");
        expect(own(found[0], embedded)).toEqual(own(current, embedded));
      }
    }

    const remove = op("delete");
    if (remove) {
      const deleted = data(await api.delete(withIncludes(remove, param(id))), "delete");
      expect(deleted.id).toBe(id);
      // The row as it was; what embedded rows compute from it (a user's last rank change) may already reflect the delete.
      expect(own(deleted, embedded)).toEqual(own(current, embedded));
      expectIncluded(def, includeGroups(remove)[0], deleted, "delete");
      if (show) expect((await api.get(pathOf(show, param(id)))).status).toBe(404);
      if (search) expect(data(await api.post(pathOf(search), byIds(search, [id])))).toEqual([]);
      expect((await api.delete(pathOf(remove, param(id)))).status).toBe(404);
    }
  });

  test(`batch create, update and delete: up to batchMaxItems (${BATCH_MAX}) items, results in request order; one more is a 422 and nothing is written`, async () => {
    const batchCreate = op("batchCreate");
    const list = op("list")!;
    const show = op("show");
    if (!batchCreate) return;
    const before = await total(api, list);
    const bodies = [
      await factory.build(def, { full: true }),
      ...(await Promise.all(Array.from({ length: BATCH_MAX }, () => factory.build(def)))),
    ];
    rejected(
      await api.post(pathOf(batchCreate), { resources: bodies.map(asJson) }),
      ["resources"],
      "batch create over the cap",
    );
    const made = data<Row[]>(
      await api.post(withSample(batchCreate), { resources: bodies.slice(0, BATCH_MAX).map(asJson) }),
      "batch create",
    );
    expect(made).toHaveLength(BATCH_MAX);
    bodies.slice(0, BATCH_MAX).forEach((b, i) => expectWritten(b, made[i], `batch create item ${i}`));
    for (const row of made) expectIncluded(def, sampleIncludes(batchCreate), row, "batch create");
    const ids: number[] = made.map((r: Row) => r.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(await total(api, list), "the batch over the cap wrote nothing").toBe(before + BATCH_MAX);

    const batchUpdate = op("batchUpdate");
    if (batchUpdate) {
      rejected(
        await api.patch(pathOf(batchUpdate), { resources: [...ids, ids[0] + 1000] }),
        ["resources"],
        "batch update over the cap",
      );
      const changes = await Promise.all(ids.map((_, i) => factory.build(def, { variant: i + 1, scalarsOnly: true })));
      const updated = data<Row[]>(
        await api.patch(withSample(batchUpdate), {
          resources: Object.fromEntries(ids.map((id, i) => [id, asJson(changes[i])])),
        }),
        "batch update",
      );
      expect(updated.map((r: Row) => r.id)).toEqual(ids);
      changes.forEach((c, i) => expectWritten(c, updated[i], `batch update item ${i}`));
      for (const row of updated) expectIncluded(def, sampleIncludes(batchUpdate), row, "batch update");
      if (show)
        expectWritten(
          changes.at(-1)!,
          data(await api.get(pathOf(show, param(ids.at(-1)!)))),
          "show after batch update",
        );
    }

    const batchDelete = op("batchDelete");
    if (batchDelete) {
      rejected(
        await api.delete(pathOf(batchDelete), { resources: [...ids, ids[0] + 1000] }),
        ["resources"],
        "batch delete over the cap",
      );
      // Deleting an id that is gone is a 422, so this succeeding also shows the batch over the cap deleted nothing.
      const deleted = data<Row[]>(
        await api.delete(withSample(batchDelete), { resources: [...ids].reverse() }),
        "batch delete",
      );
      for (const row of deleted) expectIncluded(def, sampleIncludes(batchDelete), row, "batch delete");
      expect(deleted.map((r: Row) => r.id)).toEqual([...ids].reverse());
      expect(await total(api, list)).toBe(before);
    }
  });

  test("batches are all or nothing: one bad item is a 422 naming resources.<index>.<field>, and nothing is written", async () => {
    const batchCreate = op("batchCreate");
    const list = op("list");
    if (!batchCreate || !list) return;
    const before = await total(api, list);
    const good = asJson(await factory.build(def));
    const bad = invalidAttribute(def);
    rejected(
      await api.post(pathOf(batchCreate), {
        resources: [good, { ...asJson(await factory.build(def)), [bad.key]: bad.value }],
      }),
      [`resources.1.${bad.key}`],
      "batch create with a bad second item",
    );
    const required = Object.entries(def.fields).find(([, f]) => f.required && f.writable !== false);
    if (required) {
      const { [snake(required[0])]: _, ...missing } = asJson(await factory.build(def));
      const r = await api.post(pathOf(batchCreate), { resources: [missing, good] });
      expect(r.status).toBe(422);
      expect(r.body.error.errors).toHaveProperty(`resources.0.${snake(required[0])}`);
    }
    expect(await total(api, list)).toBe(before);

    const batchUpdate = op("batchUpdate");
    const show = op("show");
    if (batchUpdate && show) {
      const rows: Row[] = data<Row[]>(
        await api.post(pathOf(batchCreate), { resources: [good, asJson(await factory.build(def))] }),
        "batch create",
      ).map((row: Row) => asRead(def, row));
      const change = await factory.build(def, { variant: 1, scalarsOnly: true });
      rejected(
        await api.patch(pathOf(batchUpdate), {
          resources: { [rows[0].id]: asJson(change), [rows[1].id]: { [bad.key]: bad.value } },
        }),
        [`resources.${rows[1].id}.${bad.key}`],
        "batch update with a bad second item",
      );
      rejected(
        await api.patch(pathOf(batchUpdate), {
          resources: { [rows[0].id]: asJson(change), 2147483000: asJson(change) },
        }),
        ["resources.2147483000"],
      );
      const batchDelete = op("batchDelete");
      if (batchDelete) {
        rejected(
          await api.delete(pathOf(batchDelete), { resources: [rows[0].id, 2147483000] }),
          ["resources.2147483000"],
          "batch delete of an unknown id",
        );
      }
      for (const row of rows)
        expect(data(await api.get(pathOf(show, param(row.id)))), "unchanged after the failed batches").toEqual(row);
    }
  });
});

describe.each(childCollections().map((g) => [g.key, g] as const))("nested %s", (_key, g: NestedGroup) => {
  const op = (kind: OperationKind) => g.ops.get(kind);
  const fixed = fixedColumns(g);
  const parentParam = g.parent.param;
  const at = (parentId: number, id?: number) => ({
    [parentParam]: parentId,
    ...(id === undefined ? {} : { [g.route.param]: id }),
  });
  /** The row belongs to the parent: its foreign key, or its polymorphic owner, names it. */
  const ownedBy = (row: Row, parentId: number) => {
    if (g.relation.kind === "hasMany") expect(row[snake(g.relation.foreignKey)]).toBe(parentId);
    else expect([row.model_type, row.model_id]).toEqual([g.parent.morphClass, parentId]);
  };
  /** An account of this collection's own, with two rows of the parent resource. */
  let api: Client;
  let factory: Factory;
  let parent: Row;
  let other: Row;
  beforeAll(async () => {
    ({ api, factory } = await account(h));
    parent = await factory.any(g.parent);
    other = await factory.any(g.parent);
  });

  test("create → show → update → list → search → delete under the parent, with every include", async () => {
    const create = op("create")!;
    const built = await factory.build(g.def, { full: true, omit: fixed });
    const created = data(await api.post(withIncludes(create, at(parent.id)), wire(built)), `POST ${create.path}`);
    expectWritten(built, created, "nested create");
    expectIncluded(g.def, includeGroups(create)[0], created, "nested create");
    ownedBy(created, parent.id);
    const id = created.id;

    const show = op("show");
    if (show) {
      const shown = data(await api.get(withIncludes(show, at(parent.id, id))), "nested show");
      expectWritten(built, shown, "nested show");
      expectIncluded(g.def, includeGroups(show)[0], shown, "nested show");
      expect((await api.get(pathOf(show, at(other.id, id)))).status, "another parent's row").toBe(404);
    }
    const update = op("update");
    if (update) {
      const changes = await factory.build(g.def, { variant: 1, scalarsOnly: true, omit: fixed });
      const updated = data(await api.patch(withSample(update, at(parent.id, id)), asJson(changes)), "nested update");
      expectWritten(changes, updated, "nested update");
      ownedBy(updated, parent.id);
      expect((await api.patch(pathOf(update, at(other.id, id)), asJson(changes))).status, "another parent's row").toBe(
        404,
      );
    }
    const list = op("list");
    if (list) {
      const rows = data<Row[]>(await api.get(withIncludes(list, at(parent.id))), "nested list");
      expect(rows.map((r: Row) => r.id)).toContain(id);
      for (const row of rows) ownedBy(row, parent.id);
      for (const row of rows) expectIncluded(g.def, includeGroups(list)[0], row, "nested list");
      expect(await allIds(api, list, at(other.id))).not.toContain(id);
    }
    const search = op("search");
    if (search) {
      const found = data<Row[]>(await api.post(pathOf(search, at(parent.id)), byIds(search, [id])), "nested search");
      expect(found.map((r: Row) => r.id)).toEqual([id]);
      expectIncluded(g.def, includeGroups(search)[0], found[0], "nested search");
      expect(
        data(await api.post(pathOf(search, at(other.id)), byIds(search, [id])), "nested search of another parent"),
      ).toEqual([]);
    }
    const remove = op("delete");
    if (remove) {
      expect((await api.delete(pathOf(remove, at(other.id, id)))).status, "another parent's row").toBe(404);
      expect(data(await api.delete(withIncludes(remove, at(parent.id, id))), "nested delete").id).toBe(id);
      if (show) expect((await api.get(pathOf(show, at(parent.id, id)))).status).toBe(404);
    }
  });

  test("batch create, update and delete under the parent: in request order, all or nothing", async () => {
    const batchCreate = op("batchCreate");
    if (!batchCreate) return;
    const bodies = [
      await factory.build(g.def, { omit: fixed }),
      await factory.build(g.def, { omit: fixed, full: true }),
    ];
    const made = data<Row[]>(
      await api.post(withSample(batchCreate, at(parent.id)), { resources: bodies.map(asJson) }),
      "nested batch create",
    );
    for (const row of made) expectIncluded(g.def, sampleIncludes(batchCreate), row, "nested batch create");
    expect(made).toHaveLength(2);
    bodies.forEach((b, i) => expectWritten(b, made[i], `nested batch create item ${i}`));
    for (const row of made) ownedBy(row, parent.id);
    const ids: number[] = made.map((r: Row) => r.id);

    const list = op("list");
    const bad = invalidAttribute(g.def, fixed);
    if (list) {
      const before = await total(api, list, at(parent.id));
      rejected(
        await api.post(pathOf(batchCreate, at(parent.id)), {
          resources: [asJson(bodies[0]), { ...asJson(bodies[0]), [bad.key]: bad.value }],
        }),
        [`resources.1.${bad.key}`],
      );
      rejected(
        await api.post(pathOf(batchCreate, at(parent.id)), {
          resources: Array.from({ length: BATCH_MAX + 1 }, () => asJson(bodies[0])),
        }),
        ["resources"],
      );
      expect(await total(api, list, at(parent.id))).toBe(before);
    }

    const batchUpdate = op("batchUpdate");
    if (batchUpdate) {
      const changes = [
        await factory.build(g.def, { variant: 1, scalarsOnly: true, omit: fixed }),
        await factory.build(g.def, { variant: 2, scalarsOnly: true, omit: fixed }),
      ];
      const updated = data<Row[]>(
        await api.patch(withSample(batchUpdate, at(parent.id)), {
          resources: { [ids[0]]: asJson(changes[0]), [ids[1]]: asJson(changes[1]) },
        }),
        "nested batch update",
      );
      expect(updated.map((r: Row) => r.id)).toEqual(ids);
      changes.forEach((c, i) => expectWritten(c, updated[i], `nested batch update item ${i}`));
      rejected(
        await api.patch(pathOf(batchUpdate, at(other.id)), { resources: { [ids[0]]: asJson(changes[0]) } }),
        [`resources.${ids[0]}`],
        "another parent's rows",
      );
      rejected(
        await api.patch(pathOf(batchUpdate, at(parent.id)), {
          resources: { [ids[0]]: asJson(changes[1]), [ids[1]]: { [bad.key]: bad.value } },
        }),
        [`resources.${ids[1]}.${bad.key}`],
      );
      const show = op("show");
      if (show)
        expectWritten(
          changes[0],
          data(await api.get(pathOf(show, at(parent.id, ids[0])))),
          "unchanged after a failed batch",
        );
    }

    const batchDelete = op("batchDelete");
    if (batchDelete) {
      rejected(
        await api.delete(pathOf(batchDelete, at(other.id)), { resources: ids }),
        ids.map((id) => `resources.${id}`),
        "another parent's rows",
      );
      const deleted = data<Row[]>(
        await api.delete(withSample(batchDelete, at(parent.id)), { resources: [ids[1], ids[0]] }),
        "nested batch delete",
      );
      expect(deleted.map((r: Row) => r.id)).toEqual([ids[1], ids[0]]);
      if (list) expect(await allIds(api, list, at(parent.id))).not.toContain(ids[0]);
    }
  });

  test("associate moves a row to the parent; dissociate releases it, or is refused when the row cannot exist without one", async () => {
    const associate = op("associate");
    const dissociate = op("dissociate");
    const list = op("list")!;
    if (!associate && !dissociate) return;
    const create = op("create")!;
    const row = data(
      await api.post(pathOf(create, at(other.id)), wire(await factory.build(g.def, { omit: fixed }))),
      "create under the other parent",
    );
    if (associate) {
      const moved = data(await api.post(withSample(associate, at(parent.id)), { related_key: row.id }), "associate");
      expectIncluded(g.def, sampleIncludes(associate), moved, "associate");
      expect(moved.id).toBe(row.id);
      ownedBy(moved, parent.id);
      expect(await allIds(api, list, at(parent.id))).toContain(row.id);
      expect(await allIds(api, list, at(other.id))).not.toContain(row.id);
      rejected(await api.post(pathOf(associate, at(parent.id)), { related_key: 2147483000 }), ["related_key"]);
      rejected(await api.post(pathOf(associate, at(parent.id)), {}), ["related_key"]);
    }
    if (dissociate) {
      const owner = associate ? parent : other;
      const required = fixed.some((column) => g.def.fields[column]?.nullable === false);
      const r = await api.delete(withSample(dissociate, at(owner.id, row.id)));
      if (required) {
        rejected(
          r,
          [snake(fixed.find((c) => g.def.fields[c]?.nullable === false)!)],
          "dissociate of a row that needs its parent",
        );
        expect(await allIds(api, list, at(owner.id))).toContain(row.id);
      } else {
        const released = data(r, "dissociate");
        expect(released.id).toBe(row.id);
        for (const column of fixed) expect(released[snake(column)]).toBeNull();
        expect(await allIds(api, list, at(owner.id))).not.toContain(row.id);
      }
      expect((await api.delete(pathOf(dissociate, at(owner.id, 2147483000)))).status).toBe(404);
    }
  });
});
