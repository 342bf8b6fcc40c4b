/**
 * A person's token over every operation of the catalogue (REST) and every public root field (GraphQL): it succeeds
 * exactly where the person's roles or the self-service rights (src/resources/self-service.ts) allow.
 *
 * - A person whose roles give nothing (the built-in User role) is refused (403, FORBIDDEN) every operation whose
 *   scopes a self-service right does not stand in for, and is not refused the others (they answer the person's own
 *   rows: a 404 for someone else's row, a shorter page).
 * - A person whose role holds exactly the operation's scopes gets its 200, as a key with those scopes does (writing
 *   as themselves), except where only an API key may (`keysOnly`: rotating the SSO secret).
 * - A person of another account, even an Admin (`*`), reaches none of this account's rows: every route that names
 *   one is a 404.
 *
 * The persons are SSO tokens' subjects (minted with jose, as another site would); every operation runs once in
 * `beforeAll`, and a failure lists every operation that misbehaves.
 */
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { operations as catalogue, type Operation } from "../src/resources/operations.ts";
/** Every operation that takes a credential: the public forms' need none (test/public-forms.test.ts covers them). */
const operations = catalogue.filter((op) => !op.anonymous);
import { selfServiceRights } from "../src/resources/self-service.ts";
import { rotateSsoSecret } from "../src/resources/sso-secret.ts";
import { client, startHarness, type Client, type Harness, type Reply } from "./harness.ts";
import { World } from "./support/world.ts";
import { planValid, urlOf, type Planned } from "./support/plans.ts";
import { gqlCode, publicRequest, publicRootOperations, sendGraphql } from "./support/graphql.ts";
import { accountIdOf } from "./support/account-rows.ts";

const opName = (op: Operation) => `${op.method} ${op.path}`;
const said = (r: Reply) =>
  `${r.status} ${(r.body?.error ? `${r.body.error.type}: ${r.body.error.message}` : JSON.stringify(r.body)).slice(0, 160)}`;
const gqlSaid = (r: Reply) =>
  `${r.status} ${gqlCode(r)} ${JSON.stringify(r.body?.errors?.[0]?.message ?? r.body?.data ?? r.body).slice(0, 200)}`;
const send = (api: Client, p: Planned) => api.send(p.method, urlOf(p), p.body);

/**
 * Whether the self-service rights stand in for every scope of `op`: reads; single-row creates and updates where the
 * right names fields; link operations its `links` name.
 */
function selfService(op: Operation): boolean {
  const writesOneRow = (op.kind === "create" || op.kind === "update") && op.parent?.relation.kind !== "belongsToMany";
  return op.scopes.every((s) => {
    const right = selfServiceRights[s];
    if (!right) return false;
    if (s.startsWith("view:")) return true;
    if (writesOneRow && right.fields) return true;
    return !!right.links?.some(
      (l) =>
        l.parent === op.parent?.def.name && l.field === op.parent.relation.field && l.kinds.includes(op.kind as never),
    );
  });
}

/**
 * A write as oneself: a person's token writes as that person, so an author named in the body is the sender
 * (test/credentials.test.ts: naming another is refused), and a self-service create names the sender as its person
 * (test/self-service.test.ts).
 */
function asOneself(op: Operation, plan: Planned, person: number): Planned {
  const bodies = [
    plan.body,
    ...(Array.isArray((plan.body as { resources?: unknown })?.resources)
      ? (plan.body as { resources: unknown[] }).resources
      : []),
  ];
  for (const body of bodies) {
    if (!body || typeof body !== "object" || Array.isArray(body)) continue;
    const fields = body as Record<string, unknown>;
    if ("author_id" in fields) fields.author_id = person;
    if (selfService(op) && op.kind === "create" && "user_id" in fields) fields.user_id = person;
  }
  // A self-service link (a like) links the sender alone.
  const listed = (plan.body as { resources?: unknown[] } | undefined)?.resources;
  if (selfService(op) && (op.kind === "attach" || op.kind === "detach") && Array.isArray(listed))
    (plan.body as { resources: unknown[] }).resources = [
      typeof listed[0] === "object" && listed[0] ? { ...listed[0], id: person } : person,
    ];
  return plan;
}

/** Only an API key may run it (`keysOnly`): a person holding every scope is refused. */
const keysOnly = (op: Operation) => !!op.command?.keysOnly;

/** Every view scope: what a view that always embeds relations (`/roster`'s images) reads besides its own. */
const VIEW_SCOPES = [...new Set(operations.flatMap((op) => op.scopes))].filter((s) => s.startsWith("view:"));
/** The role that holds exactly what `op` needs: its scopes, and a view's embedded relations'. */
const scopesFor = (op: Operation) =>
  op.view?.alwaysIncludes?.length ? [...new Set([...op.scopes, ...VIEW_SCOPES])] : op.scopes;

let h: Harness;
let w: World;
let accountId: number;
let secret: string;
let otherSecret: string;
let otherAccountId: number;
/** The person with no role permission; the person whose role is set per operation; another account's Admin. */
const people = { none: 0, exact: 0, stranger: 0 };
const roles = new Map<string, number>();
const problems = {
  noneRefused: [] as string[],
  noneAllowed: [] as string[],
  exact: [] as string[],
  stranger: [] as string[],
  gqlNoneRefused: [] as string[],
  gqlNoneAllowed: [] as string[],
  gqlExact: [] as string[],
};
let checked = 0;
let covered = 0;
let strangers = 0;
let gqlChecked = 0;

async function tokenOf(sub: number, tenant: number, key: string): Promise<Client> {
  const jwt = await new SignJWT({ tenant: String(tenant), scopes: ["*"] })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(String(sub))
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(new TextEncoder().encode(key));
  return client(h, jwt);
}

/** The person `exact` with one role holding exactly `scopes` (and the built-in User role's nothing). */
async function holding(scopes: readonly string[]): Promise<Client> {
  const held = scopes.join(" ");
  let role = roles.get(held);
  if (role === undefined) {
    const made = await w.api.post("/v2/roles", { name: `Exactly ${roles.size + 1}`, permissions: scopes });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    roles.set(held, (role = made.body.data.id as number));
  }
  const synced = await w.api.patch(`/v2/users/${people.exact}/roles/sync`, { resources: [role] });
  expect(synced.status, JSON.stringify(synced.body)).toBe(200);
  return tokenOf(people.exact, accountId, secret);
}

async function exercise(op: Operation, none: Client, stranger: Client): Promise<void> {
  const name = opName(op);
  const byNone = await send(none, asOneself(op, await planValid(op, w), people.none));
  if (selfService(op)) {
    covered++;
    if (byNone.status === 403 || byNone.status >= 500) problems.noneAllowed.push(`${name} → ${said(byNone)}`);
  } else if (byNone.status !== 403) {
    problems.noneRefused.push(`${name} → ${said(byNone)}`);
  }
  const byExact = await send(await holding(scopesFor(op)), asOneself(op, await planValid(op, w), people.exact));
  if (byExact.status !== (keysOnly(op) ? 403 : 200))
    problems.exact.push(`${name} holding ${op.scopes.join(" ")} → ${said(byExact)}`);
  if (/\{\w+\}/.test(op.path)) {
    strangers++;
    const byStranger = await send(stranger, await planValid(op, w));
    if (byStranger.status !== 404) problems.stranger.push(`${name} → ${said(byStranger)}`);
  }
  checked++;
}

async function exercisePublic(op: Operation, field: string, none: Client): Promise<void> {
  gqlChecked++;
  const request = async (p: Planned) => publicRequest(h.app.schema, op, p.params, p.body)!;
  const byNone = await sendGraphql(none, await request(asOneself(op, await planValid(op, w), people.none)));
  if (selfService(op)) {
    if (gqlCode(byNone) === "FORBIDDEN" || byNone.status >= 500)
      problems.gqlNoneAllowed.push(`${field} → ${gqlSaid(byNone)}`);
  } else if (gqlCode(byNone) !== "FORBIDDEN") {
    problems.gqlNoneRefused.push(`${field} → ${gqlSaid(byNone)}`);
  }
  const byExact = await sendGraphql(
    await holding(scopesFor(op)),
    await request(asOneself(op, await planValid(op, w), people.exact)),
  );
  const answered = byExact.status === 200 && !byExact.body.errors && byExact.body.data?.result != null;
  if (keysOnly(op) ? gqlCode(byExact) !== "FORBIDDEN" : !answered)
    problems.gqlExact.push(`${field} holding ${op.scopes.join(" ")} → ${gqlSaid(byExact)}`);
}

beforeAll(async () => {
  h = await startHarness({ rateLimitPerMinute: 1_000_000_000 } as object);
  if (h.db.provider === "sqlite") await h.db.prisma.$executeRawUnsafe("PRAGMA synchronous = OFF");
  w = await new World(h, "alpha", "personmark").seed();
  accountId = await accountIdOf(h.db.prisma, "alpha");
  secret = await rotateSsoSecret(h.db.store, accountId);
  const person = async (api: Client, email: string) => {
    const made = await api.post("/v2/users", { name: email, email });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    return made.body.data.id as number;
  };
  people.none = await person(w.api, "person.none@example.com");
  people.exact = await person(w.api, "person.exact@example.com");
  const otherAdmin = client(h, await h.key("another account", "*"));
  otherAccountId = await accountIdOf(h.db.prisma, "another account");
  otherSecret = await rotateSsoSecret(h.db.store, otherAccountId);
  people.stranger = await person(otherAdmin, "person.stranger@example.com");
  const admin = (await otherAdmin.get("/v2/roles")).body.data.find((r: { name: string }) => r.name === "Admin");
  expect((await otherAdmin.post(`/v2/users/${people.stranger}/roles/attach`, { resources: [admin.id] })).status).toBe(
    200,
  );
  const none = await tokenOf(people.none, accountId, secret);
  const stranger = await tokenOf(people.stranger, otherAccountId, otherSecret);
  for (const op of operations) await exercise(op, none, stranger);
  for (const { op, field } of publicRootOperations(h.app.schema)) await exercisePublic(op, field, none);
}, 1_200_000);
afterAll(() => h?.close());

describe("a person's token, over every route", () => {
  test("covers the catalogue", () => {
    expect(checked).toBe(operations.length);
    expect(covered).toBeGreaterThan(20);
    expect(strangers).toBeGreaterThan(300);
  });
  test("with no role permission: refused exactly what no self-service right stands in for", () => {
    expect(problems.noneRefused).toEqual([]);
    expect(problems.noneAllowed).toEqual([]);
  });
  test("with a role holding exactly the operation's scopes: its 200", () => {
    expect(problems.exact).toEqual([]);
  });
  test("another account's Admin: every route naming this account's row is a 404", () => {
    expect(problems.stranger).toEqual([]);
  });
});

describe("a person's token, over every public root field", () => {
  test("covers the public graph", () => {
    expect(gqlChecked).toBeGreaterThan(100);
  });
  test("with no role permission: FORBIDDEN exactly where no self-service right stands in", () => {
    expect(problems.gqlNoneRefused).toEqual([]);
    expect(problems.gqlNoneAllowed).toEqual([]);
  });
  test("with a role holding exactly the field's scopes: its data", () => {
    expect(problems.gqlExact).toEqual([]);
  });
});
