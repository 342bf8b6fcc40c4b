import type { Context } from "../request/context.ts";
import type { PivotDef, ResourceDef } from "../resources/define.ts";
import { linkResourceOf, resourceNamed } from "../resources/index.ts";
import { FieldErrorBag, notFound, validationError } from "../core/errors.ts";
import { withColumns } from "./access.ts";
import type { Row } from "../db/models-by-name.ts";
import type { StoreReads } from "../db/store-reads.ts";
import type { StoreTransaction } from "../db/transaction.ts";
import { validateFields } from "./validate.ts";
import { applyCreateDefaults, deleteRows } from "./write.ts";
import { createTracked, deleteTracked, updateManyTracked, updateTracked } from "./tracked.ts";

/** One item of attach/sync/toggle: a related id and the pivot columns to write with it. */
export interface LinkItem {
  id: number;
  pivot?: Record<string, unknown> | null;
}

export interface PivotChanges {
  attached: number[];
  detached: number[];
  updated: number[];
}

/** Fails with 422 unless every id is a row of `related` in the caller's account; another account's id is as missing. */
export async function requireRelated(
  ctx: Context,
  tx: StoreReads,
  related: ResourceDef,
  ids: number[],
  field = "resources",
): Promise<void> {
  const unique = [...new Set(ids)];
  const found = await tx.findMany(related.model, {
    where: { id: { in: unique }, accountId: ctx.auth!.accountId },
    select: { id: true },
  });
  const known = new Set(found.map((r) => r.id));
  const missing = unique.filter((id) => !known.has(id));
  if (missing.length) {
    throw validationError({
      [field]: missing.map((id) => `The selected ${related.label.toLowerCase()} ${id} is invalid.`),
    });
  }
}

export async function pivotData(
  ctx: Context,
  tx: StoreTransaction,
  pivot: PivotDef,
  values: Record<string, unknown> | null | undefined,
  prefix: string,
) {
  return validateFields(ctx, tx, pivot.fields, values ?? {}, { mode: "update", prefix });
}

/** Links `relatedId` to `parentId`, with pivot defaults (caller, next `order`). */
export async function createLink(
  ctx: Context,
  tx: StoreTransaction,
  pivot: PivotDef,
  parentId: number,
  relatedId: number,
  data: Record<string, unknown>,
) {
  const fixed = { [pivot.parentKey]: parentId, [pivot.relatedKey]: relatedId };
  await applyCreateDefaults(ctx, tx, pivot.model, autoOrdered(pivot), data, fixed, { [pivot.parentKey]: parentId });
  return createTracked(tx, linkResourceOf(pivot), { ...data, ...fixed });
}

const autoOrdered = (pivot: PivotDef) =>
  Object.fromEntries(Object.entries(pivot.fields).map(([k, f]) => [k, k === "order" ? { ...f, autoOrder: true } : f]));

export async function findLink(
  tx: StoreReads,
  pivot: PivotDef,
  parentId: number,
  relatedId: number,
  query: { select?: object } = {},
) {
  const link = await tx.findFirst(pivot.model, {
    ...withKeys(pivot, query),
    where: { [pivot.parentKey]: parentId, [pivot.relatedKey]: relatedId },
    orderBy: pivot.orderBy ?? [{ id: "desc" }],
  });
  if (!link) throw notFound();
  return link;
}

export async function attach(
  ctx: Context,
  tx: StoreTransaction,
  pivot: PivotDef,
  parentId: number,
  items: LinkItem[],
  duplicates: boolean,
): Promise<PivotChanges> {
  await requireRelated(
    ctx,
    tx,
    relatedOf(pivot),
    items.map((i) => i.id),
  );
  const current = await currentIds(tx, pivot, parentId);
  const attached: number[] = [];
  for (const [index, item] of items.entries()) {
    if (!duplicates && !pivot.duplicates && current.has(item.id)) continue;
    if (!duplicates && attached.includes(item.id)) continue;
    await createLink(
      ctx,
      tx,
      pivot,
      parentId,
      item.id,
      await pivotData(ctx, tx, pivot, item.pivot, `resources.${index}.pivot`),
    );
    attached.push(item.id);
  }
  return { attached, detached: [], updated: [] };
}

export async function detach(
  ctx: Context,
  tx: StoreTransaction,
  pivot: PivotDef,
  parentId: number,
  ids: number[],
): Promise<PivotChanges> {
  await requireRelated(ctx, tx, relatedOf(pivot), ids);
  await deleteTracked(tx, linkResourceOf(pivot), { [pivot.parentKey]: parentId, [pivot.relatedKey]: { in: ids } });
  return { attached: [], detached: [...new Set(ids)], updated: [] };
}

export async function sync(
  ctx: Context,
  tx: StoreTransaction,
  pivot: PivotDef,
  parentId: number,
  items: LinkItem[],
  detaching: boolean,
): Promise<PivotChanges> {
  await requireRelated(
    ctx,
    tx,
    relatedOf(pivot),
    items.map((i) => i.id),
  );
  const rows = await tx.findMany(pivot.model, { where: { [pivot.parentKey]: parentId } });
  const byRelated = new Map(rows.map((r) => [r[pivot.relatedKey] as number, r]));
  const wanted = new Set(items.map((i) => i.id));
  const changes: PivotChanges = { attached: [], detached: [], updated: [] };
  for (const [index, item] of items.entries()) {
    const data = await pivotData(ctx, tx, pivot, item.pivot, `resources.${index}.pivot`);
    const existing = byRelated.get(item.id);
    if (!existing) {
      if (changes.attached.includes(item.id)) continue;
      await createLink(ctx, tx, pivot, parentId, item.id, data);
      changes.attached.push(item.id);
    } else if (Object.entries(data).some(([k, v]) => String(existing[k]) !== String(v))) {
      await updateTracked(ctx, tx, linkResourceOf(pivot), existing.id, data, existing);
      changes.updated.push(item.id);
    }
  }
  if (detaching) {
    const gone = [...byRelated.keys()].filter((id) => !wanted.has(id));
    if (gone.length)
      await deleteTracked(tx, linkResourceOf(pivot), { [pivot.parentKey]: parentId, [pivot.relatedKey]: { in: gone } });
    changes.detached = gone;
  }
  return changes;
}

export async function toggle(
  ctx: Context,
  tx: StoreTransaction,
  pivot: PivotDef,
  parentId: number,
  items: LinkItem[],
): Promise<PivotChanges> {
  await requireRelated(
    ctx,
    tx,
    relatedOf(pivot),
    items.map((i) => i.id),
  );
  const current = await currentIds(tx, pivot, parentId);
  const changes: PivotChanges = { attached: [], detached: [], updated: [] };
  for (const [index, item] of items.entries()) {
    if (current.has(item.id)) {
      if (changes.detached.includes(item.id)) continue;
      await deleteTracked(tx, linkResourceOf(pivot), { [pivot.parentKey]: parentId, [pivot.relatedKey]: item.id });
      changes.detached.push(item.id);
    } else if (!changes.attached.includes(item.id)) {
      await createLink(
        ctx,
        tx,
        pivot,
        parentId,
        item.id,
        await pivotData(ctx, tx, pivot, item.pivot, `resources.${index}.pivot`),
      );
      changes.attached.push(item.id);
    }
  }
  return changes;
}

export async function updatePivot(
  ctx: Context,
  tx: StoreTransaction,
  pivot: PivotDef,
  parentId: number,
  relatedId: number,
  values: Record<string, unknown>,
) {
  const link = await findLink(tx, pivot, parentId, relatedId);
  const data = await pivotData(ctx, tx, pivot, values, "pivot");
  if (Object.keys(data).length) await updateTracked(ctx, tx, linkResourceOf(pivot), link.id, data, link);
  return { attached: [], detached: [], updated: [relatedId] } satisfies PivotChanges;
}

/** Links of `parentId` to each of `ids`; every id must be linked, else 422 and nothing changes. */
/** The link keys read here and by `removeLinked`, whatever a client's selection names. */
const withKeys = (pivot: PivotDef, query: { select?: object }) =>
  withColumns(query, { id: true, [pivot.parentKey]: true, [pivot.relatedKey]: true });

export async function requireLinks(
  tx: StoreTransaction,
  pivot: PivotDef,
  parentId: number,
  ids: number[],
  query: { select?: object } = {},
) {
  const selected = withKeys(pivot, query);
  const rows = await tx.findMany(pivot.model, {
    ...selected,
    where: { [pivot.parentKey]: parentId, [pivot.relatedKey]: { in: ids } },
    orderBy: pivot.orderBy ?? [{ id: "asc" }],
  });
  const linked = new Set(rows.map((r) => r[pivot.relatedKey] as number));
  const bag = new FieldErrorBag();
  for (const id of new Set(ids))
    if (!linked.has(id)) bag.add(`resources.${id}`, `The resource ${id} is not related to this record.`);
  bag.throwIfAny();
  return rows;
}

/** Removes links (history rows) or, as PERSCOM does for shared definitions, the related rows themselves. */
export async function removeLinked(ctx: Context, tx: StoreTransaction, pivot: PivotDef, parentId: number, rows: Row[]) {
  if (pivot.duplicates) {
    await deleteTracked(tx, linkResourceOf(pivot), { id: { in: rows.map((r) => r.id) }, [pivot.parentKey]: parentId });
  } else {
    await deleteRows(ctx, tx, relatedOf(pivot), [...new Set(rows.map((r) => r[pivot.relatedKey] as number))]);
  }
}

/** The related resource: a link's relation to it is named after it. */
export const relatedOf = (pivot: PivotDef) => resourceNamed(pivot.related);

async function currentIds(tx: StoreTransaction, pivot: PivotDef, parentId: number): Promise<Set<number>> {
  const rows = await tx.findMany(pivot.model, {
    where: { [pivot.parentKey]: parentId },
    select: { [pivot.relatedKey]: true },
  });
  return new Set(rows.map((r) => r[pivot.relatedKey] as number));
}

/**
 * Link operations on a morph-many relation (`/users/{user}/attachments/attach`): there is no link
 * table, so attaching makes the parent the child's owner and detaching clears the owner.
 */
export async function morphLinkChanges(
  ctx: Context,
  tx: StoreTransaction,
  child: ResourceDef,
  owner: { type: string; id: number },
  kind: "attach" | "detach" | "sync" | "toggle",
  ids: number[],
  detaching = true,
): Promise<PivotChanges> {
  await requireRelated(ctx, tx, child, ids);
  const own = { accountId: ctx.auth!.accountId, modelType: owner.type, modelId: owner.id };
  const current = new Set<number>(
    (await tx.findMany(child.model, { where: own, select: { id: true } })).map((r) => r.id),
  );
  const wanted = [...new Set(ids)];
  const take = (list: number[]) =>
    list.length &&
    updateManyTracked(
      tx,
      child,
      { id: { in: list }, accountId: ctx.auth!.accountId },
      { modelType: owner.type, modelId: owner.id },
    );
  const release = (list: number[]) =>
    list.length && updateManyTracked(tx, child, { ...own, id: { in: list } }, { modelType: null, modelId: null });
  const changes: PivotChanges = { attached: [], detached: [], updated: [] };
  switch (kind) {
    case "attach":
    case "sync":
      changes.attached = wanted.filter((id) => !current.has(id));
      if (kind === "sync" && detaching) changes.detached = [...current].filter((id) => !wanted.includes(id));
      break;
    case "detach":
      await release(wanted);
      return { ...changes, detached: wanted };
    case "toggle":
      changes.attached = wanted.filter((id) => !current.has(id));
      changes.detached = wanted.filter((id) => current.has(id));
      break;
  }
  await take(changes.attached);
  await release(changes.detached);
  return changes;
}
