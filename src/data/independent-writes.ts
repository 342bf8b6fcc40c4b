import type { ResourceDef } from "../resources/define.ts";
import { resourceNamed } from "../resources/index.ts";
import { isOneToOne, type Operation } from "../resources/operations.ts";
import { models } from "../db/datamodel.ts";

/**
 * Whether a single-row create or update of `op` may run beside other write transactions on PostgreSQL instead of
 * waiting for the write lock (src/db/locks.ts). It may when nothing it checks could be changed by another write
 * before it commits:
 * - every referenced id is also a foreign key, so the database refuses a reference another write removed;
 * - no `unique` column (checked by counting) and no computed `order` (the last one plus one);
 * - no polymorphic owner (checked by counting, with no foreign key behind it);
 * - no stored files (replacing one removes the file the row had when it was read);
 * - no link rows, no one-to-one child (checked by counting), no polymorphic child of a parent in the path;
 * - hooks only when they say they are `independent`.
 * Everything else keeps the lock, so any check-then-write sequence still runs alone.
 */
export function writesIndependently(op: Operation): boolean {
  let verdict = verdicts.get(op);
  if (verdict === undefined) verdicts.set(op, (verdict = decide(op)));
  return verdict;
}

const verdicts = new Map<Operation, boolean>();

function decide(op: Operation): boolean {
  if (op.kind !== "create" && op.kind !== "update") return false;
  const parent = op.parent;
  if (parent) {
    // A child reached through a foreign key to its parent; polymorphic children and link rows have none.
    const rel = parent.relation;
    if (rel.kind !== "hasMany" || isOneToOne(op) || !hasForeignKey(op.def.model, rel.foreignKey, parent.def.model))
      return false;
  }
  return independent(op.def);
}

function independent(def: ResourceDef): boolean {
  if (def.link || def.uploads || def.spread) return false;
  if (def.hooks && !def.hooks.independent) return false;
  if (Object.values(def.relations).some((r) => r.kind === "morphTo")) return false;
  if (!models.has(def.model)) return false;
  for (const [name, field] of Object.entries(def.fields)) {
    if (field.unique || field.autoOrder) return false;
    if (field.references && !hasForeignKey(def.model, name, resourceNamed(field.references).model)) return false;
  }
  return true;
}

/** Whether `model.column` is a foreign key to `target.id`. */
export function hasForeignKey(model: string, column: string, target: string): boolean {
  return [...(models.get(model)?.relations.values() ?? [])].some(
    (r) => !r.list && r.from === column && r.to === "id" && r.target === target,
  );
}
