import type { ResourceDef } from "../resources/define.ts";
import type { Operation } from "../resources/operations.ts";
import { answers } from "./kinds.ts";

type Row = Record<string, unknown>;

const withColors = (status: unknown) => {
  if (status && typeof status === "object" && "color" in status)
    Object.assign(status, { text_color: status.color, bg_color: status.color });
};

/** Relations of `def` that hold statuses, by REST name. */
const statusRelations = (def: ResourceDef) =>
  Object.entries(def.relations)
    .filter(([, r]) => r.kind !== "morphTo" && r.target === "status")
    .map(([k]) => k);

/**
 * v1 differs from v2 in one way clients see: single-record responses show every status object with
 * `text_color` and `bg_color` (both the status colour), on the status itself and on what embeds it.
 */
export function applyV1(op: Operation, body: Record<string, unknown>): void {
  if (!answers[op.returns].single || !body.data) return;
  const row = body.data as Row;
  if (op.def.name === "status") withColors(row);
  for (const key of statusRelations(op.def)) {
    const value = row[key];
    if (Array.isArray(value)) value.forEach(withColors);
    else withColors(value);
  }
}
