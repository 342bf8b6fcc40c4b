import { readdirSync } from "node:fs";
import path from "node:path";
import type { Database } from "../../src/db/prisma.ts";

/** Columns that change on any authenticated request by design (API key bookkeeping), left out of snapshots. */
const VOLATILE: Record<string, string[]> = { ApiKey: ["lastUsedAt", "updatedAt"] };

/**
 * Reads every table of an SQLite database in one statement: each row of each table (from
 * sqlite_master, ordered by id, or by rowid where a table has no id column) rendered with SQLite's
 * own `quote()`, so two snapshots are equal exactly when the stored bytes are. On PostgreSQL the same from
 * information_schema, each row as its row value's text.
 */
export class DatabaseSnapshots {
  private query?: string;

  constructor(private readonly db: Database) {}

  private async build(): Promise<string> {
    if (this.db.provider === "postgresql") return this.buildPostgres();
    const tables = await this.db.prisma.$queryRawUnsafe<Array<{ name: string }>>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '_prisma_migrations' ORDER BY name",
    );
    const parts: string[] = [];
    for (const { name } of tables) {
      const columns = await this.db.prisma.$queryRawUnsafe<Array<{ name: string }>>(`PRAGMA table_info("${name}")`);
      const kept = columns.map((c) => c.name).filter((c) => !(VOLATILE[name] ?? []).includes(c));
      const row = kept.map((c) => `quote("${c}")`).join(` || ',' || `);
      const order = columns.some((c) => c.name === "id") ? `"id"` : "rowid";
      parts.push(
        `SELECT '${name}' AS t, (SELECT group_concat(r, char(10)) FROM (SELECT ${row} AS r FROM "${name}" ORDER BY ${order})) AS rows`,
      );
    }
    return parts.join(" UNION ALL ");
  }

  /** PostgreSQL: each row as its row value's text (`("1","x",)`), ordered by id (or by the first column). */
  private async buildPostgres(): Promise<string> {
    const columns = await this.db.prisma.$queryRawUnsafe<Array<{ table_name: string; column_name: string }>>(
      `SELECT c.table_name::text AS table_name, c.column_name::text AS column_name FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
       WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' AND c.table_name <> '_prisma_migrations'
       ORDER BY c.table_name, c.ordinal_position`,
    );
    const byTable = new Map<string, string[]>();
    for (const c of columns) byTable.set(c.table_name, [...(byTable.get(c.table_name) ?? []), c.column_name]);
    return [...byTable]
      .map(([name, all]) => {
        const kept = all.filter((c) => !(VOLATILE[name] ?? []).includes(c));
        const order = all.includes("id") ? "id" : all[0];
        return `SELECT '${name}' AS t, (SELECT string_agg(ROW(${kept.map((c) => `"${c}"`).join(", ")})::text, chr(10) ORDER BY "${order}") FROM "${name}") AS rows`;
      })
      .join(" UNION ALL ");
  }

  /**
   * SQLite's count of rows inserted, updated or deleted on the connection since it opened: when it has
   * not moved, nothing was written (a cheap test before a full snapshot; the connection is the
   * client's only one).
   */
  async changes(): Promise<number> {
    if (this.db.provider === "postgresql") {
      // PostgreSQL: the next transaction id, which only a writing transaction moves (any database's on the server,
      // so it may move without a change here: that costs a full snapshot, never a missed change).
      const [next] = await this.db.prisma.$queryRawUnsafe<Array<{ n: string }>>(
        "SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS n",
      );
      return Number(next.n);
    }
    const [row] = await this.db.prisma.$queryRawUnsafe<Array<{ n: number | bigint }>>("SELECT total_changes() AS n");
    return Number(row.n);
  }

  /**
   * Every table's rows, by table name: read through the app's own reader (`db.read`, committed data),
   * which keeps the statement prepared, so PostgreSQL plans its union of every table once, not on each
   * snapshot (most of a snapshot's time there).
   */
  async take(): Promise<Map<string, string>> {
    this.query ??= await this.build();
    const rows = (await this.db.read(this.query, [])) as Array<[string, string | null]>;
    return new Map(rows.map(([table, text]) => [table, text ?? ""]));
  }
}

/** The tables whose rows differ between two snapshots, each with its first differing row on both sides. */
export function snapshotDiff(before: Map<string, string>, after: Map<string, string>): string[] {
  const out: string[] = [];
  for (const table of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(table) ?? "";
    const b = after.get(table) ?? "";
    if (a === b) continue;
    const la = a.split("\n");
    const lb = b.split("\n");
    const at = la.findIndex((line, i) => line !== lb[i]);
    const i = at === -1 ? la.length : at;
    out.push(
      `${table}: ${la.length} → ${lb.length} rows; first difference at row ${i}: ${JSON.stringify(la[i] ?? null)} → ${JSON.stringify(lb[i] ?? null)}`,
    );
  }
  return out;
}

/** Every file under `dir` (relative paths, sorted); none when it does not exist. */
export function listFiles(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) =>
        path.relative(
          dir,
          path.join((e as { parentPath?: string }).parentPath ?? (e as { path?: string }).path ?? dir, e.name),
        ),
      )
      .sort();
  } catch {
    return [];
  }
}
