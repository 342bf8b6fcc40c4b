import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { getNamedType, isEnumType, isObjectType, type GraphQLField, type GraphQLInputObjectType } from "graphql";
import {
  relationField,
  type FieldDef,
  type FieldType,
  type PivotDef,
  type ResourceDef,
} from "../src/resources/define.ts";
import { operations, pivotOf, type Operation } from "../src/resources/operations.ts";
import { resourceNamed } from "../src/resources/index.ts";
import { getSchema } from "../src/server/app.ts";
import { camel, pascal, snake } from "../src/core/names.ts";
import { startHarness, type Client, type Harness } from "./harness.ts";
import { account, asJson, fresh, scalarValue, type Attrs, type Factory, type Row } from "./support/factory.ts";
import { fixedColumns, pathOf, topOp } from "./support/registry.ts";
import { data, rejected } from "./support/checks.ts";
import {
  ordered,
  selects,
  typedFilters,
  typedSort,
  type Filter,
  type OrionFilter,
  type TypedColumn,
  type TypedWhere,
} from "./support/oracle.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.close());

const sortedIds = (rows: Row[]) => rows.map((r) => r.id).sort((a, b) => a - b);
const BAD_ID = 2147483000;

/** A column a filter or sort may name on a list, how to read it off a listed row, and its type. */
interface Column {
  name: string;
  type: FieldType;
  read(row: Row): unknown;
}

/** Everything one search route needs: its list, create and parent, the rows made for it, and what it exposes. */
interface Setup {
  api: Client;
  /** The resource the route lists (the related one on link routes). */
  def: ResourceDef;
  factory: Factory;
  accountId: number;
  params: Record<string, number>;
  /** Rows made for the test (two with every column filled, one with only the required ones), in creation order. */
  mine: Row[];
  /** Every row the list shows, read through the REST list. */
  all: Row[];
  columns: Column[];
  /** `includes` entries that make link columns visible on the rows, when they are not always shown. */
  bodyIncludes: Array<{ relation: string }>;
}

const searches = operations.filter((o) => o.kind === "search");
const kindOf = (op: Operation) => (!op.parent ? "top" : pivotOf(op) ? "link" : "child");
/** The operation of `kind` on the same collection as a search route (`/users/{user}/tasks` for `/users/{user}/tasks/search`). */
const sibling = (op: Operation, kind: Operation["kind"]) =>
  operations.find(
    (o) =>
      o.kind === kind &&
      o.def === op.def &&
      o.path === op.path.replace(/\/search$/, "") &&
      !o.view &&
      o.parent?.route === op.parent?.route,
  );

/** Rows of a related resource by id, read through its own list, for `rel.<column>` filters and sorts. */
type Related = Map<string, Map<number, Row>>;

function columnsOf(
  def: ResourceDef,
  pivot: PivotDef | undefined,
  accessor: string | undefined,
  related: Related,
): Column[] {
  const plain = (name: string, type: FieldType): Column => ({ name, type, read: (row) => row[name] });
  const own: Column[] = [plain("id", "int"), plain("created_at", "datetime"), plain("updated_at", "datetime")];
  for (const [name, f] of Object.entries(def.fields))
    if (!f.hidden && f.type !== "json") own.push(plain(snake(name), f.type));
  for (const [key, rel] of Object.entries(def.relations)) {
    if (rel.kind !== "belongsTo" || def.fields[rel.foreignKey]?.hidden) continue;
    own.push({ name: `${key}.id`, type: "int", read: (row) => row[snake(rel.foreignKey)] });
    const rows = related.get(rel.target);
    const text = Object.entries(resourceNamed(rel.target).fields).find(
      ([, f]) => f.type === "string" && !f.hidden,
    )?.[0];
    if (rows && text)
      own.push({
        name: `${key}.${snake(text)}`,
        type: "string",
        read: (row) => rows.get(row[snake(rel.foreignKey)] as number)?.[snake(text)] ?? null,
      });
  }
  if (pivot && accessor) {
    const fields: Record<string, FieldDef> = { id: { type: "int" }, created_at: { type: "datetime" }, ...pivot.fields };
    for (const [name, f] of Object.entries(fields)) {
      if (f.type === "json") continue;
      own.push({
        name: `pivot.${snake(name)}`,
        type: f.type,
        read: (row) => (row[accessor] as Record<string, unknown> | undefined)?.[snake(name)],
      });
    }
  }
  return own;
}

async function setUp(op: Operation): Promise<Setup> {
  const { api, factory, name } = await account(h);
  const accountId = (await h.db.prisma.account.findUnique({ where: { name } }))!.id;
  const def = op.def;
  const params: Record<string, number> = {};
  if (op.parent) params[op.parent.def.param] = (await factory.any(op.parent.def)).id;
  const pivot = pivotOf(op);
  const list = sibling(op, "list")!;
  const accessor =
    pivot && Object.keys(pivot.fields).length && (pivot.always || list.includes.includes(pivot.as))
      ? pivot.as
      : undefined;
  const bodyIncludes = accessor && !pivot!.always ? [{ relation: accessor }] : [];
  const create = sibling(op, "create");
  const mine: Row[] = [];
  if (create) {
    for (let i = 0; i < 3; i++) {
      const built = await factory.build(def, {
        full: i < 2,
        variant: i,
        omit: op.parent ? fixedColumns(op.parent) : [],
        reuse: i !== 1,
      });
      const body: Attrs = { ...asJson(built), created_at: `202${i + 1}-0${i + 3}-1${i}T1${i}:30:00.000000Z` };
      if (pivot && Object.keys(pivot.fields).length && i < 2) {
        const day = fresh();
        body.pivot = Object.fromEntries(
          await Promise.all(
            Object.entries(pivot.fields).map(async ([n, f]) => [
              snake(n),
              f.references
                ? (await factory.reference(resourceNamed(f.references), 1, true)).id
                : scalarValue(n, f, fresh(), i, day),
            ]),
          ),
        );
      }
      mine.push(data(await api.post(pathOf(create, params), body), `create through ${create.path}`));
    }
  } else {
    mine.push(await factory.any(def));
  }
  const query = [accessor && !pivot!.always ? `include=${accessor}` : "", "limit=100"].filter(Boolean).join("&");
  const all = data<Row[]>(await api.get(pathOf(list, params, query)), "list");
  const related: Related = new Map();
  for (const rel of Object.values(def.relations)) {
    if (rel.kind !== "belongsTo" || related.has(rel.target)) continue;
    const targetList = topOp(resourceNamed(rel.target), "list");
    if (!targetList) continue;
    const rows = data<Row[]>(await api.get(pathOf(targetList, {}, "limit=100")), `list ${rel.target}`);
    related.set(rel.target, new Map(rows.map((r) => [r.id, r])));
  }
  return {
    api,
    def,
    factory,
    accountId,
    params,
    mine: mine.map((m) => all.find((r: Row) => r.id === m.id) ?? m),
    all,
    columns: columnsOf(def, pivot, accessor, related),
    bodyIncludes,
  };
}

/** Sends a search and returns the rows (limit 100), or the reply when it is not a 200. */
async function search(
  s: Setup,
  op: Operation,
  body: Record<string, unknown>,
): Promise<Row[] | { status: number; body: { error?: { errors?: unknown; message?: string } } | null }> {
  const r = await s.api.post(pathOf(op, s.params), { limit: 100, includes: s.bodyIncludes, ...body });
  return r.status === 200 ? (r.body.data as Row[]) : { status: r.status, body: r.body };
}

/**
 * Filters that exercise every operator on the columns this list has: the expected rows come from the
 * oracle. Nested lists (`light`) share the top-level code path but for the parent and link scoping,
 * so they get one case per kind of column instead of the whole operator matrix.
 */
function filterCases(s: Setup, light: boolean, leader: boolean): Filter[] {
  // Outside the leaders, a sample: the resource's own columns with the operators whose handling differs by type.
  const sampled = new Set<string>();
  const sample = (f: Filter) => {
    const c = s.columns.find((x) => x.name === f.field)!;
    const wanted =
      f.field === "id"
        ? f.operator === "="
        : f.field === "created_at"
          ? f.operator === ">="
          : f.field.startsWith("pivot.")
            ? f.operator === "="
            : f.field.includes(".")
              ? c.type === "string"
                ? f.operator === "like"
                : f.operator === "="
              : f.value === null ||
                (Array.isArray(f.value) && f.value.includes(null)) ||
                ["=", "like"].includes(f.operator);
    const key = `${f.field} ${f.operator} ${f.value === null}`;
    if (!wanted || sampled.has(key)) return false;
    sampled.add(key);
    return true;
  };
  const all = fullFilterCases(s).filter((f) => leader || sample(f));
  if (!light) return all;
  const seen = new Set<string>();
  return all.filter((f) => {
    const kind = f.field.startsWith("pivot.")
      ? f.field + f.operator
      : f.field.includes(".")
        ? `relation ${f.field.endsWith(".id")} ${f.operator}`
        : f.value === null
          ? "null"
          : f.field === "id"
            ? `id${f.operator}`
            : f.operator;
    if (
      seen.has(kind) ||
      !(f.field.includes(".") || f.value === null || ["=", "in", "like", "not in"].includes(f.operator))
    )
      return false;
    seen.add(kind);
    return true;
  });
}

function fullFilterCases(s: Setup): Filter[] {
  const cases: Filter[] = [];
  const col = (name: string) => s.columns.find((c) => c.name === name)!;
  const [m0, m1, m2] = s.mine;
  const value = (c: Column, row: Row | undefined) => (row ? c.read(row) : undefined);
  const id = col("id");
  for (const operator of ["=", "!=", "<", "<=", ">", ">="])
    cases.push({ field: "id", operator, value: value(id, m1 ?? m0) });
  cases.push(
    { field: "id", operator: "in", value: s.mine.map((m) => m.id) },
    { field: "id", operator: "not in", value: [m0.id] },
  );
  const created = value(col("created_at"), m1 ?? m0) as string;
  for (const operator of ["=", "!=", "<", ">="]) cases.push({ field: "created_at", operator, value: created });
  cases.push(
    { field: "created_at", operator: "=", value: created.slice(0, 10) },
    { field: "created_at", operator: "!=", value: created.slice(0, 10) },
  );

  const text = s.columns.find(
    (c) =>
      (c.type === "string" || c.type === "text") &&
      !c.name.includes(".") &&
      typeof value(c, m0) === "string" &&
      (value(c, m0) as string).length >= 4,
  );
  if (text) {
    const v = value(text, m0) as string;
    const other = s.mine.map((m) => value(text, m)).find((x) => typeof x === "string" && x !== v) ?? "zzz";
    for (const operator of ["=", "!=", "<", ">"]) cases.push({ field: text.name, operator, value: v });
    cases.push(
      { field: text.name, operator: "in", value: [v, other] },
      { field: text.name, operator: "not in", value: [v] },
      { field: text.name, operator: "like", value: `%${v.slice(1, -1)}%` },
      { field: text.name, operator: "like", value: `${v.slice(0, -1)}%` },
      { field: text.name, operator: "like", value: `%${v.slice(1)}` },
      { field: text.name, operator: "like", value: `%${v.slice(1, -1).toUpperCase()}%` },
      { field: text.name, operator: "not like", value: `%${v.slice(1, -1)}%` },
    );
  }
  const nullable = s.columns.find(
    (c) =>
      !c.name.startsWith("pivot.") && s.all.some((r) => c.read(r) === null) && s.all.some((r) => c.read(r) != null),
  );
  if (nullable) {
    const v = s.all.map((r) => nullable.read(r)).find((x) => x != null);
    cases.push(
      { field: nullable.name, operator: "=", value: null },
      { field: nullable.name, operator: "!=", value: null },
      { field: nullable.name, operator: "!=", value: v },
      { field: nullable.name, operator: "in", value: [v, null] },
      { field: nullable.name, operator: "not in", value: [v, null] },
      { field: nullable.name, operator: "not in", value: [v] },
    );
  }
  const flag = s.columns.find((c) => c.type === "boolean" && !c.name.includes("."));
  if (flag)
    cases.push(
      { field: flag.name, operator: "=", value: true },
      { field: flag.name, operator: "!=", value: true },
      { field: flag.name, operator: "=", value: false },
    );
  for (const c of s.columns.filter((c) => c.name.includes(".") && !c.name.startsWith("pivot."))) {
    const v = s.all.map((r) => c.read(r)).find((x) => x != null);
    if (v === undefined) continue;
    cases.push({ field: c.name, operator: "=", value: v }, { field: c.name, operator: "!=", value: v });
    if (c.type === "string") cases.push({ field: c.name, operator: "like", value: `%${String(v).slice(1, -1)}%` });
  }
  for (const c of s.columns.filter((c) => c.name.startsWith("pivot."))) {
    const v = value(c, m0) ?? value(c, m1);
    if (v === undefined || v === null) continue;
    cases.push({ field: c.name, operator: "=", value: v }, { field: c.name, operator: "!=", value: v });
    if (c.type === "int" || c.type === "datetime") cases.push({ field: c.name, operator: ">=", value: v });
  }
  if (m2) cases.push({ field: "id", operator: "=", value: m2.id });
  return cases;
}

/** The and/or/nested combinations of the first three rows made, with the ids each selects. */
function combinationCases(s: Setup, leader: boolean): Array<[OrionFilter[], number[]]> {
  const [a, b, c] = s.mine.map((m) => m.id);
  if (c === undefined) return [];
  const id = (value: number, type = "and", operator = "=") => ({ field: "id", operator, value, type });
  const cases: Array<[OrionFilter[], number[]]> = [
    [
      [id(a), id(b, "or")],
      [a, b],
    ],
    [[id(a), id(b, "or"), id(c, "and")], [a]],
    [[{ nested: [id(a), id(b, "or")] }, id(a, "and", "!=")], [b]],
    [[id(a, "and", ">="), { type: "and", nested: [id(a), id(c, "or")] }], [a, c].sort((x, y) => x - y)],
    [[id(a), { type: "or", nested: [id(b), id(b, "and", "!=")] }], [a]],
    [
      [id(a, "and", "in"), { type: "or", nested: [id(c)] }].map((f, i) => (i === 0 ? { ...f, value: [a, b] } : f)),
      [a, b, c].sort((x, y) => x - y),
    ],
  ];
  return leader ? cases : cases.slice(2, 3);
}

/** The columns the sort cases run on: every one on a top-level leader, one per kind on a nested leader, a sample elsewhere. */
function sortColumns(s: Setup, light: boolean, leader: boolean): Column[] {
  const kinds = new Set<string>();
  if (!leader)
    return s.columns.filter(
      (c) => c.name.includes(".") || c === s.columns.find((x) => x.type === "string" && !x.name.includes(".")),
    );
  if (!light) return s.columns;
  return s.columns.filter((c) => {
    const kind = c.name.startsWith("pivot.")
      ? c.name
      : c.name.includes(".")
        ? `relation ${c.type}`
        : c.name === "id"
          ? "id"
          : c.type;
    if (kinds.has(kind)) return false;
    kinds.add(kind);
    return true;
  });
}

/** The public connection that lists what a search route lists: a root list, or a to-many connection of the parent. */
interface PublicList {
  /** The root field (`users`), or the parent's lookup (`user`) when `connection` is set. */
  root: string;
  connection?: string;
  whereType: GraphQLInputObjectType;
  orderByType: string;
}

function publicList(op: Operation): PublicList | undefined {
  const schema = getSchema();
  const withWhere = (f: GraphQLField<unknown, unknown> | undefined) =>
    f?.args.some((a) => a.name === "where") ? f : undefined;
  const typesOf = (f: GraphQLField<unknown, unknown>) => ({
    whereType: getNamedType(f.args.find((a) => a.name === "where")!.type) as GraphQLInputObjectType,
    orderByType: getNamedType(f.args.find((a) => a.name === "orderBy")!.type).name,
  });
  if (!op.parent) {
    const f = withWhere(schema.getQueryType()!.getFields()[op.field]);
    return f && { root: op.field, ...typesOf(f) };
  }
  const parent = schema.getType(pascal(op.parent.def.name));
  if (!isObjectType(parent)) return undefined;
  // A many-to-many connection is named by the relation's key in the registry, a to-many one by its field.
  const names = [relationField(op.parent.relation), camel(op.parent.route.relation), op.parent.route.relation];
  const f = names.map((n) => withWhere(parent.getFields()[n])).find(Boolean);
  return f && { root: op.parent.def.name, connection: f.name, ...typesOf(f) };
}

/** A REST column name as a typed path on `list`'s where type (none for pivot columns or names it lacks). */
function typedColumnOf(s: Setup, list: PublicList): (name: string) => TypedColumn | undefined {
  return (name) => {
    const [head, col, ...more] = name.split(".");
    if (more.length || head === "pivot") return undefined;
    const def = s.def;
    let path: string[];
    // The row id is `rowId` in where/orderBy (`id` is the global id), on the row and on a related row.
    const typedName = (column: string) => (column === "id" ? "rowId" : camel(column));
    if (col === undefined) path = [typedName(head)];
    else {
      const rel = Object.entries(def.relations).find(
        ([key, r]) => camel(key) === camel(head) || r.field === camel(head),
      )?.[1];
      if (!rel || rel.kind !== "belongsTo") return undefined;
      path = [rel.field, typedName(col)];
    }
    let filter = list.whereType.getFields()[path[0]]?.type;
    if (filter && path.length === 2) filter = (getNamedType(filter) as GraphQLInputObjectType).getFields().is?.type;
    if (filter && path.length === 2)
      filter = (getNamedType(filter) as GraphQLInputObjectType).getFields()[path[1]]?.type;
    if (!filter) return undefined;
    const equals = (getNamedType(filter) as GraphQLInputObjectType).getFields().equals?.type;
    const named = equals && getNamedType(equals);
    return {
      path,
      enumOf: isEnumType(named) ? named : undefined,
      datetime: s.columns.find((c) => c.name === name)?.type === "datetime",
    };
  };
}

/** One REST search body and the typed arguments that say the same; `first`: the first sort key's column. */
interface ParityCase {
  label: unknown;
  body: Record<string, unknown>;
  where?: TypedWhere;
  orderBy?: TypedWhere[];
  first?: Column;
}

/** The row ids and totalCount each case's public connection returns, 25 aliases a document. */
async function publicAnswers(
  s: Setup,
  list: PublicList,
  cases: ParityCase[],
): Promise<Array<{ ids: number[]; totalCount: number } | { errors: unknown }>> {
  const out: Array<{ ids: number[]; totalCount: number } | { errors: unknown }> = [];
  for (let from = 0; from < cases.length; from += 25) {
    const chunk = cases.slice(from, from + 25);
    const vars: Record<string, unknown> = {};
    const declared: string[] = [];
    const fields = chunk.map((c, i) => {
      vars[`w${i}`] = c.where ?? null;
      vars[`o${i}`] = c.orderBy ?? null;
      declared.push(`$w${i}: ${list.whereType.name}`, `$o${i}: [${list.orderByType}!]`);
      return `c${i}: ${list.connection ?? list.root}(first: 100, where: $w${i}, orderBy: $o${i}) { totalCount nodes { rowId } }`;
    });
    let document: string;
    if (list.connection) {
      vars.parent = Object.values(s.params)[0];
      document = `query Parity($parent: Int!, ${declared.join(", ")}) { parent: ${list.root}(rowId: $parent) { ${fields.join(" ")} } }`;
    } else document = `query Parity(${declared.join(", ")}) { ${fields.join(" ")} }`;
    const reply = await s.api.graphql(document, vars);
    const data = list.connection ? reply.body.data?.parent : reply.body.data;
    for (const [i] of chunk.entries()) {
      const answer = data?.[`c${i}`];
      if (!answer) out.push({ errors: reply.body.errors ?? reply.body });
      else out.push({ ids: answer.nodes.map((n: Row) => n.rowId), totalCount: answer.totalCount });
    }
  }
  return out;
}

describe.each(searches.map((op) => [op.path, op] as const))("POST %s", (_path, op: Operation) => {
  const def = op.def;
  /** Nested routes run the top-level search code within their parent: fewer cases, the same kinds. */
  const light = !!op.parent;
  /**
   * The first route of each kind (top-level, child collection, link collection) runs every case of
   * what does not depend on the resource (operators on ids and timestamps, combination, error
   * shapes); the others run the resource-specific ones and a sample of the rest.
   */
  const leader = searches.find((o) => kindOf(o) === kindOf(op)) === op;
  let s: Setup;
  beforeAll(async () => {
    s = await setUp(op);
  });
  const expectedIds = (f: Filter) => {
    const c = s.columns.find((c) => c.name === f.field)!;
    return sortedIds(s.all.filter((r) => selects(c.type, c.read(r), f.operator, f.value)));
  };

  test("filters: each operator selects exactly the rows SQL would (ids, timestamps, text, NULLs, booleans, to-one and link columns)", async () => {
    const mismatches: unknown[] = [];
    for (const f of filterCases(s, light, leader)) {
      const got = await search(s, op, { filters: [f] });
      const want = expectedIds(f);
      if (!Array.isArray(got))
        mismatches.push({
          filter: f,
          want,
          status: got.status,
          error: got.body?.error?.errors ?? got.body?.error?.message,
        });
      else if (sortedIds(got).join() !== want.join()) mismatches.push({ filter: f, want, got: sortedIds(got) });
    }
    expect(mismatches).toEqual([]);
  });

  test("filters combine as SQL does: and binds tighter than or; one nested level groups; a second is 422", async () => {
    const [a] = s.mine.map((m) => m.id);
    for (const [filters, want] of combinationCases(s, leader)) {
      const got = await search(s, op, { filters });
      expect(Array.isArray(got) ? sortedIds(got) : got, JSON.stringify(filters)).toEqual(want);
    }
    if (s.mine.length < 3) return;
    const deep = await s.api.post(pathOf(op, s.params), {
      filters: [{ nested: [{ nested: [{ field: "id", value: a }] }] }],
    });
    expect(deep.status).toBe(422);
    expect(JSON.stringify(deep.body.error.errors)).toContain("Max nested depth 1 is exceeded");
  });

  test("sort: every column, ascending and descending, orders the rows and drops none", async () => {
    const mismatches: unknown[] = [];
    const relationOnPostgres = (name: string) =>
      process.env.MUSTER_TEST_DATABASE === "postgresql" && name.includes(".") && !name.startsWith("pivot.");
    for (const [index, c] of sortColumns(s, light, leader).entries()) {
      // Both directions on ids and to-one and link columns of each kind's first route; elsewhere one, alternating, keeps the request count down.
      const both = leader && (c.name === "id" || c.name.includes("."));
      for (const direction of (both ? ["asc", "desc"] : [index % 2 ? "desc" : "asc"]) as Array<"asc" | "desc">) {
        const got = await search(s, op, { sort: [{ field: c.name, direction }] });
        if (!Array.isArray(got))
          mismatches.push({ sort: c.name, direction, status: got.status, error: got.body?.error });
        else if (
          sortedIds(got).join() !== sortedIds(s.all).join() ||
          !ordered(
            c.type,
            got.map((r) => c.read(r)),
            direction,
            relationOnPostgres(c.name),
          )
        ) {
          mismatches.push({ sort: c.name, direction, got: got.map((r) => [r.id, c.read(r)]) });
        }
      }
    }
    const flag = s.columns.find((c) => c.type === "boolean") ?? s.columns.find((c) => c.name === "created_at")!;
    const two = await search(s, op, { sort: [{ field: flag.name, direction: "desc" }, { field: "id" }] });
    if (Array.isArray(two)) {
      const key = (r: Row) => [flag.read(r), r.id];
      for (let i = 1; i < two.length; i++) {
        const [p, q] = [key(two[i - 1]), key(two[i])];
        const sameFirst = JSON.stringify(p[0]) === JSON.stringify(q[0]);
        if (sameFirst && (p[1] as number) > (q[1] as number)) mismatches.push({ sort: [flag.name, "id"], at: i });
      }
      if (
        !ordered(
          flag.type,
          two.map((r) => flag.read(r)),
          "desc",
        )
      )
        mismatches.push({ sort: [flag.name, "id"], order: "first key" });
    } else mismatches.push({ sort: [flag.name, "id"], status: two.status });
    expect(mismatches).toEqual([]);
  });

  test("search {value, case_sensitive: false}: rows with the value in any text column", async () => {
    const texts = s.columns.filter((c) => (c.type === "string" || c.type === "text") && !c.name.includes("."));
    const source = texts.map((c) => s.mine[0][c.name]).find((v) => typeof v === "string" && v.length > 3) as
      | string
      | undefined;
    if (!source) return;
    const token = source.slice(1, -1);
    const want = sortedIds(
      s.all.filter((r) =>
        texts.some(
          (c) => typeof r[c.name] === "string" && (r[c.name] as string).toLowerCase().includes(token.toLowerCase()),
        ),
      ),
    );
    for (const value of leader ? [token, token.toUpperCase()] : [token.toUpperCase()]) {
      const got = await search(s, op, { search: { value, case_sensitive: false } });
      expect(Array.isArray(got) ? sortedIds(got) : got, value).toEqual(want);
    }
    if (!leader) return;
    const none = await search(s, op, { search: { value: "no row holds this text" } });
    expect(none).toEqual([]);
    const all = await search(s, op, { search: { value: "" } });
    expect(Array.isArray(all) ? sortedIds(all) : all).toEqual(sortedIds(s.all));
  });

  test("scopes: each exposed scope selects what its definition selects; an unknown scope or missing parameters is 422", async () => {
    for (const [name, scope] of Object.entries(def.scopes ?? {})) {
      const parameters =
        scope.parameters === undefined
          ? ["1"]
          : Array.from({ length: scope.parameters }, (_, i) => (i === 0 ? "2000-01-01" : "2100-01-01"));
      const inScope = await h.db.store.findMany(def.model, {
        where: { AND: [scope.where(parameters, {} as never), { accountId: s.accountId }] },
        select: { id: true },
      });
      const ids = new Set(inScope.map((r) => r.id));
      const got = await search(s, op, { scopes: [{ name, parameters }] });
      expect(Array.isArray(got) ? sortedIds(got) : got, name).toEqual(sortedIds(s.all.filter((r) => ids.has(r.id))));
      if (scope.parameters)
        rejected(
          await s.api.post(pathOf(op, s.params), { scopes: [{ name, parameters: [] }] }),
          ["scopes.0.parameters"],
          name,
        );
    }
    rejected(await s.api.post(pathOf(op, s.params), { scopes: [{ name: "noSuchScope" }] }), ["scopes.0.name"]);
  });

  test("includes, page and limit in the body", async () => {
    const includes = op.includes.filter((i) => !i.includes("*")).slice(0, h.config.includeMaxCount);
    const withIncludes = await search(s, op, { includes: includes.map((relation) => ({ relation })) });
    expect(Array.isArray(withIncludes), JSON.stringify(withIncludes)).toBe(true);
    for (const row of withIncludes as Row[])
      for (const relation of includes) expect(row, relation).toHaveProperty(relation.split(".")[0]);
    // The list read at set-up holds every row in the default order: page 2 of size 1 is its second row.
    const second = [s.all[1]?.id].filter((id) => id !== undefined);
    const r = await s.api.post(pathOf(op, s.params), { page: 2, limit: 1, includes: s.bodyIncludes });
    expect(data<Row[]>(r).map((x: Row) => x.id)).toEqual(second);
    expect(r.body.meta).toMatchObject({ current_page: 2, per_page: 1, total: s.all.length });
    if (!leader) return;
    const q = await s.api.post(pathOf(op, s.params, "limit=1&page=2"), {});
    expect(data<Row[]>(q).map((x: Row) => x.id)).toEqual(second);
  });

  test("unknown fields, operators, types and values are 422 naming the entry; nothing else is", async () => {
    const cases: Array<[Record<string, unknown>, string[]]> = [
      [{ filters: [{ field: "no_such_column", value: 1 }] }, ["filters.0.field"]],
      [{ filters: [{ field: "no_such_relation.id", value: 1 }] }, ["filters.0.field"]],
      [{ filters: [{ field: "pivot.no_such_column", value: 1 }] }, ["filters.0.field"]],
      [{ filters: [{ field: "id;drop", value: 1 }] }, ["filters.0.field"]],
      [{ filters: [{ field: "id", operator: "~", value: 1 }] }, ["filters.0.operator"]],
      [{ filters: [{ field: "id", operator: "like", value: "%1%" }] }, ["filters.0.operator"]],
      [{ filters: [{ field: "id", value: 1, type: "xor" }] }, ["filters.0.type"]],
      [{ filters: [{ field: "id", value: "abc" }] }, ["filters.0.value"]],
      [{ filters: [{ field: "id", operator: "in", value: 3 }] }, ["filters.0.value"]],
      [{ filters: [{ field: "created_at", operator: ">", value: "not a date" }] }, ["filters.0.value"]],
      [{ filters: [{ field: "id", operator: ">", value: null }] }, ["filters.0.value"]],
      [{ filters: [{ value: 1 }] }, ["filters.0.field"]],
      [
        {
          filters: [
            { field: "id", value: 1 },
            {
              type: "or",
              nested: [
                { field: "id", value: 1 },
                { field: "nope", value: 1 },
              ],
            },
          ],
        },
        ["filters.1.nested.1.field"],
      ],
      [{ filters: [{ field: "nope" }, { field: "id", operator: "~" }] }, ["filters.0.field", "filters.1.operator"]],
      [{ filters: { field: "id" } }, ["filters"]],
      [{ sort: [{ field: "no_such_column" }] }, ["sort.0.field"]],
      [{ sort: [{ field: "id", direction: "up" }] }, ["sort.0.direction"]],
      [{ scopes: [{ name: "noSuchScope" }] }, ["scopes.0.name"]],
      [{ search: { value: 5 } }, ["search.value"]],
      [{ search: "text" }, ["search"]],
      [{ includes: [{ relation: "no_such_relation" }] }, ["includes.0.relation"]],
      [{ page: 0 }, ["page"]],
      [{ limit: "x" }, ["limit"]],
    ];
    const relevant = leader ? cases : cases.filter((_, i) => i === 2 || i === 15 || i === 17);
    for (const [body, keys] of relevant)
      rejected(await s.api.post(pathOf(op, s.params), body), keys, JSON.stringify(body));
    if (!leader) return;
    const aggregates = await s.api.post(pathOf(op, s.params), { aggregates: [{ relation: "x", type: "count" }] });
    expect(aggregates.status).toBe(422);
    expect(
      (await s.api.post(pathOf(op, s.params), { filters: [], sort: [], scopes: [], search: { value: null } })).status,
    ).toBe(200);
    if (op.parent)
      expect((await s.api.post(pathOf(op, { ...s.params, [op.parent.def.param]: BAD_ID }), {})).status).toBe(404);
  });

  const list = publicList(op);
  if (list) {
    test("the public connection, given the same conditions as typed where/orderBy, returns the same rows in the same order", async () => {
      const columnOf = typedColumnOf(s, list);
      const cases: ParityCase[] = [];
      const untranslated: Filter[] = [];
      for (const f of filterCases(s, light, leader)) {
        const where = typedFilters([f], columnOf);
        if (where) cases.push({ label: f, body: { filters: [f] }, where });
        else untranslated.push(f);
      }
      // Only what the typed vocabulary has no word for stays REST-only.
      expect(
        untranslated.filter(
          (f) =>
            !f.field.startsWith("pivot.") &&
            !(f.operator.includes("like") && /[%_]/.test(String(f.value).replace(/^%|%$/g, ""))),
        ),
      ).toEqual([]);
      for (const [filters] of combinationCases(s, leader))
        cases.push({ label: filters, body: { filters }, where: typedFilters(filters, columnOf)! });
      for (const [index, c] of sortColumns(s, light, leader).entries()) {
        if (c.name.startsWith("pivot.")) continue;
        const both = leader && (c.name === "id" || c.name.includes("."));
        for (const direction of (both ? ["asc", "desc"] : [index % 2 ? "desc" : "asc"]) as Array<"asc" | "desc">) {
          const sort = [{ field: c.name, direction }];
          cases.push({ label: sort, body: { sort }, orderBy: typedSort(sort, columnOf)!, first: c });
        }
      }
      const flag = s.columns.find((c) => c.type === "boolean") ?? s.columns.find((c) => c.name === "created_at")!;
      const twoKeys = [
        { field: flag.name, direction: "desc" },
        { field: "id", direction: "asc" },
      ];
      cases.push({ label: twoKeys, body: { sort: twoKeys }, orderBy: typedSort(twoKeys, columnOf)!, first: flag });
      const mine = s.mine.map((m) => m.id);
      const both = {
        filters: [
          { field: "id", operator: "in", value: mine },
          {
            type: "or",
            nested: [
              { field: "created_at", operator: ">=", value: "2000-01-01" },
              { field: "id", operator: "!=", value: BAD_ID },
            ],
          },
        ],
        sort: [{ field: "created_at", direction: "desc" }],
      };
      cases.push({
        label: both,
        body: both,
        where: typedFilters(both.filters, columnOf)!,
        orderBy: typedSort(both.sort, columnOf)!,
        first: s.columns.find((c) => c.name === "created_at"),
      });

      const mismatches: unknown[] = [];
      const answers = await publicAnswers(s, list, cases);
      for (const [i, c] of cases.entries()) {
        const rest = await s.api.post(pathOf(op, s.params), { limit: 100, includes: s.bodyIncludes, ...c.body });
        if (rest.status !== 200) {
          mismatches.push({ case: c.label, rest: rest.status, error: rest.body?.error });
          continue;
        }
        const restRows = rest.body.data as Row[];
        // SortOrder puts empty values last in both directions (its documented meaning); Orion places them as PERSCOM
        // does. The rows with an empty first key are expected at the end, in REST's order among themselves.
        const empty = (r: Row) => c.first !== undefined && c.first.read(r) == null;
        const want = [...restRows.filter((r) => !empty(r)), ...restRows.filter(empty)].map((r) => r.id);
        const got = answers[i];
        if ("errors" in got) mismatches.push({ case: c.label, where: c.where, orderBy: c.orderBy, errors: got.errors });
        else if (JSON.stringify(got.ids) !== JSON.stringify(want) || got.totalCount !== rest.body.meta.total) {
          mismatches.push({
            case: c.label,
            where: c.where,
            orderBy: c.orderBy,
            want,
            got: got.ids,
            total: [rest.body.meta.total, got.totalCount],
          });
        }
      }
      expect(mismatches).toEqual([]);
      expect(cases.length).toBeGreaterThan(3);
    });
  }
});

describe("operator details, on the first searchable resource with a text column", () => {
  const op = searches.find(
    (o) =>
      !o.parent &&
      sibling(o, "create") &&
      Object.values(o.def.fields).some((f) => f.type === "string" && !f.pattern && !f.oneOf && f.required),
  )!;
  const column = Object.entries(op.def.fields).find(
    ([, f]) => f.type === "string" && !f.pattern && !f.oneOf && f.required,
  )![0];
  const key = snake(column);
  let s: Setup;
  let rows: Row[];
  beforeAll(async () => {
    s = await setUp(op);
    const create = sibling(op, "create")!;
    rows = [];
    for (const text of ["Alpha_Bravo", "alphaXbravo", "ALPHA BRAVO 100%", "charlie"]) {
      const built = await s.factory.build(op.def);
      rows.push(data(await s.api.post(pathOf(create), { ...asJson(built), [key]: text }), "create"));
    }
  });
  const ids = (got: Row[] | { status: number }) =>
    Array.isArray(got) ? sortedIds(got).filter((id) => rows.some((r) => r.id === id)) : got;
  const named = (...texts: string[]) => sortedIds(rows.filter((r) => texts.includes(r[key] as string)));

  test(`like follows SQL LIKE on ${op.path} ${key}: % and _ wildcards, ASCII case ignored`, async () => {
    const cases: Array<[string, string, number[]]> = [
      ["like", "alpha%", named("Alpha_Bravo", "alphaXbravo", "ALPHA BRAVO 100%")],
      ["like", "%BRAVO", named("Alpha_Bravo", "alphaXbravo")],
      ["like", "alpha_bravo", named("Alpha_Bravo", "alphaXbravo")],
      ["like", "CHARLIE", named("charlie")],
      ["like", "%a%b%", named("Alpha_Bravo", "alphaXbravo", "ALPHA BRAVO 100%")],
      ["not like", "alpha%", named("charlie")],
    ];
    const mismatches = [];
    for (const [operator, value, want] of cases) {
      const got = ids(await search(s, op, { filters: [{ field: key, operator, value }] }));
      if (JSON.stringify(got) !== JSON.stringify(want)) mismatches.push({ operator, value, want, got });
    }
    expect(mismatches).toEqual([]);
  });

  test(`search with case_sensitive: true matches the exact case only, on ${op.path}`, async () => {
    expect(ids(await search(s, op, { search: { value: "alpha", case_sensitive: true } }))).toEqual(
      named("alphaXbravo"),
    );
    expect(ids(await search(s, op, { search: { value: "ALPHA", case_sensitive: true } }))).toEqual(
      named("ALPHA BRAVO 100%"),
    );
    expect(ids(await search(s, op, { search: { value: "ALPHA", case_sensitive: false } }))).toEqual(
      named("Alpha_Bravo", "alphaXbravo", "ALPHA BRAVO 100%"),
    );
  });

  test("= on text is exact and case-sensitive; != excludes it; in takes a list", async () => {
    expect(ids(await search(s, op, { filters: [{ field: key, value: "charlie" }] }))).toEqual(named("charlie"));
    expect(ids(await search(s, op, { filters: [{ field: key, value: "Charlie" }] }))).toEqual([]);
    expect(ids(await search(s, op, { filters: [{ field: key, operator: "!=", value: "charlie" }] }))).toEqual(
      named("Alpha_Bravo", "alphaXbravo", "ALPHA BRAVO 100%"),
    );
    expect(
      ids(await search(s, op, { filters: [{ field: key, operator: "in", value: ["charlie", "alphaXbravo"] }] })),
    ).toEqual(named("charlie", "alphaXbravo"));
  });
});

describe.each(searches.filter((op) => !publicList(op)).map((op) => [op.path, op] as const))(
  "POST %s, with no public connection",
  (_path, op) => {
    test("is a to-one relation (REST lists it; the graph has a single field): the only search route the parity cases skip", () => {
      expect(op.parent?.relation.kind).toBe("morphOne");
    });
  },
);

describe("typed where beyond Orion, on users: NOT, to-many every/none, isNot, mode, literal % and _, empty columns", () => {
  let api: Client;
  const ids: Record<string, number> = {};
  beforeAll(async () => {
    ({ api } = await account(h));
    const rank = async (name: string) => data(await api.post("/v2/ranks", { name }), "rank").id;
    const [privateRank, sergeant] = [await rank("Private"), await rank("Sergeant")];
    const users: Array<[string, string | null]> = [
      ["Alpha_Bravo", "d1"],
      ["alphaXbravo", null],
      ["ALPHA 100%", null],
      ["charlie", "d4"],
    ];
    for (const [i, [name, discord]] of users.entries()) {
      ids[name] = data(
        await api.post("/v2/users", { name, email: `typed-${fresh()}-${i}@example.test`, discord_user_id: discord }),
        "user",
      ).id;
    }
    const record = async (user: string, rank_id: number, type: number) =>
      data(await api.post(`/v2/users/${ids[user]}/rank-records`, { rank_id, type }), "rank record");
    await record("Alpha_Bravo", privateRank, 0);
    await record("alphaXbravo", sergeant, 0);
    await record("alphaXbravo", privateRank, 1);
    await record("charlie", sergeant, 0);
    // Records set the user's rank; the last one written is the one kept. ALPHA 100% has neither rank nor records.
    const shown = data<Row[]>(await api.get("/v2/users?limit=100"), "users");
    expect(
      Object.fromEntries(Object.entries(ids).map(([name, id]) => [name, shown.find((u) => u.id === id)?.rank_id])),
    ).toEqual({
      Alpha_Bravo: privateRank,
      alphaXbravo: privateRank,
      "ALPHA 100%": null,
      charlie: sergeant,
    });
  });
  const names = async (where: unknown) => {
    const reply = await api.graphql(
      "query Typed($where: UserWhere!, $mine: [Int!]) { users(first: 100, where: { AND: [{ rowId: { in: $mine } }, $where] }, orderBy: [{ rowId: asc }]) { nodes { rowId name } } }",
      { where, mine: Object.values(ids) },
    );
    expect(reply.body.errors, JSON.stringify(reply.body.errors)).toBeUndefined();
    return (reply.body.data.users.nodes as Row[]).map((n) => n.name as string);
  };
  const sqlite = process.env.MUSTER_TEST_DATABASE !== "postgresql";

  test("text: mode INSENSITIVE ignores case on both databases; DEFAULT compares as the database does", async () => {
    expect(await names({ name: { equals: "CHARLIE", mode: "INSENSITIVE" } })).toEqual(["charlie"]);
    expect(await names({ name: { equals: "CHARLIE" } })).toEqual([]);
    expect(await names({ name: { contains: "BRAVO", mode: "INSENSITIVE" } })).toEqual(["Alpha_Bravo", "alphaXbravo"]);
    expect(await names({ name: { in: ["ALPHA 100%", "Charlie"] } })).toEqual(["ALPHA 100%"]);
    // DEFAULT: case-sensitive on PostgreSQL, SQLite's ASCII case-insensitive LIKE (the QueryMode description).
    expect(await names({ name: { contains: "BRAVO" } })).toEqual(sqlite ? ["Alpha_Bravo", "alphaXbravo"] : []);
    expect(await names({ name: { startsWith: "alpha" } })).toEqual(
      sqlite ? ["Alpha_Bravo", "alphaXbravo", "ALPHA 100%"] : ["alphaXbravo"],
    );
  });

  test("contains, startsWith and endsWith take % and _ literally, on both databases", async () => {
    expect(await names({ name: { contains: "_" } })).toEqual(["Alpha_Bravo"]);
    expect(await names({ name: { contains: "%" } })).toEqual(["ALPHA 100%"]);
    expect(await names({ name: { startsWith: "alpha_", mode: "INSENSITIVE" } })).toEqual(["Alpha_Bravo"]);
    expect(await names({ name: { endsWith: "0%" } })).toEqual(["ALPHA 100%"]);
    expect(await names({ name: { contains: "a%b", mode: "INSENSITIVE" } })).toEqual([]);
    expect(await names({ name: { endsWith: "_", mode: "INSENSITIVE" } })).toEqual([]);
  });

  test("NOT, and OR inside it", async () => {
    expect(await names({ NOT: { name: { startsWith: "alpha", mode: "INSENSITIVE" } } })).toEqual(["charlie"]);
    expect(await names({ NOT: { OR: [{ name: { equals: "charlie" } }, { name: { contains: "_" } }] } })).toEqual([
      "alphaXbravo",
      "ALPHA 100%",
    ]);
    expect(
      await names({ AND: [{ NOT: { name: { equals: "charlie" } } }, { NOT: { discordUserId: { equals: null } } }] }),
    ).toEqual(["Alpha_Bravo"]);
  });

  test("to-one: is, isNot, is: null and isNot: null", async () => {
    expect(await names({ rank: { is: { name: { equals: "Private" } } } })).toEqual(["Alpha_Bravo", "alphaXbravo"]);
    expect(await names({ rank: { is: null } })).toEqual(["ALPHA 100%"]);
    expect(await names({ rank: { isNot: null } })).toEqual(["Alpha_Bravo", "alphaXbravo", "charlie"]);
    // Prisma's isNot: the rows whose related row does not match, a row without one included (as Prisma answers it).
    const prisma = await h.db.prisma.user.findMany({
      where: { id: { in: Object.values(ids) }, rank: { isNot: { name: { equals: "Private" } } } },
      orderBy: { id: "asc" },
      select: { name: true },
    });
    expect(await names({ rank: { isNot: { name: { equals: "Private" } } } })).toEqual(prisma.map((u) => u.name));
    expect(prisma.map((u) => u.name)).toContain("charlie");
  });

  test("to-many: some, every (true when there are none) and none; enum values by name", async () => {
    expect(await names({ rankRecords: { some: { type: { equals: "DEMOTION" } } } })).toEqual(["alphaXbravo"]);
    expect(await names({ rankRecords: { every: { type: { equals: "PROMOTION" } } } })).toEqual([
      "Alpha_Bravo",
      "ALPHA 100%",
      "charlie",
    ]);
    expect(await names({ rankRecords: { none: { rank: { is: { name: { equals: "Private" } } } } } })).toEqual([
      "ALPHA 100%",
      "charlie",
    ]);
    expect(await names({ rankRecords: { some: {} } })).toEqual(["Alpha_Bravo", "alphaXbravo", "charlie"]);
    expect(await names({ rankRecords: { none: {} } })).toEqual(["ALPHA 100%"]);
  });

  test("empty columns: equals null on a nullable column; on a column that is never empty it is a 422 naming where.<column>.equals", async () => {
    expect(await names({ discordUserId: { equals: null } })).toEqual(["alphaXbravo", "ALPHA 100%"]);
    expect(await names({ discordUserId: { not: { equals: null } } })).toEqual(["Alpha_Bravo", "charlie"]);
    expect(await names({ discordUserId: { not: { equals: "d1" } } })).toEqual(["charlie"]);
    const reply = await api.graphql("{ users(first: 5, where: { name: { equals: null } }) { nodes { rowId } } }");
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({ users: null });
    expect(reply.body.errors).toHaveLength(1);
    expect(reply.body.errors[0].path).toEqual(["users"]);
    expect(reply.body.errors[0].extensions).toMatchObject({ code: "VALIDATION", status: 422 });
    expect(Object.keys(reply.body.errors[0].extensions.errors)).toEqual(["where.name.equals"]);
  });
});
