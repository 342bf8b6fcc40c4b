/**
 * Account isolation on every operation of the catalogue (src/resources/operations.ts), over REST and
 * GraphQL. Two accounts get the same organisation (test/support/world.ts); every string account B
 * writes carries the marker "bravosecret". With a `*` key of account A, B's ids are put where ids go:
 *
 * - path ids (each parameter in turn, then all of them) → 404;
 * - foreign keys of create/update/batch bodies, link columns that reference rows, polymorphic owners
 *   (`model_type`/`model_id`) → 422 naming the attribute, exactly as for an id that exists nowhere;
 * - `resources` of attach/detach/sync/toggle/batch update/batch delete, `related_key` of associate →
 *   404 or 422, exactly as for an id that exists nowhere;
 * - search filters on `id` (and a text search for the marker) → 200 with no rows;
 * - reads of A's own rows with every include → no row of B embedded.
 *
 * The public graph (`/graphql`) is probed through the root field that does what each operation does
 * (test/support/graphql.ts): B's row ids in lookups, `node(id:)` and `nodes(ids:)`, and parents of nested
 * connections → null, as a missing row is; in update/delete/link mutations → NOT_FOUND; as foreign keys, link
 * columns and owners in inputs → VALIDATION; in link items → what REST says; `where` on B's ids or text, directly or
 * through every relation a connection filters on (`users(where: { rankRecords: { some: ... } })`) → no rows; A's
 * connections read with every relation two levels deep → nothing of B's.
 *
 * No response may contain the marker, and B's rows, table by table, are the same afterwards.
 * Everything runs once in `beforeAll`; each test asserts one list of problems, so a failure lists
 * every operation that misbehaves.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ResourceDef } from "../src/resources/define.ts";
import { resourceNamed, resources } from "../src/resources/index.ts";
import { operations as catalogue, pivotOf, type Operation } from "../src/resources/operations.ts";
/** Every operation that takes a credential: the public forms' need none (test/public-forms.test.ts covers them). */
const operations = catalogue.filter((op) => !op.anonymous);
import { morphOwnersOf } from "../src/resources/index.ts";
import { camel, pascal, snake } from "../src/core/names.ts";
import { startHarness, type Client, type Harness, type Reply } from "./harness.ts";
import { World } from "./support/world.ts";
import { groupOf, planSeeded, seededParams, urlOf, type Planned } from "./support/plans.ts";
import { fixedColumns, pathOf } from "./support/registry.ts";
import {
  globalId,
  gqlCode,
  publicFieldOf,
  publicRequest,
  publicRootOperations,
  relationFieldsOfType,
  relationFiltersOf,
  resultRows,
  rowTypeOf,
  selectionOf,
  sendGraphql,
  stringColumnsOf,
  type PublicRequest,
  type RequestOptions,
} from "./support/graphql.ts";
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
  gqlNodes: [] as string[],
  gqlRelationWhere: [] as string[],
  serverErrors: [] as string[],
};
const counts = {
  rest: 0,
  graphql: 0,
  pathProbes: 0,
  bodyProbes: 0,
  linkProbes: 0,
  searchProbes: 0,
  includeReads: 0,
  gqlPathProbes: 0,
  gqlBodyProbes: 0,
  gqlLinkProbes: 0,
  gqlSearchProbes: 0,
  gqlNodeProbes: 0,
  gqlRelationWhereProbes: 0,
};
/** Operations that have a public root field doing what they do (the others are REST-only: nested writes, pivots...). */
const publicOps = new Set<Operation>();
const covered = new Set<Operation>();

const brief = (r: Reply) =>
  `${r.status} ${JSON.stringify(r.body?.error ?? r.body?.errors?.[0] ?? r.body).slice(0, 200)}`;

/** Sends over REST and checks what every reply must satisfy: no marker, no 5xx. */
async function rest(what: string, method: string, url: string, body?: unknown): Promise<Reply> {
  const r = await a.send(method, url, body);
  counts.rest++;
  if (JSON.stringify(r.body ?? "").includes(MARK))
    problems.leaks.push(`${what}: ${method} ${url} → ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  if (r.status >= 500) problems.serverErrors.push(`${what}: ${method} ${url} → ${brief(r)}`);
  return r;
}

/** A public request doing what `op` does (uploads as a multipart request), or undefined for a REST-only operation. */
const request = (op: Operation, params: Record<string, number>, body: unknown, options: RequestOptions = {}) =>
  publicRequest(h.app.schema, op, params, body, options);

/** Sends to /graphql with A's key, with the same checks as `rest`. */
async function gql(what: string, req: PublicRequest): Promise<Reply> {
  const r = await sendGraphql(a, req);
  counts.graphql++;
  if (JSON.stringify(r.body ?? "").includes(MARK))
    problems.leaks.push(`${what} (GraphQL ${req.field}) → ${JSON.stringify(r.body).slice(0, 300)}`);
  if (gqlCode(r) === "INTERNAL" || r.status >= 500)
    problems.serverErrors.push(`${what} (GraphQL ${req.field}) → ${brief(r)}`);
  return r;
}

/** A read answered null, with no error: what a missing row is. */
const isNullRead = (r: Reply) => r.status === 200 && !r.body?.errors && r.body?.data?.result === null;
/** A read answered with no rows and no error. */
const isEmptyRead = (r: Reply) => r.status === 200 && !r.body?.errors && resultRows(r)?.length === 0;

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
  const variants =
    names.length > 1
      ? [
          { label: `{${names.at(-1)}} of B`, params: { ...own, [names.at(-1)!]: theirs[names.at(-1)!] } },
          { label: "every id of B", params: theirs },
        ]
      : [{ label: `{${names[0]}} of B`, params: theirs }];
  for (const v of variants) {
    counts.pathProbes++;
    const what = `${opName(op)} ${v.label}`;
    const r = await rest(what, op.method, pathOf(op, v.params, base.query), base.body);
    if (r.status !== 404 || r.body?.error?.type !== "NotFoundHttpException")
      problems.pathIds.push(`${what} → ${brief(r)}`);
  }
  // The public field doing the same, with every id of B: a lookup (a row, a nested connection's parent) is null with no
  // error, as a missing row is; a mutation is NOT_FOUND.
  const last = variants.at(-1)!;
  const req = request(op, last.params, base.body);
  if (!req) return;
  counts.gqlPathProbes++;
  const what = `${opName(op)} ${last.label} (${req.field})`;
  const g = await gql(what, req);
  const isolated = req.root === "query" ? isNullRead(g) : gqlCode(g) === "NOT_FOUND";
  if (!isolated) problems.gqlPathIds.push(`${what} → ${brief(g)}`);
  // A's own row through the same field is found: the null above is B's id, not a broken request.
  if (req.root === "query") {
    const mine = await gql(`${opName(op)} A's ids (${req.field})`, request(op, own, base.body)!);
    if (mine.body?.errors || mine.body?.data?.result == null)
      problems.gqlPathIds.push(`${opName(op)} A's own ids (${req.field}) → ${brief(mine)}`);
  }
}

// ── 2. Ids in bodies: foreign keys, link columns, polymorphic owners ─────────────────────────────

/** The body of `op` with `attrs` set on the (first) row it writes; `pivot` sets link columns instead. */
function bodyWith(op: Operation, base: Planned, attrs: Record<string, unknown>, pivot = false): unknown {
  const body = structuredClone(base.body) as Record<string, unknown> & { resources: Array<Record<string, unknown>> };
  const apply = (item: Record<string, unknown>) =>
    pivot ? { ...item, pivot: { ...(item.pivot as object), ...attrs } } : { ...item, ...attrs };
  switch (op.kind) {
    case "create":
      return apply(body);
    case "update":
      return pivot ? { pivot: attrs } : attrs;
    case "batchCreate":
      return { resources: [apply(body.resources[0])] };
    case "batchUpdate": {
      const [id] = Object.keys(body.resources);
      return { resources: { [id]: pivot ? { pivot: attrs } : attrs } };
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
    const fks = Object.entries(op.def.fields).filter(
      ([name, f]) => f.references && f.writable !== false && !f.hidden && !fixed.includes(name),
    );
    const turn = fkTurns.get(op.def.name) ?? 0;
    if (op.kind !== "create" && fks.length) fkTurns.set(op.def.name, turn + 1);
    for (const [name, f] of op.kind === "create" ? fks : fks.slice(turn % Math.max(fks.length, 1)).slice(0, 1)) {
      const key = snake(name);
      probes.push({
        label: key,
        foreign: { [key]: B.id(resourceNamed(f.references!)) },
        missing: { [key]: MISSING },
        keys: [key],
      });
    }
    const morph = morphOf(op.def);
    if (morph && !fixed.includes("modelType")) {
      // One owner type per operation, taking turns, so that every owner type is tried on every resource.
      const owners = morphOwnersOf(morph.morphRelation).filter((o) => B.rows.has(o.name));
      const turn = (morphTurns.get(op.def.name) ?? 0) % owners.length;
      morphTurns.set(op.def.name, turn + 1);
      for (const owner of [owners[turn]]) {
        probes.push({
          label: `model ${owner.name}`,
          keys: ["model_id", "model_type"],
          foreign: { model_type: owner.morphClass, model_id: B.id(owner) },
          missing: { model_type: owner.morphClass, model_id: MISSING },
        });
      }
    }
  }
  const pivot = pivotOf(op);
  if (pivot && ["create", "update", "batchCreate", "batchUpdate", "attach", "sync", "pivot"].includes(op.kind)) {
    for (const [name, f] of Object.entries(pivot.fields)) {
      if (!f.references) continue;
      const key = snake(name);
      probes.push({
        label: `pivot ${key}`,
        pivot: true,
        foreign: { [key]: B.id(resourceNamed(f.references)) },
        missing: { [key]: MISSING },
        keys: [key],
      });
    }
  }
  return probes;
}

async function bodyIdProbes(op: Operation, base: Planned): Promise<void> {
  for (const p of bodyProbes(op)) {
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
    else if (normalised(r, ...ids) !== normalised(twin, MISSING))
      problems.bodyIds.push(
        `${what}: ${normalised(r, ...ids)} differs from a missing id's ${normalised(twin, MISSING)}`,
      );
    // The public mutation validates its input with the same rules: VALIDATION, with the same probe's missing id too.
    const req = request(op, base.params, foreign);
    if (!req) continue;
    counts.gqlBodyProbes++;
    const g = await gql(`${what} (${req.field})`, req);
    const gTwin = await gql(
      `${what} (${req.field}, missing id)`,
      request(op, base.params, bodyWith(op, base, p.missing, p.pivot))!,
    );
    // The error names the attribute by its input path (`input.rankId`, `inputs.0.modelId`, `items.0.userId`).
    const gKeys = Object.keys(g.body?.errors?.[0]?.extensions?.errors ?? {});
    const gNamed = gKeys.some((k) => p.keys.map(camel).includes(k.split(".").at(-1)!));
    if (gqlCode(g) !== "VALIDATION" || !gNamed || gqlCode(gTwin) !== "VALIDATION")
      problems.gqlBodyIds.push(`${what} (${req.field}) → ${brief(g)}; missing id → ${brief(gTwin)}`);
  }
}

// ── 3. Ids of B in `resources` and `related_key` ──────────────────────────────────────────────────

function linkBody(op: Operation, id: number, base: Planned): unknown {
  switch (op.kind) {
    case "attach":
    case "detach":
    case "toggle":
    case "batchDelete":
      return { resources: [id] };
    case "sync":
      return { resources: [id], detaching: false };
    case "batchUpdate": {
      const { resources } = base.body as { resources: Record<string, unknown> };
      const [own] = Object.keys(resources);
      return { resources: { [id]: resources[own] } };
    }
    case "associate":
      return { related_key: id };
  }
  return undefined;
}

async function linkIdProbes(op: Operation, base: Planned): Promise<void> {
  // The change feed names no row of B's to link: its reads are probed for B's marker like every other read.
  if (op.kind === "feed") return;
  const theirs = bRowOf(op);
  const foreign = linkBody(op, theirs, base);
  if (foreign === undefined) return;
  counts.linkProbes++;
  const what = `${opName(op)} ${op.kind === "associate" ? "related_key" : "resources"} of B`;
  const url = urlOf(base);
  const r = await rest(what, op.method, url, foreign);
  const twin = await rest(`${what} (missing id)`, op.method, url, linkBody(op, MISSING, base));
  if (r.status !== 404 && r.status !== 422) problems.linkIds.push(`${what} → ${brief(r)}`);
  else if (normalised(r, theirs) !== normalised(twin, MISSING))
    problems.linkIds.push(`${what}: ${normalised(r, theirs)} differs from a missing id's ${normalised(twin, MISSING)}`);
  const req = request(op, base.params, foreign);
  if (!req) return;
  counts.gqlLinkProbes++;
  const g = await gql(`${what} (${req.field})`, req);
  const expected = r.status === 404 ? "NOT_FOUND" : "VALIDATION";
  if (gqlCode(g) !== expected) problems.gqlLinkIds.push(`${what} (${req.field}) → ${brief(g)} (REST said ${r.status})`);
}

// ── 4. Search ─────────────────────────────────────────────────────────────────────────────────────

async function searchProbes(op: Operation, base: Planned): Promise<void> {
  if (op.kind !== "search") return;
  const theirs = bRowOf(op);
  const bodies: Array<[string, unknown]> = [
    ["id = B's row", { filters: [{ field: "id", operator: "=", value: theirs }] }],
    [
      "id in B's rows",
      {
        filters: [
          {
            field: "id",
            operator: "in",
            value: [...new Set([theirs, ...(bRowsBefore[op.def.model] ?? []).map((r) => (r as { id: number }).id)])],
          },
        ],
      },
    ],
    [`text search for "${MARK}"`, { search: { value: MARK } }],
  ];
  for (const [label, body] of bodies) {
    counts.searchProbes++;
    const what = `${opName(op)} ${label}`;
    const r = await rest(what, op.method, urlOf(base), body);
    const searchable = !label.startsWith("text") || r.status !== 422;
    if (searchable && (r.status !== 200 || r.body.data.length !== 0)) problems.search.push(`${what} → ${brief(r)}`);
  }
  // The public connection (the resource's, or the relation of A's parent) with a `where` on B's ids or text.
  const strings = stringColumnsOf(h.app.schema, op.def);
  const ids = [...new Set([theirs, ...(bRowsBefore[op.def.model] ?? []).map((r) => (r as { id: number }).id)])];
  const wheres: Array<[string, unknown]> = [
    ["where rowId equals B's row", { rowId: { equals: theirs } }],
    ["where rowId in B's rows", { rowId: { in: ids } }],
    ...(strings.length
      ? [
          [`where a text column contains "${MARK}"`, { OR: strings.map((c) => ({ [c]: { contains: MARK } })) }] as [
            string,
            unknown,
          ],
        ]
      : []),
  ];
  for (const [label, where] of wheres) {
    const req = request(op, base.params, undefined, { where });
    if (!req) return;
    counts.gqlSearchProbes++;
    const what = `${opName(op)} ${label} (${req.field})`;
    const g = await gql(what, req);
    if (!isEmptyRead(g)) problems.gqlSearch.push(`${what} → ${brief(g)}`);
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
  const req = request(op, base.params, base.body, { select: selectionOf(rowTypeOf(h.app.schema, op), 2, relations) })!;
  const what = `${opName(op)} (${req.field}) selecting ${relations.join(",") || "scalars"}`;
  const r = await gql(what, req);
  if (r.body?.errors && relations.length > 1 && tooLarge(r.body.errors[0].message)) {
    const half = Math.ceil(relations.length / 2);
    await gqlRelationRead(op, base, relations.slice(0, half));
    await gqlRelationRead(op, base, relations.slice(half));
  } else if (r.body?.errors || !resultRows(r)?.length) problems.gqlIncludes.push(`${what} → ${brief(r)}`);
}

/**
 * A's own rows read with every include (REST), and through GraphQL with every relation field two levels
 * deep. A search runs its list's root field, and a show selects what its list selects: GraphQL reads
 * the lists (top-level, views, and nested connections under A's parents) only, REST every read but searches.
 */
async function includeReads(op: Operation, base: Planned): Promise<void> {
  if (op.root !== "query" || op.kind === "search") return;
  const values = op.includes.filter((v) => v.split(".").length <= (h.config.includeMaxDepth ?? Infinity));
  const count = h.config.includeMaxCount ?? Infinity;
  for (let i = 0; i < Math.max(values.length, 1); i += count)
    await restIncludeRead(op, base, values.slice(i, i + count));
  if (op.kind === "list" && publicFieldOf(h.app.schema, op))
    await gqlRelationRead(op, base, relationFieldsOfType(rowTypeOf(h.app.schema, op)));
}

// ── 6. Global ids: node and nodes ──────────────────────────────────────────────────────────────────

/** Every resource's seeded row of B by its global id → null (A's own → the row); `nodes` with all of them → all null. */
async function nodeProbes(): Promise<void> {
  const typed = resources.filter((def) => !def.link && B.rows.has(def.name) && h.app.schema.getType(pascal(def.name)));
  for (const def of typed) {
    counts.gqlNodeProbes++;
    const query = `query Client($id: ID!) { result: node(id: $id) { id ... on ${pascal(def.name)} { rowId } } }`;
    const theirs = await gql(`node(id:) of B's ${def.name}`, {
      field: "node",
      root: "query",
      operationName: "Client",
      query,
      variables: { id: globalId(def, B.id(def)) },
    });
    if (!isNullRead(theirs)) problems.gqlNodes.push(`node(id:) of B's ${def.name} → ${brief(theirs)}`);
    const own = await gql(`node(id:) of A's ${def.name}`, {
      field: "node",
      root: "query",
      operationName: "Client",
      query,
      variables: { id: globalId(def, A.id(def)) },
    });
    if (own.body?.errors || own.body?.data?.result?.rowId !== A.id(def))
      problems.gqlNodes.push(`node(id:) of A's own ${def.name} → ${brief(own)}`);
  }
  counts.gqlNodeProbes++;
  const ids = typed.map((def) => globalId(def, B.id(def)));
  const all = await gql("nodes(ids:) of B's rows", {
    field: "nodes",
    root: "query",
    operationName: "Client",
    query: "query Client($ids: [ID!]!) { result: nodes(ids: $ids) { id } }",
    variables: { ids },
  });
  if (
    all.body?.errors ||
    all.body?.data?.result?.length !== ids.length ||
    all.body.data.result.some((n: unknown) => n !== null)
  ) {
    problems.gqlNodes.push(`nodes(ids:) of B's rows → ${brief(all)}`);
  }
}

// ── 7. Filters through relations ────────────────────────────────────────────────────────────────────

/**
 * Every public connection (resources and views), filtered through each relation its `where` offers on B's row ids
 * and on B's marker in the related rows' text: no rows.
 */
async function relationWhereProbes(): Promise<void> {
  const defOfType = new Map(resources.map((def) => [pascal(def.name), def]));
  for (const { op, field } of publicRootOperations(h.app.schema).filter((p) => p.op.kind === "list")) {
    for (const rel of relationFiltersOf(h.app.schema, field)) {
      const target = defOfType.get(rel.target);
      const ids = (target && (bRowsBefore[target.model] ?? []).map((r) => (r as { id: number }).id)) || [];
      const quantifier = rel.toMany ? "some" : "is";
      const wheres: Array<[string, unknown]> = [
        ...(ids.length
          ? [
              [
                `${rel.key}.${quantifier}.rowId in B's rows`,
                { [rel.key]: { [quantifier]: { rowId: { in: ids } } } },
              ] as [string, unknown],
            ]
          : []),
        ...(rel.stringColumns.length
          ? [
              [
                `${rel.key}.${quantifier} text contains "${MARK}"`,
                { [rel.key]: { [quantifier]: { OR: rel.stringColumns.map((c) => ({ [c]: { contains: MARK } })) } } },
              ] as [string, unknown],
            ]
          : []),
      ];
      for (const [label, where] of wheres) {
        counts.gqlRelationWhereProbes++;
        const what = `${field}(where: ${label})`;
        const g = await gql(what, request(op, seededParams(op, A), undefined, { where })!);
        if (!isEmptyRead(g)) problems.gqlRelationWhere.push(`${what} → ${brief(g)}`);
      }
    }
  }
}

async function probe(op: Operation): Promise<void> {
  const base = await planSeeded(op, A);
  if (publicFieldOf(h.app.schema, op)) publicOps.add(op);
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
  bRowsBefore = await accountRows(h.db.store, bAccount);
  const seeded = Date.now();
  const cpu = process.cpuUsage();

  // The marker is visible to B itself, so its absence from A's replies means something.
  const bUser = await (await B.client("*")).get(`/v2/users/${B.id(resourceNamed("user"))}`);
  sanity = { bSeesOwnMarker: JSON.stringify(bUser.body).includes(MARK) };

  for (const op of operations) await probe(op);
  await nodeProbes();
  await relationWhereProbes();
  bRowsAfter = await accountRows(h.db.store, bAccount);
  console.log(
    `isolation matrix: ${operations.length} operations, ${counts.rest} REST and ${counts.graphql} GraphQL requests in ${Date.now() - seeded} ms` +
      ` (${Math.round(process.cpuUsage(cpu).user / 1000)} ms CPU; seed ${seeded - started} ms): ${JSON.stringify(counts)}`,
  );
}, 180_000);
afterAll(() => h?.close());

describe(`account isolation on every operation of the catalogue (${operations.length})`, () => {
  test("every operation was probed, and B's marker is in what B itself reads", () => {
    expect(covered.size).toBe(operations.length);
    // Every public root field (but node, nodes and me, probed on their own) does what some operation does.
    const fields = new Set([...publicOps].map((op) => publicFieldOf(h.app.schema, op)));
    const roots = [h.app.schema.getQueryType()!, h.app.schema.getMutationType()!].flatMap((t) =>
      Object.keys(t.getFields()),
    );
    // The public forms' fields take no credential: test/public-forms.test.ts (another account's form is a 404 there).
    const anonymous = new Set(catalogue.filter((op) => op.anonymous).map((op) => op.field));
    expect(roots.filter((f) => !fields.has(f) && !anonymous.has(f) && !["node", "nodes", "me"].includes(f))).toEqual(
      [],
    );
    expect(counts.gqlRelationWhereProbes).toBeGreaterThan(50);
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
  test("GraphQL: B's ids as arguments (lookups, parents of nested connections, mutations) → null for a read, NOT_FOUND for a mutation; A's own ids found", () => {
    expect(problems.gqlPathIds).toEqual([]);
  });
  test("GraphQL: B's ids as foreign keys, link columns and owners in mutation inputs → VALIDATION naming the input path, as a missing id", () => {
    expect(problems.gqlBodyIds).toEqual([]);
  });
  test("GraphQL: B's ids in link mutations' items and rowIds → the same as REST (NOT_FOUND for 404, VALIDATION for 422)", () => {
    expect(problems.gqlLinkIds).toEqual([]);
  });
  test("GraphQL: connections (root and nested) with a where on B's ids or text → no rows", () => {
    expect(problems.gqlSearch).toEqual([]);
  });
  test("GraphQL: A's connections (root, views, nested) selecting every relation field, two levels deep, succeed", () => {
    expect(problems.gqlIncludes).toEqual([]);
  });
  test("GraphQL: node(id:) of B's row of every type → null (A's own → the row); nodes(ids:) of them all → nulls", () => {
    expect(problems.gqlNodes).toEqual([]);
  });
  test("GraphQL: every connection filtered through each of its relations on B's ids or text → no rows", () => {
    expect(problems.gqlRelationWhere).toEqual([]);
  });
  test("B's rows are unchanged, table by table", () => {
    for (const table of Object.keys(bRowsBefore)) expect(bRowsAfter[table], table).toEqual(bRowsBefore[table]);
  });
});
