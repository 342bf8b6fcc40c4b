import type { Context } from "../request/context.ts";
import type { RecordWrites, ResourceDef } from "../resources/define.ts";
import { resourceNamed } from "../resources/index.ts";
import { models } from "../db/datamodel.ts";
import { delegateOf, type Row, type StoredRow } from "../db/models-by-name.ts";
import type { StoreTransaction } from "../db/transaction.ts";
import { recordCreated, recordDeleted, recordUpdated } from "./outbox.ts";
import { forgetRow, rememberedRow, rememberRow } from "../db/transaction-names.ts";

/**
 * Writes to records that record their change in the outbox (src/data/outbox.ts) in the same transaction. Every
 * write a request makes to a record goes through one of these (or createRow/updateRow/deleteRows, built on them), so
 * webhooks, subscriptions and the change feed see it.
 */
/**
 * Inserts a row. `before`: writes asked for just before it and not yet answered; their events come first, and the
 * row's INSERT fails with them (PostgreSQL skips what follows a failed statement in the same write).
 */
export async function createTracked(
  tx: StoreTransaction,
  def: ResourceDef,
  data: Row,
  before?: Promise<unknown>,
): Promise<StoredRow> {
  const inserted = tx.create(def.model, { data });
  if (before) {
    inserted.catch(() => undefined);
    await before;
  }
  const row = await inserted;
  recordCreated(tx, def, row);
  rememberRow(tx, def.model, row);
  return row;
}

const hasEveryColumn = (model: string, row: Row) => models.get(model)!.scalars.every((s) => s.name in row);

/**
 * Updates the row `before.id` (or `id`) with `data`. `before` is the row as it is now, every column; without it the
 * row is read, locked on PostgreSQL, so the change recorded starts from the value this transaction replaces.
 */
export async function updateTracked(
  ctx: Context,
  tx: StoreTransaction,
  def: ResourceDef,
  id: number,
  data: Row,
  known?: Row,
): Promise<StoredRow | null> {
  const remembered = rememberedRow(tx, def.model, id);
  const before =
    known && hasEveryColumn(def.model, known)
      ? known
      : remembered && hasEveryColumn(def.model, remembered)
        ? remembered
        : undefined;
  if (!before) {
    const updated = await tx.updateWithOld(def.model, id, data);
    if (updated) {
      recordUpdated(tx, def, updated.old, updated.row);
      rememberRow(tx, def.model, updated.row);
      return updated.row;
    }
  }
  const current = before ?? (await tx.rowForUpdate(def.model, id));
  if (!current) return null;
  const row = await tx.update(def.model, { where: { id }, data });
  recordUpdated(tx, def, current, row);
  rememberRow(tx, def.model, row);
  return row;
}

/** Deletes the rows `where` selects and records them, as they were, in `order` (ids) or in id order. */
export async function deleteTracked(
  tx: StoreTransaction,
  def: ResourceDef,
  where: Row,
  order?: number[],
): Promise<StoredRow[]> {
  const rows = await tx.findMany(def.model, { where, orderBy: { id: "asc" } });
  if (!rows.length) return rows;
  await delegateOf(tx.prisma, def.model).deleteMany({ where: { id: { in: rows.map((r) => r.id) } } });
  for (const row of rows) forgetRow(tx, def.model, row.id);
  if (order) {
    const position = new Map(order.map((id, i) => [id, i]));
    rows.sort((a, b) => (position.get(a.id) ?? Infinity) - (position.get(b.id) ?? Infinity));
  }
  recordDeleted(tx, def, rows);
  return rows;
}

/** Sets `data` on the rows `where` selects (few: one request's list), recording each row's change. */
export async function updateManyTracked(tx: StoreTransaction, def: ResourceDef, where: Row, data: Row): Promise<void> {
  const rows = await tx.findMany(def.model, { where, orderBy: { id: "asc" } });
  if (!rows.length) return;
  const ids = rows.map((r) => r.id);
  await delegateOf(tx.prisma, def.model).updateMany({ where: { id: { in: ids } }, data });
  const after = new Map((await tx.findMany(def.model, { where: { id: { in: ids } } })).map((r) => [r.id, r]));
  for (const row of rows) {
    recordUpdated(tx, def, row, after.get(row.id)!);
    rememberRow(tx, def.model, after.get(row.id));
  }
}

/**
 * What hooks write through: other records, recorded like the request's own writes. `after`: a write asked for before
 * them and not yet answered; the rows they create fail with it and are recorded after it.
 */
export function recordWrites(ctx: Context, tx: StoreTransaction, after?: Promise<unknown>): RecordWrites {
  return {
    create: (resource, data) => createTracked(tx, resourceNamed(resource), data, after),
    update: (resource, id, data) => updateTracked(ctx, tx, resourceNamed(resource), id, data),
  };
}
