import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Prisma } from "../../src/db/prisma.ts";
import type { Store } from "../../src/db/store.ts";

/** One Prisma model as far as ownership goes: its account column, and the foreign keys to other models. */
interface ModelShape {
  name: string;
  /** Its primary key column (`id`, or the user's for a row that is a part of a user). */
  key: string;
  owned: boolean;
  foreignKeys: Array<{ column: string; target: string }>;
}

/**
 * Models that are not account data (accounts, keys, process flags, the OpenID provider's own records and signing
 * keys, which its adapter reads by their keys and which the provider's tests check).
 */
const NOT_DATA = new Set(["Account", "ApiKey", "SystemFlag", "OidcRecord", "SigningKey"]);

/** The models of prisma/schema.prisma: read from the schema text, so a new model is covered without a change here. */
export function modelShapes(
  schemaFile = fileURLToPath(new URL("../../prisma/schema.prisma", import.meta.url)),
): ModelShape[] {
  const text = readFileSync(schemaFile, "utf8");
  const shapes: ModelShape[] = [];
  for (const [, name, body] of text.matchAll(/^model\s+(\w+)\s*\{([\s\S]*?)^\}/gm)) {
    if (NOT_DATA.has(name)) continue;
    const foreignKeys: ModelShape["foreignKeys"] = [];
    for (const [, target, columns] of body.matchAll(/^\s*\w+\s+(\w+)\??\s+@relation\([^)]*fields:\s*\[([^\]]+)\]/gm)) {
      const cols = columns.split(",").map((c) => c.trim());
      if (cols.length === 1) foreignKeys.push({ column: cols[0], target: target });
    }
    const key = /^\s*(\w+)\s+\w+[^\n]*@id\b/m.exec(body)?.[1] ?? "id";
    shapes.push({ name: name, key, owned: /^\s*accountId\s+Int\b/m.test(body), foreignKeys });
  }
  return shapes;
}

/**
 * Every row of one account, table by table: rows with its `accountId`, and rows of tables without one
 * (link rows) that point at one of its rows. Rows are sorted by id and JSON-normalised, for `toEqual`.
 */
export async function accountRows(
  store: Pick<Store, "findMany">,
  accountId: number,
): Promise<Record<string, unknown[]>> {
  const shapes = modelShapes();
  const out: Record<string, unknown[]> = {};
  const ids = new Map<string, Set<number>>();
  for (const shape of shapes.filter((s) => s.owned)) {
    const rows = await store.findMany(shape.name, { where: { accountId }, orderBy: { [shape.key]: "asc" } });
    out[shape.name] = JSON.parse(JSON.stringify(rows));
    ids.set(shape.name, new Set(rows.map((r) => r.id)));
  }
  for (const shape of shapes.filter((s) => !s.owned)) {
    const keys = shape.foreignKeys.filter((k) => ids.has(k.target));
    if (!keys.length)
      throw new Error(
        `${shape.name} has neither accountId nor a foreign key to an account's table: say how it is owned`,
      );
    const rows = await store.findMany(shape.name, {
      where: { OR: keys.map((k) => ({ [k.column]: { in: [...ids.get(k.target)!] } })) },
      orderBy: { [shape.key]: "asc" },
    });
    out[shape.name] = JSON.parse(JSON.stringify(rows));
  }
  return out;
}

/** Account id of an account name. */
export async function accountIdOf(prisma: Prisma, name: string): Promise<number> {
  return (await prisma.account.findUniqueOrThrow({ where: { name } })).id;
}
