import { expect } from "vitest";
import type { ResourceDef } from "../../src/resources/define.ts";
import type { Operation } from "../../src/resources/operations.ts";
import { snake } from "../../src/core/names.ts";
import type { Client, Reply } from "../harness.ts";
import { expected, shown, storedFiles, type Built, type Row } from "./factory.ts";
import { pathOf } from "./registry.ts";

/** Status and body of a reply, so a failed expectation shows what the server said. */
export const said = (r: Reply) => ({ status: r.status, body: r.body });

/** A 200 and its `data`. */
export function data<T = Row>(r: Reply, what = ""): T {
  expect(r.status, `${what} ${JSON.stringify(r.body)}`).toBe(200);
  return r.body.data;
}

/** A 422 whose `errors` name exactly `keys` (in any order). */
export function rejected(r: Reply, keys: string[], what = ""): void {
  expect(r.status, `${what} ${JSON.stringify(r.body)}`).toBe(422);
  expect(r.body.error.type).toBe("ValidationException");
  expect(Object.keys(r.body.error.errors ?? {}).sort(), what).toEqual([...keys].sort());
}

/** The row shows what `built` wrote, and a stored file for each upload sent. */
export function expectWritten(built: Built, row: Row, what = ""): void {
  expect(shown(built, row), what).toEqual(expected(built));
  for (const [key, file] of Object.entries(storedFiles(built, row))) {
    expect(file, `${what} upload ${key}`).toMatchObject({ stored: true });
    if ((file as { filename?: string }).filename !== undefined)
      expect((file as { filename: string }).filename).toBe(`${key}.png`);
  }
}

/**
 * Every requested include is embedded: a to-one relation as the row its foreign key names (or null),
 * a to-many relation as a list, a polymorphic owner as the row `model_id` names.
 */
export function expectIncluded(def: ResourceDef, includes: readonly string[], row: Row, what = ""): void {
  for (const value of includes) {
    const top = value.split(".")[0];
    expect(row, `${what} include=${value}`).toHaveProperty(top);
    const rel = def.relations[top];
    if (!rel) continue;
    if (rel.kind === "belongsTo") {
      const fk = row[snake(rel.foreignKey)];
      if (fk !== undefined)
        expect((row[top] as Row | null | undefined)?.id ?? null, `${what} include=${value}`).toBe(fk);
    } else if (rel.kind === "morphTo") {
      if ("model_id" in row)
        expect((row[top] as Row | null | undefined)?.id ?? null, `${what} include=${value}`).toBe(row.model_id);
    } else if (rel.kind === "morphOne") {
      expect(row[top] === null || typeof row[top] === "object", `${what} include=${value}`).toBe(true);
    } else {
      expect(Array.isArray(row[top]), `${what} include=${value}`).toBe(true);
    }
  }
}

/** Ids of every row of a paginated GET, walking all pages. */
export async function allIds(api: Client, op: Operation, params: Record<string, number> = {}): Promise<number[]> {
  const ids: number[] = [];
  for (let page = 1; ; page++) {
    const r = await api.get(pathOf(op, params, `limit=100&page=${page}`));
    const body = data<Row[]>(r, op.field);
    ids.push(...body.map((row: Row) => row.id));
    if (page >= r.body.meta.last_page) return ids;
  }
}

/** `meta.total` of a list. */
export async function total(api: Client, op: Operation, params: Record<string, number> = {}): Promise<number> {
  const r = await api.get(pathOf(op, params, "limit=1"));
  data(r, op.field);
  return r.body.meta.total;
}
