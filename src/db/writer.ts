import { models, type Model, type Scalar } from "./datamodel.ts";
import { decode, quote, Statement } from "./dialect.ts";
import type { ReadDriver, ReadOptions } from "./driver.ts";
import { isPlainObject, plannedOrNull, unsupported, type Args } from "./translation.ts";

/**
 * Single-row writes inside a transaction without Prisma's per-statement cost: `create({ data })` and
 * `update({ where: { id }, data })` with column values only, as INSERT/UPDATE ... RETURNING. Defaults are Prisma's:
 * `now()` and `@updatedAt` columns get the time of the write, other `@default`s the database's. Anything else
 * (relation writes, atomic operators, a value Prisma would refuse) is left to Prisma. A write the database refuses is
 * answered with Prisma's error: on SQLite, which undoes just the refused statement, Prisma runs it again; on PostgreSQL,
 * where the refusal aborts the transaction, the driver turns the database's error into Prisma's (`refused`).
 */
/** The answer of a write whose statement failed or matched no row: the caller asks Prisma instead. */
export const FAILED = Symbol("failed");

/**
 * The id of a row whose INSERT was asked for earlier in the same transaction and has not answered yet, as the value of
 * a column another write stores, written as the sequence's `currval` (the id the session's last INSERT into that table
 * took), so the write need not wait for the INSERT's answer and can go out in the same round trip. PostgreSQL's direct
 * transactions only (`StoreTransaction.pipelines`): a write this writer does not translate falls back to Prisma there,
 * which runs the whole transaction again without pipelining, so no InsertedId reaches Prisma.
 */
export class InsertedId {
  constructor(readonly model: string) {}
}

export class SqlWriter {
  constructor(
    readonly driver: ReadDriver,
    readonly options: ReadOptions = {},
  ) {}

  plan(model: string, method: string, args: Args = {}): (() => Promise<Args | typeof FAILED>) | null {
    return plannedOrNull(() => {
      const m = models.get(model) ?? unsupported(model);
      if (!isPlainObject(args) || !isPlainObject(args.data)) unsupported("data");
      for (const [k, v] of Object.entries(args)) if (v !== undefined && k !== "data" && k !== "where") unsupported(k);
      if (method === "create" && args.where === undefined) return this.#create(m, args.data);
      if (method === "update") return this.#update(m, args.where, args.data);
      return null;
    });
  }

  /**
   * `update({ where: { id }, data })` that also answers the row as it was. On PostgreSQL one statement: the old row is
   * read locked (`FOR UPDATE`, so no other transaction changes it between the two) in the UPDATE's own FROM; on SQLite,
   * one write transaction at a time, a SELECT then the UPDATE. Null when `data` is not one this writer translates.
   */
  planUpdateWithOld(
    model: string,
    id: number,
    data: Args,
  ): (() => Promise<{ old: Args; row: Args } | typeof FAILED>) | null {
    return plannedOrNull(() => {
      const m = models.get(model) ?? unsupported(model);
      if (!isPlainObject(data) || !Object.values(data).some((v) => v !== undefined)) unsupported("data");
      const sql = new Statement(this.driver.dialect);
      const values = this.#values(sql, m, data, false);
      const set = values.map(([f, v]) => `${quote(f.name)} = ${v}`).join(", ");
      const columns = (alias: string) => m.scalars.map((s) => `${alias}.${quote(s.name)}`).join(", ");
      const decodeRow = (row: unknown[], offset: number) =>
        Object.fromEntries(m.scalars.map((s, i) => [s.name, decode(sql.dialect, s, row[offset + i])]));
      const width = m.scalars.length;
      if (sql.dialect === "postgresql") {
        // The old row differs from the new one only in the columns SET names (no trigger or generated column writes
        // others): only those are read back from "o".
        const changed = values.map(([f]) => f);
        const text = `UPDATE ${quote(m.name)} AS "n" SET ${set} FROM (SELECT * FROM ${quote(m.name)} WHERE "id" = ${sql.param(id)} FOR UPDATE) AS "o" WHERE "n"."id" = "o"."id" RETURNING ${columns('"n"')}, ${changed.map((f) => `"o".${quote(f.name)}`).join(", ")}`;
        return async () => {
          const rows = await this.#all(sql, text);
          if (rows === FAILED || !rows[0]) return FAILED;
          const row = decodeRow(rows[0], 0);
          const old = { ...row };
          changed.forEach((f, i) => (old[f.name] = decode(sql.dialect, f, rows[0][width + i])));
          return { old, row };
        };
      }
      const read = new Statement(this.driver.dialect);
      const select = `SELECT ${this.#returning(m)} FROM ${quote(m.name)} WHERE "id" = ${read.param(id)}`;
      const text = `UPDATE ${quote(m.name)} SET ${set} WHERE "id" = ${sql.param(id)} RETURNING ${this.#returning(m)}`;
      return async () => {
        const before = await this.#all(read, select);
        if (before === FAILED || !before[0]) return FAILED;
        const after = await this.#all(sql, text);
        return after === FAILED || !after[0] ? FAILED : { old: decodeRow(before[0], 0), row: decodeRow(after[0], 0) };
      };
    });
  }

  /** The column values of `data`, and the time columns Prisma fills. */
  #values(sql: Statement, model: Model, data: Args, creating: boolean): Array<[Scalar, string]> {
    const now = new Date();
    const set: Array<[Scalar, string]> = [];
    for (const [key, value] of Object.entries(data)) {
      if (value === undefined) continue;
      const field = model.scalarByName.get(key) ?? unsupported(`write ${model.name}.${key}`);
      if (value instanceof InsertedId) {
        if (sql.dialect !== "postgresql" || field.type !== "Int") unsupported(`${key}: an inserted id`);
        set.push([field, `currval(pg_get_serial_sequence('${quote(value.model)}', 'id'))`]);
        continue;
      }
      set.push([
        field,
        value === null
          ? field.required
            ? unsupported(`${key}: null`)
            : "NULL"
          : sql.param(this.#encode(sql, field, value)),
      ]);
    }
    for (const field of model.scalars) {
      if (data[field.name] !== undefined) continue;
      if (field.generated === "updatedAt" || (creating && field.generated === "now"))
        set.push([field, sql.param(sql.value(field, now))]);
      else if (creating && field.required && !field.generated) unsupported(`${field.name} missing`);
    }
    return set;
  }

  #encode(sql: Statement, field: Scalar, value: unknown): unknown {
    if (field.type !== "Json") return sql.value(field, value);
    // Plain JSON only: Prisma's null markers (DbNull, JsonNull) are class instances and stay with Prisma.
    const plain =
      Array.isArray(value) ||
      ["string", "number", "boolean"].includes(typeof value) ||
      (isPlainObject(value) && Object.getPrototypeOf(value) === Object.prototype);
    if (!plain) unsupported("Json value");
    return JSON.stringify(value);
  }

  #returning(model: Model) {
    return model.scalars.map((s) => quote(s.name)).join(", ");
  }

  #create(model: Model, data: Args) {
    const sql = new Statement(this.driver.dialect);
    const values = this.#values(sql, model, data, true);
    const text = `INSERT INTO ${quote(model.name)} (${values.map(([f]) => quote(f.name)).join(", ")}) VALUES (${values.map(([, v]) => v).join(", ")}) RETURNING ${this.#returning(model)}`;
    return () => this.#run(model, sql, text);
  }

  #update(model: Model, where: unknown, data: Args) {
    if (!isPlainObject(where) || Object.keys(where).length !== 1 || !Number.isInteger(where.id))
      unsupported("update where");
    if (!Object.values(data).some((v) => v !== undefined)) unsupported("empty update");
    const sql = new Statement(this.driver.dialect);
    const values = this.#values(sql, model, data, false);
    const text = `UPDATE ${quote(model.name)} SET ${values.map(([f, v]) => `${quote(f.name)} = ${v}`).join(", ")} WHERE "id" = ${sql.param(where.id)} RETURNING ${this.#returning(model)}`;
    return () => this.#run(model, sql, text);
  }

  /** The statement's rows, or FAILED when the database refused it. */
  async #all(sql: Statement, text: string): Promise<unknown[][] | typeof FAILED> {
    this.options.onStatement?.(text);
    try {
      return await this.driver.all(text, sql.params);
    } catch (error) {
      if (this.driver.refused) throw this.driver.refused(error);
      return FAILED;
    }
  }

  /** The written row, or FAILED. */
  async #run(model: Model, sql: Statement, text: string): Promise<Args | typeof FAILED> {
    const rows = await this.#all(sql, text);
    if (rows === FAILED) return FAILED;
    const row = rows[0];
    return row ? Object.fromEntries(model.scalars.map((s, i) => [s.name, decode(sql.dialect, s, row[i])])) : FAILED;
  }
}
