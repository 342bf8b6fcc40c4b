/**
 * Issue 43's matrix: a publishable key and a request with no credential at all, over every operation of the catalogue
 * (REST) and every public root field (GraphQL).
 *
 * - A publishable key holding every scope a publishable key may hold (src/resources/publishable.ts) gets its answer
 *   exactly where the operation asks only for such scopes, and is refused (401/403, FORBIDDEN) everywhere else; where
 *   it reads, no private field (src/resources/define.ts `private`) appears in the answer (REST: absent; GraphQL: null).
 *   Its one write, create:submission, reaches public forms only (the world's form is not public: a 422 naming form_id).
 * - No credential: every operation is a 401 (UNAUTHENTICATED) except the public forms' (`anonymous`), which answer.
 *
 * Every operation runs once in `beforeAll`; a failure lists every operation that misbehaves.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createApiKey } from "../src/auth/accounts.ts";
import { snake } from "../src/core/names.ts";
import { operations, type Operation } from "../src/resources/operations.ts";
import { isPublishableScope, PUBLIC_SUBMISSION_SCOPE } from "../src/resources/publishable.ts";
import { publishableScopes } from "../src/resources/scopes.ts";
import { resources } from "../src/resources/index.ts";
import { client, startHarness, type Client, type Harness, type Reply } from "./harness.ts";
import { World } from "./support/world.ts";
import { planValid, urlOf, type Planned } from "./support/plans.ts";
import {
  gqlCode,
  publicRequest,
  publicRootOperations,
  rowTypeOf,
  selectionOf,
  sendGraphql,
} from "./support/graphql.ts";

const ORIGIN = "https://unit.example";
const opName = (op: Operation) => `${op.method} ${op.path}`;
const said = (r: Reply) =>
  `${r.status} ${(r.body?.error ? `${r.body.error.type}: ${r.body.error.message}` : JSON.stringify(r.body)).slice(0, 160)}`;
const gqlSaid = (r: Reply) =>
  `${r.status} ${gqlCode(r)} ${JSON.stringify(r.body?.errors?.[0]?.message ?? r.body?.data ?? r.body).slice(0, 200)}`;
const send = (api: Client, p: Planned) => api.send(p.method, urlOf(p), p.body);

/** The names of the private fields, in REST's snake_case and GraphQL's camelCase, that no resource shows publicly. */
const [privateRest, privateGraph] = (() => {
  const open = new Set<string>();
  const closed = new Set<string>();
  for (const def of resources)
    for (const [name, f] of Object.entries(def.fields)) if (!f.hidden) (f.private ? closed : open).add(name);
  const names = [...closed].filter((n) => !open.has(n));
  return [new Set(names.map(snake)), new Set(names)];
})();

/** Every key of `value`, at any depth, that names a private field and holds a value (GraphQL's null is no leak). */
function leaks(value: unknown, names: ReadonlySet<string>, nullIsHidden: boolean, at = "$"): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => leaks(v, names, nullIsHidden, `${at}.${i}`));
  if (!value || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, v]) => [
    ...(names.has(k) && !(nullIsHidden && v === null) ? [`${at}.${k}`] : []),
    ...leaks(v, names, nullIsHidden, `${at}.${k}`),
  ]);
}

/**
 * What the publishable key may do: operations asking for publishable scopes only (and at least one), and `/me`, which
 * answers what the credential is: for a key acting as no person, no row.
 */
const isMe = (op: Operation) => op.kind === "list" && op.path === "/me";
const reachable = (op: Operation) => isMe(op) || (op.scopes.length > 0 && op.scopes.every(isPublishableScope));
const submits = (op: Operation) => op.scopes.includes(PUBLIC_SUBMISSION_SCOPE);

let h: Harness;
let w: World;
let publishable: Client;
let anonymous: Client;
const problems = {
  refused: [] as string[],
  allowed: [] as string[],
  leaked: [] as string[],
  anonymous: [] as string[],
  gqlRefused: [] as string[],
  gqlAllowed: [] as string[],
  gqlLeaked: [] as string[],
  gqlAnonymous: [] as string[],
};
const counts = { rest: 0, reached: 0, graph: 0, graphReached: 0, anonymousRoutes: 0 };

async function exercise(op: Operation): Promise<void> {
  counts.rest++;
  const name = opName(op);
  const reply = await send(publishable, await planValid(op, w));
  if (reachable(op)) {
    counts.reached++;
    const expected = submits(op) ? [200, 422] : [200];
    if (!expected.includes(reply.status)) problems.allowed.push(`${name} → ${said(reply)}`);
    else if (submits(op) && reply.status === 422 && !reply.body?.error?.errors?.form_id)
      problems.allowed.push(`${name} → a 422 not about form_id: ${said(reply)}`);
    if (isMe(op) && reply.body?.data?.length !== 0) problems.allowed.push(`${name} → rows: ${said(reply)}`);
    for (const path of leaks(reply.body, privateRest, false)) problems.leaked.push(`${name}: ${path}`);
  } else if (reply.status !== 401 && reply.status !== 403) {
    problems.refused.push(`${name} → ${said(reply)}`);
  }
  const keyless = await send(anonymous, await planValid(op, w));
  if (keyless.status !== 401 || keyless.body?.error?.type !== "AuthenticationException")
    problems.anonymous.push(`${name} without a credential → ${said(keyless)}`);
}

async function exerciseGraph(op: Operation, field: string): Promise<void> {
  counts.graph++;
  const plan = await planValid(op, w);
  const select = op.root === "query" ? selectionOf(rowTypeOf(h.app.schema, op), 0) : undefined;
  const request = publicRequest(h.app.schema, op, plan.params, plan.body, { select })!;
  const reply = await sendGraphql(publishable, request);
  if (reachable(op) && op.root === "query") {
    counts.graphReached++;
    const codes = new Set(
      (reply.body?.errors ?? []).map((e: { extensions?: { code?: string } }) => e.extensions?.code),
    );
    // `me` of a key acting as no person is null, without an error.
    const answered = isMe(op) ? reply.body?.data?.result === null : reply.body?.data?.result != null;
    const onlyPrivate = [...codes].every((c) => c === "FORBIDDEN") && answered;
    if (reply.status !== 200 || !onlyPrivate) problems.gqlAllowed.push(`${field} → ${gqlSaid(reply)}`);
    for (const path of leaks(reply.body?.data, privateGraph, true)) problems.gqlLeaked.push(`${field}: ${path}`);
  } else if (!reachable(op) && gqlCode(reply) !== "FORBIDDEN" && gqlCode(reply) !== "UNAUTHENTICATED") {
    problems.gqlRefused.push(`${field} → ${gqlSaid(reply)}`);
  }
  const keyless = await sendGraphql(anonymous, request);
  if (gqlCode(keyless) !== "UNAUTHENTICATED") problems.gqlAnonymous.push(`${field} → ${gqlSaid(keyless)}`);
}

beforeAll(async () => {
  h = await startHarness({ rateLimitPerMinute: 1_000_000_000, publicRateLimitPerMinute: 1_000_000_000 } as object);
  if (h.db.provider === "sqlite") await h.db.prisma.$executeRawUnsafe("PRAGMA synchronous = OFF");
  w = await new World(h, "alpha", "publishmark").seed();
  const key = await createApiKey(h.db.store, {
    account: "alpha",
    scopes: publishableScopes.join(","),
    publishable: true,
    origins: [ORIGIN],
  });
  publishable = client(h, key.key, { origin: ORIGIN });
  anonymous = client(h, null);
  for (const op of operations) if (!op.anonymous) await exercise(op);
  for (const { op, field } of publicRootOperations(h.app.schema)) if (!op.anonymous) await exerciseGraph(op, field);
}, 1_200_000);
afterAll(() => h?.close());

describe("a publishable key, over every route and root field", () => {
  test("covers the catalogue and the public graph", () => {
    expect(counts.rest).toBe(operations.filter((op) => !op.anonymous).length);
    expect(counts.reached).toBeGreaterThan(50);
    expect(counts.graph).toBeGreaterThan(100);
    expect(counts.graphReached).toBeGreaterThan(20);
    expect(privateRest.has("email")).toBe(true);
  });
  test("answers exactly the operations of publishable scopes; refuses every other", () => {
    expect(problems.allowed).toEqual([]);
    expect(problems.refused).toEqual([]);
    expect(problems.gqlAllowed).toEqual([]);
    expect(problems.gqlRefused).toEqual([]);
  });
  test("sees no private field anywhere in what it reads", () => {
    expect(problems.leaked).toEqual([]);
    expect(problems.gqlLeaked).toEqual([]);
  });
});

describe("no credential", () => {
  test("every operation but the public forms' is a 401", () => {
    expect(problems.anonymous).toEqual([]);
    expect(problems.gqlAnonymous).toEqual([]);
  });

  test("the public forms' routes and root fields answer without one", async () => {
    const form = await w.api.post("/v2/forms", { name: "Open day", slug: "open-day", is_public: true });
    expect(form.status).toBe(200);
    const account = (await h.db.prisma.account.findUniqueOrThrow({ where: { name: "alpha" } })).slug;
    for (const op of operations.filter((o) => o.anonymous)) {
      counts.anonymousRoutes++;
      const url = `/v2${op.path.replace("{account}", String(account)).replace(`{${op.def.param}}`, "open-day")}`;
      const reply = await anonymous.send(op.method, url, op.method === "POST" ? {} : undefined);
      expect(reply.status, `${op.method} ${url} → ${said(reply)}`).toBe(200);
    }
    expect(counts.anonymousRoutes).toBe(2);
    const read = await sendGraphql(anonymous, {
      operationName: "Client",
      query: `query Client { result: publicForm(account: "${account}", form: "open-day") { name } }`,
      variables: {},
    });
    expect(read.body.data.result.name).toBe("Open day");
  });
});
