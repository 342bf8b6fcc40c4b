import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { getNamedType, isNonNullType } from "graphql";
import type { FieldDef, FieldType, PivotDef, ResourceDef } from "../src/resources/define.ts";
import { operations, pivotOf, type Operation } from "../src/resources/operations.ts";
import { resourceNamed } from "../src/resources/index.ts";
import { delegate } from "../src/data/access.ts";
import { getSchema } from "../src/server/app.ts";
import { snake } from "../src/graphql/names.ts";
import { startHarness, type Client, type Harness } from "./harness.ts";
import { account, asJson, fresh, scalarValue, type Attrs, type Factory, type Row } from "./support/factory.ts";
import { fixedColumns, pathOf, topOp } from "./support/registry.ts";
import { data, rejected } from "./support/checks.ts";
import { ordered, selects, type Filter } from "./support/oracle.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.close());

const sortedIds = (rows: Row[]) => rows.map((r) => r.id as number).sort((a, b) => a - b);
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
  operations.find((o) => o.kind === kind && o.def === op.def && o.path === op.path.replace(/\/search$/, "") && !o.view && o.parent?.route === op.parent?.route);

/** Rows of a related resource by id, read through its own list, for `rel.<column>` filters and sorts. */
type Related = Map<string, Map<number, Row>>;

function columnsOf(def: ResourceDef, pivot: PivotDef | undefined, accessor: string | undefined, related: Related): Column[] {
  const plain = (name: string, type: FieldType): Column => ({ name, type, read: (row) => row[name] });
  const own: Column[] = [plain("id", "int"), plain("created_at", "datetime"), plain("updated_at", "datetime")];
  for (const [name, f] of Object.entries(def.fields)) if (!f.hidden && f.type !== "json") own.push(plain(snake(name), f.type));
  for (const [key, rel] of Object.entries(def.relations)) {
    if (rel.kind !== "belongsTo" || def.fields[rel.foreignKey]?.hidden) continue;
    own.push({ name: `${key}.id`, type: "int", read: (row) => row[snake(rel.foreignKey)] });
    const rows = related.get(rel.target);
    const text = Object.entries(resourceNamed(rel.target).fields).find(([, f]) => f.type === "string" && !f.hidden)?.[0];
    if (rows && text) own.push({ name: `${key}.${snake(text)}`, type: "string", read: (row) => rows.get(row[snake(rel.foreignKey)])?.[snake(text)] ?? null });
  }
  if (pivot && accessor) {
    const fields: Record<string, FieldDef> = { id: { type: "int" }, created_at: { type: "datetime" }, ...pivot.fields };
    for (const [name, f] of Object.entries(fields)) {
      if (f.type === "json") continue;
      own.push({ name: `pivot.${snake(name)}`, type: f.type, read: (row) => row[accessor]?.[snake(name)] });
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
  const accessor = pivot && Object.keys(pivot.fields).length && (pivot.always || list.includes.includes(pivot.as)) ? pivot.as : undefined;
  const bodyIncludes = accessor && !pivot!.always ? [{ relation: accessor }] : [];
  const create = sibling(op, "create");
  const mine: Row[] = [];
  if (create) {
    for (let i = 0; i < 3; i++) {
      const built = await factory.build(def, { full: i < 2, variant: i, omit: op.parent ? fixedColumns(op.parent) : [], reuse: i !== 1 });
      const body: Attrs = { ...asJson(built), created_at: `202${i + 1}-0${i + 3}-1${i}T1${i}:30:00.000000Z` };
      if (pivot && Object.keys(pivot.fields).length && i < 2) {
        const day = fresh();
        body.pivot = Object.fromEntries(
          await Promise.all(Object.entries(pivot.fields).map(async ([n, f]) =>
            [snake(n), f.references ? (await factory.reference(resourceNamed(f.references), 1, true)).id : scalarValue(n, f, fresh(), i, day)])),
        );
      }
      mine.push(data(await api.post(pathOf(create, params), body), `create through ${create.path}`));
    }
  } else {
    mine.push(await factory.any(def));
  }
  const query = [accessor && !pivot!.always ? `include=${accessor}` : "", "limit=100"].filter(Boolean).join("&");
  const all = data(await api.get(pathOf(list, params, query)), "list");
  const related: Related = new Map();
  for (const rel of Object.values(def.relations)) {
    if (rel.kind !== "belongsTo" || related.has(rel.target)) continue;
    const targetList = topOp(resourceNamed(rel.target), "list");
    if (!targetList) continue;
    const rows = data(await api.get(pathOf(targetList, {}, "limit=100")), `list ${rel.target}`) as Row[];
    related.set(rel.target, new Map(rows.map((r) => [r.id as number, r])));
  }
  return {
    api, factory, accountId, params, mine: mine.map((m) => all.find((r: Row) => r.id === m.id) ?? m), all, columns: columnsOf(def, pivot, accessor, related), bodyIncludes,
  };
}

/** Sends a search and returns the rows (limit 100), or the reply when it is not a 200. */
async function search(s: Setup, op: Operation, body: Record<string, unknown>): Promise<Row[] | { status: number; body: any }> {
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
    const wanted = f.field === "id" ? f.operator === "="
      : f.field === "created_at" ? f.operator === ">="
      : f.field.startsWith("pivot.") ? f.operator === "="
      : f.field.includes(".") ? (c.type === "string" ? f.operator === "like" : f.operator === "=")
      : f.value === null || (Array.isArray(f.value) && f.value.includes(null)) || ["=", "like"].includes(f.operator);
    const key = `${f.field} ${f.operator} ${f.value === null}`;
    if (!wanted || sampled.has(key)) return false;
    sampled.add(key);
    return true;
  };
  const all = fullFilterCases(s).filter((f) => leader || sample(f));
  if (!light) return all;
  const seen = new Set<string>();
  return all.filter((f) => {
    const kind = f.field.startsWith("pivot.") ? f.field + f.operator : f.field.includes(".") ? `relation ${f.field.endsWith(".id")} ${f.operator}` : f.value === null ? "null" : f.field === "id" ? `id${f.operator}` : f.operator;
    if (seen.has(kind) || !(f.field.includes(".") || f.value === null || ["=", "in", "like", "not in"].includes(f.operator))) return false;
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
  for (const operator of ["=", "!=", "<", "<=", ">", ">="]) cases.push({ field: "id", operator, value: value(id, m1 ?? m0) });
  cases.push({ field: "id", operator: "in", value: s.mine.map((m) => m.id) }, { field: "id", operator: "not in", value: [m0!.id] });
  const created = value(col("created_at"), m1 ?? m0) as string;
  for (const operator of ["=", "!=", "<", ">="]) cases.push({ field: "created_at", operator, value: created });
  cases.push({ field: "created_at", operator: "=", value: created.slice(0, 10) }, { field: "created_at", operator: "!=", value: created.slice(0, 10) });

  const text = s.columns.find((c) => (c.type === "string" || c.type === "text") && !c.name.includes(".") && typeof value(c, m0) === "string" && (value(c, m0) as string).length >= 4);
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
  const nullable = s.columns.find((c) => !c.name.startsWith("pivot.") && s.all.some((r) => c.read(r) === null) && s.all.some((r) => c.read(r) != null));
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
  if (flag) cases.push({ field: flag.name, operator: "=", value: true }, { field: flag.name, operator: "!=", value: true }, { field: flag.name, operator: "=", value: false });
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
      if (!Array.isArray(got)) mismatches.push({ filter: f, want, status: got.status, error: got.body?.error?.errors ?? got.body?.error?.message });
      else if (sortedIds(got).join() !== want.join()) mismatches.push({ filter: f, want, got: sortedIds(got) });
    }
    expect(mismatches).toEqual([]);
  });

  test("filters combine as SQL does: and binds tighter than or; one nested level groups; a second is 422", async () => {
    const [a, b, c] = s.mine.map((m) => m.id as number);
    if (c === undefined) return;
    const id = (value: number, type = "and", operator = "=") => ({ field: "id", operator, value, type });
    const cases: Array<[unknown[], number[]]> = [
      [[id(a!), id(b!, "or")], [a!, b!]],
      [[id(a!), id(b!, "or"), id(c, "and")], [a!]],
      [[{ nested: [id(a!), id(b!, "or")] }, id(a!, "and", "!=")], [b!]],
      [[id(a!, "and", ">="), { type: "and", nested: [id(a!), id(c, "or")] }], [a!, c].sort((x, y) => x - y)],
      [[id(a!), { type: "or", nested: [id(b!), id(b!, "and", "!=")] }], [a!]],
      [[id(a!, "and", "in"), { type: "or", nested: [id(c)] }].map((f, i) => (i === 0 ? { ...f, value: [a, b] } : f)), [a!, b!, c].sort((x, y) => x - y)],
    ];
    for (const [filters, want] of leader ? cases : cases.slice(2, 3)) {
      const got = await search(s, op, { filters });
      expect(Array.isArray(got) ? sortedIds(got) : got, JSON.stringify(filters)).toEqual(want);
    }
    const deep = await s.api.post(pathOf(op, s.params), { filters: [{ nested: [{ nested: [id(a!)] }] }] });
    expect(deep.status).toBe(422);
    expect(JSON.stringify(deep.body.error.errors)).toContain("Max nested depth 1 is exceeded");
  });

  test("sort: every column, ascending and descending, orders the rows and drops none", async () => {
    const mismatches: unknown[] = [];
    const kinds = new Set<string>();
    const relationOnPostgres = (name: string) => process.env.MUSTER_TEST_DATABASE === "postgresql" && name.includes(".") && !name.startsWith("pivot.");
    const columns = !leader
      ? s.columns.filter((c) => c.name.includes(".") || c === s.columns.find((x) => x.type === "string" && !x.name.includes(".")))
      : light
      ? s.columns.filter((c) => {
        const kind = c.name.startsWith("pivot.") ? c.name : c.name.includes(".") ? `relation ${c.type}` : c.name === "id" ? "id" : c.type;
        if (kinds.has(kind)) return false;
        kinds.add(kind);
        return true;
      })
      : s.columns;
    for (const [index, c] of columns.entries()) {
      // Both directions on ids and to-one and link columns of each kind's first route; elsewhere one, alternating, keeps the request count down.
      const both = leader && (c.name === "id" || c.name.includes("."));
      for (const direction of (both ? ["asc", "desc"] : [index % 2 ? "desc" : "asc"]) as Array<"asc" | "desc">) {
        const got = await search(s, op, { sort: [{ field: c.name, direction }] });
        if (!Array.isArray(got)) mismatches.push({ sort: c.name, direction, status: got.status, error: got.body?.error });
        else if (sortedIds(got).join() !== sortedIds(s.all).join() || !ordered(c.type, got.map((r) => c.read(r)), direction, relationOnPostgres(c.name))) {
          mismatches.push({ sort: c.name, direction, got: got.map((r) => [r.id, c.read(r)]) });
        }
      }
    }
    const flag = s.columns.find((c) => c.type === "boolean") ?? s.columns.find((c) => c.name === "created_at")!;
    const two = await search(s, op, { sort: [{ field: flag.name, direction: "desc" }, { field: "id" }] });
    if (Array.isArray(two)) {
      const key = (r: Row) => [flag.read(r), r.id];
      for (let i = 1; i < two.length; i++) {
        const [p, q] = [key(two[i - 1]!), key(two[i]!)];
        const sameFirst = JSON.stringify(p[0]) === JSON.stringify(q[0]);
        if (sameFirst && (p[1] as number) > (q[1] as number)) mismatches.push({ sort: [flag.name, "id"], at: i });
      }
      if (!ordered(flag.type, two.map((r) => flag.read(r)), "desc")) mismatches.push({ sort: [flag.name, "id"], order: "first key" });
    } else mismatches.push({ sort: [flag.name, "id"], status: two.status });
    expect(mismatches).toEqual([]);
  });

  test("search {value, case_sensitive: false}: rows with the value in any text column", async () => {
    const texts = s.columns.filter((c) => (c.type === "string" || c.type === "text") && !c.name.includes("."));
    const source = texts.map((c) => s.mine[0]![c.name]).find((v) => typeof v === "string" && v.length > 3) as string | undefined;
    if (!source) return;
    const token = source.slice(1, -1);
    const want = sortedIds(s.all.filter((r) => texts.some((c) => typeof r[c.name] === "string" && (r[c.name] as string).toLowerCase().includes(token.toLowerCase()))));
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
      const parameters = scope.parameters === undefined ? ["1"] : Array.from({ length: scope.parameters }, (_, i) => (i === 0 ? "2000-01-01" : "2100-01-01"));
      const inScope = await delegate(h.db.prisma, def.model).findMany({
        where: { AND: [scope.where(parameters, {} as never), { accountId: s.accountId }] }, select: { id: true },
      });
      const ids = new Set(inScope.map((r: Row) => r.id));
      const got = await search(s, op, { scopes: [{ name, parameters }] });
      expect(Array.isArray(got) ? sortedIds(got) : got, name).toEqual(sortedIds(s.all.filter((r) => ids.has(r.id))));
      if (scope.parameters) rejected(await s.api.post(pathOf(op, s.params), { scopes: [{ name, parameters: [] }] }), ["scopes.0.parameters"], name);
    }
    rejected(await s.api.post(pathOf(op, s.params), { scopes: [{ name: "noSuchScope" }] }), ["scopes.0.name"]);
  });

  test("includes, page and limit in the body", async () => {
    const includes = op.includes.filter((i) => !i.includes("*")).slice(0, h.config.includeMaxCount);
    const withIncludes = await search(s, op, { includes: includes.map((relation) => ({ relation })) });
    expect(Array.isArray(withIncludes), JSON.stringify(withIncludes)).toBe(true);
    for (const row of withIncludes as Row[]) for (const relation of includes) expect(row, relation).toHaveProperty(relation.split(".")[0]!);
    // The list read at set-up holds every row in the default order: page 2 of size 1 is its second row.
    const second = [s.all[1]?.id].filter((id) => id !== undefined);
    const r = await s.api.post(pathOf(op, s.params), { page: 2, limit: 1, includes: s.bodyIncludes });
    expect(data(r).map((x: Row) => x.id)).toEqual(second);
    expect(r.body.meta).toMatchObject({ current_page: 2, per_page: 1, total: s.all.length });
    if (!leader) return;
    const q = await s.api.post(pathOf(op, s.params, "limit=1&page=2"), {});
    expect(data(q).map((x: Row) => x.id)).toEqual(second);
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
      [{ filters: [{ field: "id", value: 1 }, { type: "or", nested: [{ field: "id", value: 1 }, { field: "nope", value: 1 }] }] }, ["filters.1.nested.1.field"]],
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
    for (const [body, keys] of relevant) rejected(await s.api.post(pathOf(op, s.params), body), keys, JSON.stringify(body));
    if (!leader) return;
    const aggregates = await s.api.post(pathOf(op, s.params), { aggregates: [{ relation: "x", type: "count" }] });
    expect(aggregates.status).toBe(422);
    expect((await s.api.post(pathOf(op, s.params), { filters: [], sort: [], scopes: [], search: { value: null } })).status).toBe(200);
    if (op.parent) expect((await s.api.post(pathOf(op, { ...s.params, [op.parent.def.param]: BAD_ID }), {})).status).toBe(404);
  });

  test("the GraphQL list field takes the same filters, sort, scopes and search and returns the same rows", async () => {
    const field = getSchema().getQueryType()!.getFields()[op.field]!;
    const pivot = pivotOf(op);
    const vars: Record<string, unknown> = { ...s.params };
    const mineIds = s.mine.map((m) => m.id);
    const scopeName = Object.keys(def.scopes ?? {})[0];
    const scope = scopeName ? def.scopes![scopeName]! : undefined;
    const body = {
      filters: [{ field: "id", operator: "in", value: mineIds }, { type: "or", nested: [{ field: "created_at", operator: ">=", value: "2000-01-01" }, { field: "id", operator: "!=", value: BAD_ID }] }],
      sort: [{ field: "created_at", direction: "desc" }],
      search: { value: "", case_sensitive: false },
      scopes: scope && scope.parameters === 2 ? [{ name: scopeName, parameters: ["2000-01-01", "2100-01-01"] }] : [],
      limit: 100,
    };
    Object.assign(vars, { filters: body.filters, sort: body.sort, scopes: body.scopes, search: { value: "", caseSensitive: false }, limit: 100 });
    const declared = field.args.filter((a) => a.name in vars);
    const signature = declared.map((a) => `$${a.name}: ${String(a.type)}`).join(", ");
    const args = declared.map((a) => `${a.name}: $${a.name}`).join(", ");
    const node = pivot ? `${pivot.related} { id }` : "id";
    const gql = await s.api.graphql(`query Parity(${signature}) { result: ${op.field}(${args}) { totalCount nodes { ${node} } } }`, vars);
    expect(gql.body.errors, JSON.stringify(gql.body.errors)).toBeUndefined();
    const rest = await s.api.post(pathOf(op, s.params), body);
    const restRows = data(rest, "REST search");
    const nodes = gql.body.data.result.nodes as Row[];
    expect(nodes.map((n) => (pivot ? n[pivot.related].id : n.id))).toEqual(restRows.map((r: Row) => r.id));
    expect(gql.body.data.result.totalCount).toBe(rest.body.meta.total);
    expect(declared.map((a) => getNamedType(a.type).name).sort()).toEqual(
      expect.arrayContaining(["FilterInput", "ScopeInput", "SearchInput", "SortInput"]),
    );
    expect(declared.filter((a) => isNonNullType(a.type)).map((a) => a.name).sort()).toEqual(Object.keys(s.params).sort());
  });
});

describe("operator details, on the first searchable resource with a text column", () => {
  const op = searches.find((o) => !o.parent && sibling(o, "create") && Object.values(o.def.fields).some((f) => f.type === "string" && !f.pattern && !f.oneOf && f.required))!;
  const column = Object.entries(op.def.fields).find(([, f]) => f.type === "string" && !f.pattern && !f.oneOf && f.required)![0];
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
  const ids = (got: Row[] | { status: number }) => (Array.isArray(got) ? sortedIds(got).filter((id) => rows.some((r) => r.id === id)) : got);
  const named = (...texts: string[]) => sortedIds(rows.filter((r) => texts.includes(r[key])));

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
    expect(ids(await search(s, op, { search: { value: "alpha", case_sensitive: true } }))).toEqual(named("alphaXbravo"));
    expect(ids(await search(s, op, { search: { value: "ALPHA", case_sensitive: true } }))).toEqual(named("ALPHA BRAVO 100%"));
    expect(ids(await search(s, op, { search: { value: "ALPHA", case_sensitive: false } }))).toEqual(named("Alpha_Bravo", "alphaXbravo", "ALPHA BRAVO 100%"));
  });

  test("= on text is exact and case-sensitive; != excludes it; in takes a list", async () => {
    expect(ids(await search(s, op, { filters: [{ field: key, value: "charlie" }] }))).toEqual(named("charlie"));
    expect(ids(await search(s, op, { filters: [{ field: key, value: "Charlie" }] }))).toEqual([]);
    expect(ids(await search(s, op, { filters: [{ field: key, operator: "!=", value: "charlie" }] }))).toEqual(named("Alpha_Bravo", "alphaXbravo", "ALPHA BRAVO 100%"));
    expect(ids(await search(s, op, { filters: [{ field: key, operator: "in", value: ["charlie", "alphaXbravo"] }] }))).toEqual(named("charlie", "alphaXbravo"));
  });
});
