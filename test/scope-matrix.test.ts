/**
 * Scopes, for every operation of the catalogue (src/resources/operations.ts), over REST and GraphQL:
 * no key is a 401, a key without the operation's scopes (an unrelated one, or all but one of them) is
 * PERSCOM's 403, and a key holding exactly `op.scopes` and the view scopes of the relations its include reads gets
 * the operation's 200 with a well-formed request (test/support/plans.ts; destructive operations get rows made for
 * them), while `op.scopes` alone is a 403 naming a missing relation scope. Operations that need no scope (`/me`)
 * answer any valid key. `*` grants everything; a wrong `X-Perscom-Id` is a 401.
 *
 * Checks that cannot depend on the route (the X-Perscom-Id header, authentication before validation,
 * GraphQL without a key, `*` on writes) run on one operation of each kind and place (SAMPLE below).
 *
 * The public graph: every public root field (test/support/graphql.ts maps each to the operation it does: lists,
 * lookups, views, payload and link mutations) needs exactly its operation's scopes: none is UNAUTHENTICATED, an
 * unrelated scope or all but one is FORBIDDEN with PERSCOM's message, exactly them answers data (a mutation does its
 * write). A connection's `where` through a relation needs that resource's view scope too (FORBIDDEN naming it
 * otherwise). `node(id:)` needs the view scope of the row's type; `me` none.
 *
 * Every operation is run once in `beforeAll` and its outcomes collected, so that a failure lists every
 * operation that misbehaves, not the first one.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { operations as catalogue, type Operation } from "../src/resources/operations.ts";
/** Every operation that takes a credential: the public forms' need none (test/public-forms.test.ts covers them). */
const operations = catalogue.filter((op) => !op.anonymous);
import type { ResourceDef } from "../src/resources/define.ts";
import { resourceNamed } from "../src/resources/index.ts";
import { morphOwnersOf } from "../src/resources/index.ts";
import { client, startHarness, type Client, type Harness, type Reply } from "./harness.ts";
import { World } from "./support/world.ts";
import { PNG } from "./support/factory.ts";
import { planValid, urlOf, type Planned } from "./support/plans.ts";
import { pascal } from "../src/core/names.ts";
import { resources } from "../src/resources/index.ts";
import {
  globalId,
  gqlCode,
  publicRequest,
  publicRootOperations,
  relationFiltersOf,
  resultRows,
  sendGraphql,
} from "./support/graphql.ts";

const opName = (op: Operation) => `${op.method} ${op.path}`;
/** Every scope some operation needs (`*`, which `POST /sso/rotate` asks for, is no scope of its own). */
const ALL_SCOPES = [...new Set(operations.flatMap((op) => op.scopes))].filter((s) => s !== "*").sort();
/** A real scope that `op` does not need (and that names none of its models). */
const unrelatedScope = (op: Operation) => {
  const models = new Set(op.scopes.map((s) => s.split(":")[1]));
  return ALL_SCOPES.find((s) => !op.scopes.includes(s) && !models.has(s.split(":")[1]))!;
};
/** One include the operation allows, chosen by operation so that different ones are exercised; exact scopes must cover includes too. */
function includeFor(op: Operation, maxDepth: number): string {
  const values = op.includes.filter((i) => i.split(".").length <= maxDepth);
  if (!values.length) return "";
  let hash = 0;
  for (const c of op.field + op.kind) hash = (hash * 31 + c.charCodeAt(0)) >>> 0;
  return `include=${encodeURIComponent(values[hash % values.length])}`;
}

/**
 * The view scopes of the relations an include value (and a view's always-embedded ones) reads, derived from the
 * registry's relations: every resource the path passes through, every possible owner of a polymorphic one, the
 * relations of `x.*`; pivot accessors and resources without a view scope of their own (no route) need none.
 */
function relationScopesOf(op: Operation, include: string): string[] {
  if (op.returns === "changes" || op.returns === "status") return [];
  const values = [
    ...(include ? [decodeURIComponent(include.replace(/^include=/, ""))] : []),
    ...(op.view?.alwaysIncludes ?? []),
  ];
  const needed = new Set<string>();
  const add = (def: ResourceDef) => {
    if (ALL_SCOPES.includes(`view:${def.scope}`)) needed.add(`view:${def.scope}`);
  };
  const step = (def: ResourceDef, name: string): ResourceDef | null => {
    const relation = def.relations[name];
    if (!relation) return null; // a pivot accessor (`pivot`, `record`): the link row's own columns
    if (relation.kind === "morphTo") {
      morphOwnersOf(relation.morphRelation).forEach(add);
      return null;
    }
    const target = resourceNamed(relation.target);
    add(target);
    return target;
  };
  for (const value of values) {
    let at: ResourceDef | null = op.def;
    for (const segment of value.split(".")) {
      if (!at) break;
      if (segment === "*") {
        for (const name of at.includes.filter((i) => !i.includes(".") && !i.includes("*"))) step(at, name);
        break;
      }
      at = step(at, segment);
    }
  }
  return [...needed].filter((s) => !op.scopes.includes(s)).sort();
}

/** PERSCOM's 401 and 403 (perscom-behaviour.md §5), written out here so that the engine's table is checked, not trusted. */
const UNAUTHENTICATED = {
  type: "AuthenticationException",
  message: "You are not authenticated. Please provide a valid API key that contains your PERSCOM ID to continue.",
};
/** A body wrong for every kind of operation. */
const MALFORMED = { resources: "not-an-id", related_key: "x", pivot: "x", filters: "x", name: ["x"], email: 5 };
const FORBIDDEN = {
  type: "HttpException",
  message: "The API key provided does not have the correct permissions and/or scopes to perform the requested action.",
};
/** What a reply says, for failure lists: status and error type and message, or the body. */
const said = (r: Reply) =>
  `${r.status} ${(r.body?.error ? `${r.body.error.type}: ${r.body.error.message}` : JSON.stringify(r.body)).slice(0, 160)}`;
/**
 * Checks that do not depend on the route (the key's account, authentication before validation) run on
 * one operation of each kind at each place (top level, nested, view): the first of each in the catalogue.
 */
const SAMPLE = new Set([
  ...new Map(
    operations
      .map((op) => [`${op.kind}|${op.view ? "view" : op.parent ? op.parent.relation.kind : "top"}`, op] as const)
      .reverse(),
  ).values(),
]);

let h: Harness;
let w: World;
const problems = {
  noKey: [] as string[],
  noKeyMalformed: [] as string[],
  forbidden: [] as string[],
  partial: [] as string[],
  exact: [] as string[],
  relationForbidden: [] as string[],
  wildcard: [] as string[],
  gqlNoKey: [] as string[],
  gqlForbidden: [] as string[],
  gqlExact: [] as string[],
  gqlPartial: [] as string[],
  gqlMutationExact: [] as string[],
  gqlRelationWhere: [] as string[],
  gqlNode: [] as string[],
  gqlMe: [] as string[],
  wrongAccountHeader: [] as string[],
  unscoped: [] as string[],
};
let checked = 0;
/** Public root fields exercised, and `where`-through-relation checks made. */
const gqlFields = new Set<string>();
let relationWhereChecked = 0;
/** Operations whose include reads relations beyond their own scopes (each checked without those scopes). */
let relationChecked = 0;

const isUnauthenticated = (r: Reply) =>
  r.status === 401 && r.body?.error?.type === UNAUTHENTICATED.type && r.body.error.message === UNAUTHENTICATED.message;
const isForbidden = (r: Reply) =>
  r.status === 403 && r.body?.error?.type === FORBIDDEN.type && r.body.error.message === FORBIDDEN.message;
const send = (api: Client, p: Planned) => api.send(p.method, urlOf(p), p.body);

async function exercise(op: Operation, anonymous: Client, wrongAccount: Client): Promise<void> {
  const name = opName(op);
  const plan = await planValid(op, w, includeFor(op, h.config.includeMaxDepth ?? Infinity));

  const none = await send(anonymous, plan);
  if (!isUnauthenticated(none)) problems.noKey.push(`${name} → ${said(none)}`);
  // Authentication comes first (behaviour §4.4): no key is a 401 however bad the rest of the request is.
  if (SAMPLE.has(op)) {
    const malformed = await anonymous.send(
      op.method,
      urlOf(plan, "include=no_such_relation&page=0&limit=-1"),
      op.method === "GET" ? undefined : MALFORMED,
    );
    if (!isUnauthenticated(malformed)) problems.noKeyMalformed.push(`${name} → ${said(malformed)}`);
  }
  if (SAMPLE.has(op)) {
    const claimed = await send(wrongAccount, plan);
    if (!isUnauthenticated(claimed)) problems.wrongAccountHeader.push(`${name} → ${said(claimed)}`);
  }

  const unrelated = await send(await w.client(unrelatedScope(op)), plan);
  if (op.scopes.length === 0) {
    if (unrelated.status !== 200) problems.unscoped.push(`${name} with ${unrelatedScope(op)} → ${said(unrelated)}`);
  } else if (!isForbidden(unrelated)) {
    problems.forbidden.push(`${name} with ${unrelatedScope(op)} → ${said(unrelated)}`);
  }
  if (op.scopes.length > 1) {
    for (const missing of op.scopes) {
      const held = op.scopes.filter((s) => s !== missing);
      const r = await send(await w.client(held.join(" ")), plan);
      if (!isForbidden(r)) problems.partial.push(`${name} without ${missing} (holding ${held.join(" ")}) → ${said(r)}`);
    }
  }

  const relationScopes = relationScopesOf(op, plan.query ?? "");
  const exactScopes = [...op.scopes, ...relationScopes];
  const exact = await send(await w.client(exactScopes.length ? exactScopes.join(" ") : unrelatedScope(op)), plan);
  if (exact.status !== 200)
    problems.exact.push(`${name}?${plan.query ?? ""} with ${exactScopes.join(" ") || "(none)"} → ${said(exact)}`);
  if (relationScopes.length) {
    relationChecked++;
    // The operation's own scopes without those of the relations its include reads: a 403 that names one of them.
    const r = await send(await w.client(op.scopes.length ? op.scopes.join(" ") : unrelatedScope(op)), plan);
    const message: string = r.body?.error?.message ?? "";
    const named = /Missing scopes?: (.*)\.$/.exec(message)?.[1]?.split(", ") ?? [];
    if (
      r.status !== 403 ||
      r.body.error.type !== FORBIDDEN.type ||
      !message.startsWith(FORBIDDEN.message) ||
      !named.length ||
      named.some((s) => !relationScopes.includes(s))
    ) {
      problems.relationForbidden.push(
        `${name}?${plan.query ?? ""} with ${op.scopes.join(" ")}, lacking ${relationScopes.join(" ")} → ${said(r)}`,
      );
    }
  }
  if (op.root === "query") {
    // `*` grants every read; every write of the setup was made with a `*` key.
    const star = await send(await w.client("*"), plan);
    if (star.status !== 200) problems.wildcard.push(`${name} → ${said(star)}`);
  }

  await exercisePublic(op, anonymous);
  checked++;
}

/** The public root field doing what `op` does, if it is one of its own (no search, nested read or view show). */
let publicRoots: Map<Operation, string>;
const gqlSaid = (r: Reply) =>
  `${r.status} ${gqlCode(r)} ${JSON.stringify(r.body?.errors?.[0]?.message ?? r.body?.data ?? r.body).slice(0, 200)}`;
const isGqlForbidden = (r: Reply) => gqlCode(r) === "FORBIDDEN" && r.body.errors[0].message === FORBIDDEN.message;
const keyOf = (scopes: readonly string[], op: Operation) =>
  w.client(scopes.length ? scopes.join(" ") : unrelatedScope(op));

async function exercisePublic(op: Operation, anonymous: Client): Promise<void> {
  const field = publicRoots.get(op);
  if (!field) return;
  gqlFields.add(field);
  // A well-formed request (uploads as multipart); a write gets rows made for it, as REST's did.
  const fresh = async () => {
    const p = await planValid(op, w);
    return publicRequest(h.app.schema, op, p.params, p.body)!;
  };
  const plan = await planValid(op, w);
  const request = publicRequest(h.app.schema, op, plan.params, plan.body)!;
  if (SAMPLE.has(op)) {
    const gNone = await sendGraphql(anonymous, request);
    if (gqlCode(gNone) !== "UNAUTHENTICATED") problems.gqlNoKey.push(`${field} → ${gqlSaid(gNone)}`);
  }
  if (op.scopes.length) {
    const gUnrelated = await sendGraphql(await w.client(unrelatedScope(op)), request);
    if (!isGqlForbidden(gUnrelated))
      problems.gqlForbidden.push(`${field} with ${unrelatedScope(op)} → ${gqlSaid(gUnrelated)}`);
  }
  if (op.scopes.length > 1) {
    for (const missing of op.scopes) {
      const held = op.scopes.filter((s) => s !== missing);
      const r = await sendGraphql(await w.client(held.join(" ")), request);
      if (!isGqlForbidden(r)) problems.gqlPartial.push(`${field} without ${missing} → ${gqlSaid(r)}`);
    }
  }
  const exact = await sendGraphql(await keyOf(op.scopes, op), op.root === "query" ? request : await fresh());
  if (exact.status !== 200 || exact.body.errors || exact.body.data?.result == null) {
    (op.root === "query" ? problems.gqlExact : problems.gqlMutationExact).push(
      `${field} with ${op.scopes.join(" ") || "(none)"} → ${exact.status} ${JSON.stringify(exact.body).slice(0, 300)}`,
    );
  }
  if (op.kind === "list") await relationWheres(op, field);
}

/** A connection filtered through each relation its `where` offers: the related resource's view scope is needed too. */
async function relationWheres(op: Operation, field: string): Promise<void> {
  const defOfType = new Map(resources.map((def) => [pascal(def.name), def]));
  for (const rel of relationFiltersOf(h.app.schema, field)) {
    const target = defOfType.get(rel.target)!;
    const scope = `view:${target.scope}`;
    const where = { [rel.key]: { [rel.toMany ? "some" : "is"]: { rowId: { gt: 0 } } } };
    const request = publicRequest(h.app.schema, op, {}, undefined, { where })!;
    const what = `${field}(where: { ${rel.key}: ... })`;
    relationWhereChecked++;
    // A resource no route serves (no view scope of its own) is filtered on with its parent's scopes.
    const needed = !target.link && ALL_SCOPES.includes(scope) && !op.scopes.includes(scope);
    const own = await sendGraphql(await keyOf(op.scopes, op), request);
    if (needed) {
      const message: string = own.body?.errors?.[0]?.message ?? "";
      if (gqlCode(own) !== "FORBIDDEN" || !message.includes(scope))
        problems.gqlRelationWhere.push(`${what} with ${op.scopes.join(" ")}, lacking ${scope} → ${gqlSaid(own)}`);
      const both = await sendGraphql(await keyOf([...op.scopes, scope], op), request);
      if (both.body?.errors || !resultRows(both))
        problems.gqlRelationWhere.push(`${what} with ${[...op.scopes, scope].join(" ")} → ${gqlSaid(both)}`);
    } else if (own.body?.errors || !resultRows(own)) {
      problems.gqlRelationWhere.push(
        `${what} with ${op.scopes.join(" ") || "(none)"} (${rel.target} needs no scope of its own here) → ${gqlSaid(own)}`,
      );
    }
  }
}

/**
 * A type that only an action answers (a user's sign-in links): read with the action's scopes, and selected on its type
 * with the view scope of its scope noun (the relation scopes' rule), so a key needs both.
 */
function answeredOnly(def: ResourceDef): Operation {
  const op = operations.find((o) => o.def === def)!;
  return { ...op, scopes: [...new Set([`view:${def.scope}`, ...op.scopes])] };
}

/** `node(id:)` of a row of every type: FORBIDDEN without the type's view scope, the row with it; `me` with any key. */
async function nodeAndMe(): Promise<void> {
  for (const def of resources.filter((d) => !d.link && w.rows.has(d.name) && h.app.schema.getType(pascal(d.name)))) {
    const show =
      operations.find((op) => op.def === def && !op.parent && !op.view && (op.kind === "show" || op.kind === "list")) ??
      operations.find((op) => op.def === def && op.kind === "list") ??
      answeredOnly(def);
    // Selected on the row's type only: a field on the Node interface itself reads every type (see the report on node).
    const query = `query Client($id: ID!) { result: node(id: $id) { ... on ${pascal(def.name)} { id rowId } } }`;
    const request = { query, operationName: "Client", variables: { id: globalId(def, w.id(def)) } };
    if (show.scopes.length) {
      const r = await sendGraphql(await w.client(unrelatedScope(show)), request);
      if (gqlCode(r) !== "FORBIDDEN")
        problems.gqlNode.push(`node(id:) of a ${def.name} with ${unrelatedScope(show)} → ${gqlSaid(r)}`);
    }
    const r = await sendGraphql(await keyOf(show.scopes, show), request);
    if (r.body?.errors || r.body?.data?.result?.rowId !== w.id(def))
      problems.gqlNode.push(`node(id:) of a ${def.name} with ${show.scopes.join(" ")} → ${gqlSaid(r)}`);
  }
  const me = await sendGraphql(await w.client("view:rank"), { query: "{ me { rowId } }" });
  if (me.body?.errors || me.body?.data?.me?.rowId !== w.user.id)
    problems.gqlMe.push(`me with view:rank → ${gqlSaid(me)}`);
}

beforeAll(async () => {
  const seeded = Date.now();
  h = await startHarness({ rateLimitPerMinute: 1_000_000_000 } as object);
  publicRoots = new Map(publicRootOperations(h.app.schema).map(({ op, field }) => [op, field]));
  // A scratch database: durability is not what this file tests. (PostgreSQL test databases are created with
  // synchronous_commit off.)
  if (h.db.provider === "sqlite") await h.db.prisma.$executeRawUnsafe("PRAGMA synchronous = OFF");
  w = await new World(h, "alpha", "alphamark").seed();
  const anonymous = client(h, null);
  const other = await h.key("another account", "*");
  const otherId = (await h.db.prisma.account.findUniqueOrThrow({ where: { name: "another account" } })).id;
  // A valid `*` key of this account that claims to be the other account's.
  const wrongAccount = client(h, await w.key("*"), { "x-perscom-id": String(otherId) });
  expect(other).toBeTruthy();
  const started = Date.now();
  const cpu = process.cpuUsage();
  for (const op of operations) await exercise(op, anonymous, wrongAccount);
  await nodeAndMe();
  // `*` on writes too, one operation of each kind, with a fresh request; sent with the key's own X-Perscom-Id, which must be accepted.
  const ownAccount = (await h.db.prisma.account.findUniqueOrThrow({ where: { name: w.account } })).id;
  const star = await w.client("*", { "x-perscom-id": String(ownAccount) });
  for (const op of operations.filter((o) => SAMPLE.has(o) && o.root === "mutation")) {
    const r = await send(star, await planValid(op, w, includeFor(op, h.config.includeMaxDepth ?? Infinity)));
    if (r.status !== 200) problems.wildcard.push(`${opName(op)} → ${said(r)}`);
  }
  console.log(`scope matrix: ${relationChecked} operations read relations beyond their scopes`);
  console.log(
    `scope matrix: ${operations.length} operations in ${Date.now() - started} ms (${Math.round(process.cpuUsage(cpu).user / 1000)} ms CPU; seed ${started - seeded} ms)`,
  );
}, 120_000);
afterAll(() => h?.close());

describe(`scopes of every operation of the catalogue (${operations.length})`, () => {
  test("every operation was exercised", () => {
    expect(checked).toBe(operations.length);
  });
  test("no key: 401 AuthenticationException with PERSCOM's message", () => {
    expect(problems.noKey).toEqual([]);
  });
  test(`no key and a malformed request (bad include, page, body): still 401, authentication comes first (${SAMPLE.size} operations, one of each kind)`, () => {
    expect(problems.noKeyMalformed).toEqual([]);
  });
  test(`a valid key with an X-Perscom-Id of another account: 401 (${SAMPLE.size} operations, one of each kind)`, () => {
    expect(problems.wrongAccountHeader).toEqual([]);
  });
  test("a key holding only an unrelated scope: 403 HttpException with PERSCOM's message", () => {
    expect(problems.forbidden).toEqual([]);
  });
  test("a key holding all but one of the operation's scopes: 403", () => {
    expect(problems.partial).toEqual([]);
  });
  test("a key holding exactly the operation's scopes and those of the relations its include reads: 200", () => {
    expect(problems.exact).toEqual([]);
  });
  test("a key holding the operation's scopes but not those of the relations its include reads: 403 naming a missing one", () => {
    expect(relationChecked).toBeGreaterThan(operations.length / 4);
    expect(problems.relationForbidden).toEqual([]);
  });
  test("operations that need no scope (/me, and /changes, which shows what the key may view) answer a key of any scope", () => {
    expect(operations.filter((op) => op.scopes.length === 0).map((op) => op.path)).toEqual(["/me", "/changes"]);
    expect(problems.unscoped).toEqual([]);
  });
  test(`a * key: 200 on every read, and on a write of each kind (${[...SAMPLE].filter((o) => o.root === "mutation").length}) sent with the key's own X-Perscom-Id`, () => {
    expect(problems.wildcard).toEqual([]);
  });
  test("GraphQL: every public root field (but node, nodes, me) is exercised as the operation it does", () => {
    const roots = [h.app.schema.getQueryType()!, h.app.schema.getMutationType()!].flatMap((t) =>
      Object.keys(t.getFields()),
    );
    // The public forms' fields take no credential: test/public-forms.test.ts.
    const anonymous = new Set(catalogue.filter((op) => op.anonymous).map((op) => op.field));
    expect(roots.filter((f) => !gqlFields.has(f) && !anonymous.has(f) && !["node", "nodes", "me"].includes(f))).toEqual(
      [],
    );
  });
  test(`GraphQL: no key → UNAUTHENTICATED (${SAMPLE.size} operations sampled, one of each kind; every field's guard is shown by the FORBIDDEN test)`, () => {
    expect(problems.gqlNoKey).toEqual([]);
  });
  test("GraphQL, every public root field: an unrelated scope → FORBIDDEN with PERSCOM's message", () => {
    expect(problems.gqlForbidden).toEqual([]);
  });
  test("GraphQL, every public root field: all but one of its operation's scopes → FORBIDDEN", () => {
    expect(problems.gqlPartial).toEqual([]);
  });
  test("GraphQL multipart upload: a key of exactly create:image creates an image with its file", async () => {
    const op = operations.find((o) => o.kind === "create" && o.def.name === "image" && !o.parent)!;
    const body = { name: "Uploaded through GraphQL", image: `data:image/png;base64,${PNG.toString("base64")}` };
    const request = publicRequest(h.app.schema, op, {}, body, { select: "{ name filename }" })!;
    expect(request.variables.input).toMatchObject({ image: expect.any(File) });
    const r = await sendGraphql(await w.client(op.scopes.join(" ")), request);
    expect(r.body.errors ?? []).toEqual([]);
    expect(r.body.data.result.image).toMatchObject({ name: "Uploaded through GraphQL", filename: expect.any(String) });
  });
  test("GraphQL, every public query field: exactly its operation's scopes → data", () => {
    expect(problems.gqlExact).toEqual([]);
  });
  test("GraphQL, every public mutation: exactly its operation's scopes → the write's payload", () => {
    expect(problems.gqlMutationExact).toEqual([]);
  });
  test("GraphQL: a connection's where through a relation needs the related view scope (FORBIDDEN naming it), and answers with it", () => {
    expect(relationWhereChecked).toBeGreaterThan(50);
    expect(problems.gqlRelationWhere).toEqual([]);
  });
  test("GraphQL: node(id:) needs the view scope of the row's type; me answers any key", () => {
    expect(problems.gqlNode).toEqual([]);
    expect(problems.gqlMe).toEqual([]);
  });
});
