/**
 * Account isolation on every operation of the catalogue (src/resources/operations.ts), over REST and
 * GraphQL. Two accounts get the same organisation (test/support/world.ts); every string account B
 * writes carries the marker "bravosecret". With a `*` key of account A, B's ids are put where ids go:
 *
 * - path ids (each parameter in turn, then all of them) → 404; GraphQL: a read is null, as a missing row is, anything else NOT_FOUND;
 * - foreign keys of create/update/batch bodies, link columns that reference rows, polymorphic owners
 *   (`model_type`/`model_id`) → 422 naming the attribute, exactly as for an id that exists nowhere;
 * - `resources` of attach/detach/sync/toggle/batch update/batch delete, `related_key` of associate →
 *   404 or 422, exactly as for an id that exists nowhere;
 * - search filters on `id` (and a text search for the marker) → 200 with no rows;
 * - reads of A's own rows with every include → no row of B embedded.
 *
 * No response may contain the marker, and B's rows, table by table, are the same afterwards.
 * Everything runs once in `beforeAll`; each test asserts one list of problems, so a failure lists
 * every operation that misbehaves.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ResourceDef } from "../src/resources/define.ts";
import { resourceNamed } from "../src/resources/index.ts";
import { operations, pivotOf, type Operation } from "../src/resources/operations.ts";
import { morphOwnersOf } from "../src/graphql/objects.ts";
import { snake } from "../src/graphql/names.ts";
import { startHarness, type Client, type Harness, type Reply } from "./harness.ts";
import { World } from "./support/world.ts";
import { groupOf, planSeeded, seededParams, urlOf, type Planned } from "./support/plans.ts";
import { fixedColumns, pathOf } from "./support/registry.ts";
import { gqlCode, graphqlRequest, relationFieldsOf, sendGraphql } from "./support/graphql.ts";
import { accountIdOf, accountRows } from "./support/account-rows.ts";

const MARK = "bravosecret";
/** An id no row of any table has. */
const MISSING = 2147483000;
const opName = (op: Operation) => `${op.method} ${op.path}`;

let h: Harness;
let A: World;
let B: World;
let a: Client;
let bRowsBefore: Record<string, unknown[]>;
let bRowsAfter: Record<string, unknown[]>;
let sanity: { bSeesOwnMarker: boolean };

const problems = {
  leaks: [] as string[],
  pathIds: [] as string[],
  bodyIds: [] as string[],
  linkIds: [] as string[],
  search: [] as string[],
  includes: [] as string[],
  gqlPathIds: [] as string[],
  gqlBodyIds: [] as string[],
  gqlLinkIds: [] as string[],
  gqlSearch: [] as string[],
  gqlIncludes: [] as string[],
  serverErrors: [] as string[],
};
const counts = { rest: 0, graphql: 0, pathProbes: 0, bodyProbes: 0, linkProbes: 0, searchProbes: 0, includeReads: 0 };
const covered = new Set<Operation>();

const brief = (r: Reply) => `${r.status} ${JSON.stringify(r.body?.error ?? r.body?.errors?.[0] ?? r.body).slice(0, 200)}`;

/** Sends over REST and checks what every reply must satisfy: no marker, no 5xx. */
async function rest(what: string, method: string, url: string, body?: unknown): Promise<Reply> {
  const r = await a.send(method, url, body);
  counts.rest++;
  if (JSON.stringify(r.body ?? "").includes(MARK)) problems.leaks.push(`${what}: ${method} ${url} → ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  if (r.status >= 500) problems.serverErrors.push(`${what}: ${method} ${url} → ${brief(r)}`);
  return r;
}

/** The same operation through /graphql (uploads left out), with the same checks. */
async function gql(what: string, op: Operation, params: Record<string, number>, body: unknown, includes: readonly string[] = []): Promise<Reply> {
  const r = await sendGraphql(a, graphqlRequest(h.app.schema, op, params, body, { includes, files: false }));
  counts.graphql++;
  if (JSON.stringify(r.body ?? "").includes(MARK)) problems.leaks.push(`${what} (GraphQL ${op.field}) → ${JSON.stringify(r.body).slice(0, 300)}`);
  if (gqlCode(r) === "INTERNAL" || r.status >= 500) problems.serverErrors.push(`${what} (GraphQL ${op.field}) → ${brief(r)}`);
  return r;
}

/** Error body with both probe ids written as <id>, for comparing a foreign id with a missing one. */
const normalised = (r: Reply, ...ids: number[]) => {
  let text = JSON.stringify({ errors: r.body?.error?.errors ?? null, message: r.body?.error?.message ?? null });
  for (const id of ids) text = text.replace(new RegExp(`(?<!\\d)${id}(?!\\d)`, "g"), "<id>");
  return `${r.status} ${text}`;
};

/** The id of B's row an operation addresses: the child of a nested route's seeded pair, or the seeded row. */
const bRowOf = (op: Operation) => {
  const g = groupOf(op);
  return g ? B.pair(g).child : B.id(op.def);
};

// ── 1. Path ids ───────────────────────────────────────────────────────────────────────────────────

async function pathProbes(op: Operation, base: Planned): Promise<void> {
  const own = base.params;
  const names = Object.keys(own);
  if (!names.length) return;
  const theirs = seededParams(op, B);
  // One id of B at a time, then all of them; with a parent and a child, B's parent fails as "every id of B" does, so only the child is swapped alone.
  const variants = names.length > 1
    ? [{ label: `{${names.at(-1)}} of B`, params: { ...own, [names.at(-1)!]: theirs[names.at(-1)!]! } }, { label: "every id of B", params: theirs }]
    : [{ label: `{${names[0]}} of B`, params: theirs }];
  for (const v of variants) {
    counts.pathProbes++;
    const what = `${opName(op)} ${v.label}`;
    const r = await rest(what, op.method, pathOf(op, v.params, base.query), base.body);
    if (r.status !== 404 || r.body?.error?.type !== "NotFoundHttpException") problems.pathIds.push(`${what} → ${brief(r)}`);
  }
  // GraphQL runs the same resolver: once per root field, with every id of B.
  const last = variants.at(-1)!;
  const g = await gql(`${opName(op)} ${last.label}`, op, last.params, base.body);
  // A single row read of B's is null with no error, as a missing row is; a write, or a list under B's parent, is NOT_FOUND.
  const isolated = op.kind === "show" ? g.status === 200 && g.body?.data?.result === null && !g.body?.errors : gqlCode(g) === "NOT_FOUND";
  if (!isolated) problems.gqlPathIds.push(`${opName(op)} ${last.label} → ${brief(g)}`);
}

// ── 2. Ids in bodies: foreign keys, link columns, polymorphic owners ─────────────────────────────

/** The body of `op` with `attrs` set on the (first) row it writes; `pivot` sets link columns instead. */
function bodyWith(op: Operation, base: Planned, attrs: Record<string, unknown>, pivot = false): unknown {
  const body = structuredClone(base.body) as any;
  const apply = (item: Record<string, unknown>) => (pivot ? { ...item, pivot: { ...(item.pivot as object), ...attrs } } : { ...item, ...attrs });
  switch (op.kind) {
    case "create":
      return apply(body);
    case "update":
      return pivot ? { pivot: attrs } : attrs;
    case "batchCreate":
      return { resources: [apply(body.resources[0])] };
    case "batchUpdate": {
      const [id] = Object.keys(body.resources);
      return { resources: { [id!]: pivot ? { pivot: attrs } : attrs } };
    }
    case "pivot":
      return { pivot: attrs };
    case "attach":
    case "sync":
      return { resources: { [A.id(op.def)]: attrs }, ...(op.kind === "sync" ? { detaching: false } : {}) };
  }
  throw new Error(`${op.field}: no body to put ids in`);
}

interface BodyProbe {
  label: string;
  /** Attributes (REST names) carrying B's ids, and the same with ids that exist nowhere. */
  foreign: Record<string, unknown>;
  missing: Record<string, unknown>;
  pivot?: boolean;
  /** Error keys that may name the problem (the last segment of `resources.0.rank_id`). */
  keys: string[];
}

const morphTurns = new Map<string, number>();
const fkTurns = new Map<string, number>();
const morphOf = (def: ResourceDef) => {
  const rel = Object.values(def.relations).find((r) => r.kind === "morphTo");
  return rel?.kind === "morphTo" && def.fields.modelType && def.fields.modelId ? rel : undefined;
};

function bodyProbes(op: Operation): BodyProbe[] {
  const probes: BodyProbe[] = [];
  const g = groupOf(op);
  const fixed = g ? fixedColumns(g) : [];
  if (["create", "update", "batchCreate", "batchUpdate"].includes(op.kind)) {
    // Every foreign key on creates; on updates and batches, one per operation in turn (the same validation runs for all).
    const fks = Object.entries(op.def.fields).filter(([name, f]) => f.references && f.writable !== false && !f.hidden && !fixed.includes(name));
    const turn = (fkTurns.get(op.def.name) ?? 0);
    if (op.kind !== "create" && fks.length) fkTurns.set(op.def.name, turn + 1);
    for (const [name, f] of op.kind === "create" ? fks : fks.slice(turn % Math.max(fks.length, 1)).slice(0, 1)) {
      const key = snake(name);
      probes.push({ label: key, foreign: { [key]: B.id(resourceNamed(f.references!)) }, missing: { [key]: MISSING }, keys: [key] });
    }
    const morph = morphOf(op.def);
    if (morph && !fixed.includes("modelType")) {
      // One owner type per operation, taking turns, so that every owner type is tried on every resource.
      const owners = morphOwnersOf(morph.morphRelation).filter((o) => B.rows.has(o.name));
      const turn = (morphTurns.get(op.def.name) ?? 0) % owners.length;
      morphTurns.set(op.def.name, turn + 1);
      for (const owner of [owners[turn]!]) {
        probes.push({
          label: `model ${owner.name}`, keys: ["model_id", "model_type"],
          foreign: { model_type: owner.morphClass, model_id: B.id(owner) }, missing: { model_type: owner.morphClass, model_id: MISSING },
        });
      }
    }
  }
  const pivot = pivotOf(op);
  if (pivot && ["create", "update", "batchCreate", "batchUpdate", "attach", "sync", "pivot"].includes(op.kind)) {
    for (const [name, f] of Object.entries(pivot.fields)) {
      if (!f.references) continue;
      const key = snake(name);
      probes.push({ label: `pivot ${key}`, pivot: true, foreign: { [key]: B.id(resourceNamed(f.references)) }, missing: { [key]: MISSING }, keys: [key] });
    }
  }
  return probes;
}

async function bodyIdProbes(op: Operation, base: Planned): Promise<void> {
  for (const [index, p] of bodyProbes(op).entries()) {
    counts.bodyProbes++;
    const what = `${opName(op)} ${p.label} of B`;
    const url = urlOf(base);
    const foreign = bodyWith(op, base, p.foreign, p.pivot);
    const r = await rest(what, op.method, url, foreign);
    const twin = await rest(`${what} (missing id)`, op.method, url, bodyWith(op, base, p.missing, p.pivot));
    const keys = Object.keys(r.body?.error?.errors ?? {});
    const named = keys.some((k) => p.keys.includes(k.split(".").at(-1)!));
    const ids = Object.values(p.foreign).filter((v): v is number => typeof v === "number");
    if (r.status !== 422 || !named) problems.bodyIds.push(`${what} → ${brief(r)}`);
    else if (normalised(r, ...ids) !== normalised(twin, MISSING)) problems.bodyIds.push(`${what}: ${normalised(r, ...ids)} differs from a missing id's ${normalised(twin, MISSING)}`);
    // GraphQL validates inputs with the same code: the first probe of each root field.
    if (index > 0) continue;
    const g = await gql(what, op, base.params, foreign);
    if (gqlCode(g) !== "VALIDATION") problems.gqlBodyIds.push(`${what} → ${brief(g)}`);
  }
}

// ── 3. Ids of B in `resources` and `related_key` ──────────────────────────────────────────────────

function linkBody(op: Operation, id: number, base: Planned): unknown | undefined {
  switch (op.kind) {
    case "attach":
    case "detach":
    case "toggle":
    case "batchDelete":
      return { resources: [id] };
    case "sync":
      return { resources: [id], detaching: false };
    case "batchUpdate": {
      const [own] = Object.keys((base.body as any).resources);
      return { resources: { [id]: (base.body as any).resources[own!] } };
    }
    case "associate":
      return { related_key: id };
  }
  return undefined;
}

async function linkIdProbes(op: Operation, base: Planned): Promise<void> {
  const theirs = bRowOf(op);
  const foreign = linkBody(op, theirs, base);
  if (foreign === undefined) return;
  counts.linkProbes++;
  const what = `${opName(op)} ${op.kind === "associate" ? "related_key" : "resources"} of B`;
  const url = urlOf(base);
  const r = await rest(what, op.method, url, foreign);
  const twin = await rest(`${what} (missing id)`, op.method, url, linkBody(op, MISSING, base));
  if (r.status !== 404 && r.status !== 422) problems.linkIds.push(`${what} → ${brief(r)}`);
  else if (normalised(r, theirs) !== normalised(twin, MISSING)) problems.linkIds.push(`${what}: ${normalised(r, theirs)} differs from a missing id's ${normalised(twin, MISSING)}`);
  const g = await gql(what, op, base.params, foreign);
  const expected = r.status === 404 ? "NOT_FOUND" : "VALIDATION";
  if (gqlCode(g) !== expected) problems.gqlLinkIds.push(`${what} → ${brief(g)} (REST said ${r.status})`);
}

// ── 4. Search ─────────────────────────────────────────────────────────────────────────────────────

async function searchProbes(op: Operation, base: Planned): Promise<void> {
  if (op.kind !== "search") return;
  const theirs = bRowOf(op);
  const bodies: Array<[string, unknown]> = [
    ["id = B's row", { filters: [{ field: "id", operator: "=", value: theirs }] }],
    ["id in B's rows", { filters: [{ field: "id", operator: "in", value: [...new Set([theirs, ...(bRowsBefore[op.def.model] ?? []).map((r: any) => r.id as number)])] }] }],
    [`text search for "${MARK}"`, { search: { value: MARK } }],
  ];
  for (const [label, body] of bodies) {
    counts.searchProbes++;
    const what = `${opName(op)} ${label}`;
    const r = await rest(what, op.method, urlOf(base), body);
    const searchable = !label.startsWith("text") || r.status !== 422;
    if (searchable && (r.status !== 200 || r.body.data.length !== 0)) problems.search.push(`${what} → ${brief(r)}`);
    const g = await gql(what, op, base.params, body);
    if (searchable && (g.body.errors || g.body.data?.result?.nodes?.length !== 0)) problems.gqlSearch.push(`${what} → ${brief(g)}`);
  }
}

// ── 5. Reads of A's own rows with every include ───────────────────────────────────────────────────

/** Too many relations at once is refused as too costly a query (422): such groups are read in halves. */
const tooLarge = (message: unknown) => typeof message === "string" && /too large|limit of \d+ exceeded/i.test(message);

async function restIncludeRead(op: Operation, base: Planned, values: string[]): Promise<void> {
  counts.includeReads++;
  const query = values.length ? `include=${values.map(encodeURIComponent).join(",")}` : "";
  const what = `${opName(op)} ${query || "(no include)"}`;
  const r = await rest(what, op.method, urlOf(base, query), base.body);
  if (r.status === 422 && values.length > 1 && tooLarge(r.body?.error?.message)) {
    const half = Math.ceil(values.length / 2);
    await restIncludeRead(op, base, values.slice(0, half));
    await restIncludeRead(op, base, values.slice(half));
  } else if (r.status !== 200) problems.includes.push(`${what} → ${brief(r)}`);
}

async function gqlRelationRead(op: Operation, base: Planned, relations: string[]): Promise<void> {
  counts.includeReads++;
  const what = `${opName(op)} selecting ${relations.join(",") || "scalars"}`;
  const r = await sendGraphql(a, graphqlRequest(h.app.schema, op, base.params, base.body, { relations, files: false }));
  counts.graphql++;
  if (JSON.stringify(r.body ?? "").includes(MARK)) problems.leaks.push(`${what} (GraphQL ${op.field}) → ${JSON.stringify(r.body).slice(0, 300)}`);
  if (r.body?.errors && relations.length > 1 && tooLarge(r.body.errors[0].message)) {
    const half = Math.ceil(relations.length / 2);
    await gqlRelationRead(op, base, relations.slice(0, half));
    await gqlRelationRead(op, base, relations.slice(half));
  } else if (r.body?.errors || !r.body?.data?.result) problems.gqlIncludes.push(`${what} → ${brief(r)}`);
}

/**
 * A's own rows read with every include (REST), and through GraphQL with every relation field two levels
 * deep. A search runs its list's root field, and a show selects what its list selects: GraphQL reads
 * the lists (and views) only, REST every read but searches.
 */
async function includeReads(op: Operation, base: Planned): Promise<void> {
  if (op.root !== "query" || op.kind === "search") return;
  const values = op.includes.filter((v) => v.split(".").length <= (h.config.includeMaxDepth ?? Infinity));
  const count = h.config.includeMaxCount ?? Infinity;
  for (let i = 0; i < Math.max(values.length, 1); i += count) await restIncludeRead(op, base, values.slice(i, i + count));
  if (op.kind === "list") await gqlRelationRead(op, base, relationFieldsOf(h.app.schema, op));
}

async function probe(op: Operation): Promise<void> {
  const base = await planSeeded(op, A);
  await includeReads(op, base);
  await pathProbes(op, base);
  await bodyIdProbes(op, base);
  await linkIdProbes(op, base);
  await searchProbes(op, base);
  covered.add(op);
}

beforeAll(async () => {
  const started = Date.now();
  // Every relation two levels deep is far over the worst-case row budget (test/bounded.test.ts tests that); what
  // is checked here is whose rows come back, so the budget is out of the way.
  h = await startHarness({ rateLimitPerMinute: 1_000_000_000, graphqlMaxComplexity: 100_000_000 } as object);
  // A scratch database: durability is not what this file tests. (PostgreSQL test databases are created with
  // synchronous_commit off.)
  if (h.db.provider === "sqlite") await h.db.prisma.$executeRawUnsafe("PRAGMA synchronous = OFF");
  A = await new World(h, "alpha", "alphaplain").seed();
  B = await new World(h, MARK, MARK).seed();
  a = await A.client("*");
  const bAccount = await accountIdOf(h.db.prisma, MARK);
  bRowsBefore = await accountRows(h.db.prisma, bAccount);
  const seeded = Date.now();
  const cpu = process.cpuUsage();

  // The marker is visible to B itself, so its absence from A's replies means something.
  const bUser = await (await B.client("*")).get(`/v2/users/${B.id(resourceNamed("user"))}`);
  sanity = { bSeesOwnMarker: JSON.stringify(bUser.body).includes(MARK) };

  for (const op of operations) await probe(op);
  bRowsAfter = await accountRows(h.db.prisma, bAccount);
  console.log(
    `isolation matrix: ${operations.length} operations, ${counts.rest} REST and ${counts.graphql} GraphQL requests in ${Date.now() - seeded} ms`
      + ` (${Math.round(process.cpuUsage(cpu).user / 1000)} ms CPU; seed ${seeded - started} ms): ${JSON.stringify(counts)}`,
  );
}, 180_000);
afterAll(() => h?.close());

describe(`account isolation on every operation of the catalogue (${operations.length})`, () => {
  test("every operation was probed, and B's marker is in what B itself reads", () => {
    expect(covered.size).toBe(operations.length);
    expect(sanity.bSeesOwnMarker).toBe(true);
    expect(Object.values(bRowsBefore).flat().length).toBeGreaterThan(100);
  });
  test("no reply to A, REST or GraphQL, contains anything of B's", () => {
    expect(problems.leaks).toEqual([]);
  });
  test("no probe is answered 5xx", () => {
    expect(problems.serverErrors).toEqual([]);
  });
  test("B's ids in the path: 404", () => {
    expect(problems.pathIds).toEqual([]);
  });
  test("B's ids as foreign keys (all on creates, one per update or batch in turn), link columns and polymorphic owners (one owner type per operation, in turn) in bodies: 422 naming the attribute, as for a missing id", () => {
    expect(problems.bodyIds).toEqual([]);
  });
  test("B's ids in resources and related_key: 404 or 422, as for a missing id", () => {
    expect(problems.linkIds).toEqual([]);
  });
  test("searches for B's ids or B's text: 200 and no rows", () => {
    expect(problems.search).toEqual([]);
  });
  test("A's reads (lists, shows, views) with every include succeed (and, above, embed nothing of B's)", () => {
    expect(problems.includes).toEqual([]);
  });
  test("GraphQL: B's ids as arguments (all of them, each root field) → null for a read, NOT_FOUND otherwise", () => {
    expect(problems.gqlPathIds).toEqual([]);
  });
  test("GraphQL: B's ids in inputs (first probe of each root field) → VALIDATION", () => {
    expect(problems.gqlBodyIds).toEqual([]);
  });
  test("GraphQL: B's ids in resources and relatedKey → the same as REST", () => {
    expect(problems.gqlLinkIds).toEqual([]);
  });
  test("GraphQL: searches for B's ids or text → no rows", () => {
    expect(problems.gqlSearch).toEqual([]);
  });
  test("GraphQL: A's lists selecting every relation field, two levels deep, succeed", () => {
    expect(problems.gqlIncludes).toEqual([]);
  });
  test("B's rows are unchanged, table by table", () => {
    for (const table of Object.keys(bRowsBefore)) expect(bRowsAfter[table], table).toEqual(bRowsBefore[table]);
  });
});
