import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { client, startHarness, type Client, type Harness } from "./harness.ts";
import { cliArgs } from "./support/built.ts";

/*
 * SSO tokens (issue 42, item 5): another site signs HS256 JWTs with the account's SSO secret, minted here with jose as
 * such a site would, and sends them as Bearer tokens to act as one of the account's people, within their roles.
 */

const run = promisify(execFile);
let h: Harness;
let admin: Client;
let accountId: number;
let secret: string;
let personId: number;
let email: string;

async function rotate(account: string): Promise<string> {
  const { stdout } = await run(process.execPath, [...cliArgs, "sso:rotate", "--account", account], {
    env: { ...process.env, DATABASE_URL: h.config.databaseUrl },
  });
  return stdout.trim().split("\n").at(-1)!;
}

interface Claims {
  sub?: string;
  scopes?: unknown;
  scope?: string;
  tenant?: string | number;
  exp?: number | string;
  nbf?: number | string;
  iat?: number;
}

async function mint(claims: Claims, key = secret, alg = "HS256"): Promise<string> {
  const { exp = "5m", nbf, iat, ...rest } = claims;
  let jwt = new SignJWT({ tenant: String(accountId), ...rest }).setProtectedHeader({ alg });
  jwt = jwt.setIssuedAt(iat).setExpirationTime(exp);
  if (nbf !== undefined) jwt = jwt.setNotBefore(nbf);
  if (claims.sub !== undefined) jwt = jwt.setSubject(claims.sub);
  return jwt.sign(new TextEncoder().encode(key));
}

const as = (token: string, headers: Record<string, string> = {}) => client(h, token, headers);

beforeAll(async () => {
  h = await startHarness();
  admin = client(h, await h.key("alpha"));
  const person = (await admin.post("/v2/users", { name: "Forum Member", email: "forum.member@example.com" })).body.data;
  personId = person.id;
  email = person.email;
  accountId = (await h.db.store.prisma.account.findUniqueOrThrow({ where: { name: "alpha" } })).id;
  secret = await rotate("alpha");
});
afterAll(() => h.close());

describe("accepted", () => {
  test("sso:rotate prints a secret on its last line; a token signed with it acts as the person, with `me` them", async () => {
    expect(secret).toMatch(/^sso_[A-Za-z0-9_-]{43}$/);
    // The User role gives no permission: the token's `view:user` is beyond the person's roles.
    const token = await mint({ sub: String(personId), scopes: ["view:user"] });
    const me = await as(token).get("/v2/me");
    expect(me.status, JSON.stringify(me.body)).toBe(200);
    expect(me.body.data).toEqual([expect.objectContaining({ id: personId, email })]);
    // Beyond the roles, the person has the self-service rights: their own user, not the account's people.
    const users = await as(token).get("/v2/users");
    expect(users.body.data.map((u: { id: number }) => u.id)).toEqual([personId]);
    const graph = await as(token).graphql("{ me { rowId name } }");
    expect(graph.body.data.me).toEqual({ rowId: personId, name: "Forum Member" });
  });

  test("the token's scopes within the person's role permissions: `scopes`, `scope` or `*`", async () => {
    const other = (await admin.post("/v2/users", { name: "Forum Other", email: "forum.other@example.com" })).body.data
      .id as number;
    const role = (
      await admin.post("/v2/roles", { name: "Forum Reader", permissions: ["view:user", "view:announcement"] })
    ).body.data;
    expect((await admin.post(`/v2/users/${personId}/roles/attach`, { resources: [role.id] })).status).toBe(200);
    try {
      const listed = await as(await mint({ sub: String(personId), scopes: ["view:user"] })).get("/v2/users");
      expect(listed.status).toBe(200);
      // The role's view:user is the whole account's people, not the self-service right's one person.
      expect(listed.body.data.map((u: { id: number }) => u.id)).toEqual(expect.arrayContaining([personId, other]));
      // Asked for, but no role of the person's gives it.
      expect(
        (await as(await mint({ sub: String(personId), scopes: ["view:calendar"] })).get("/v2/calendars")).status,
      ).toBe(403);
      // `*` asks for everything: what the roles give.
      const all = as(await mint({ sub: email, scopes: ["*"] }));
      expect((await all.get("/v2/announcements")).status).toBe(200);
      expect((await all.post("/v2/announcements", { name: "Nope" })).status).toBe(403);
      const spaced = as(await mint({ sub: String(personId), scope: "view:announcement view:user" }));
      expect((await spaced.get("/v2/announcements")).status).toBe(200);
      // Not asked for: refused though the role gives it.
      expect(
        (await as(await mint({ sub: String(personId), scopes: ["view:user"] })).get("/v2/announcements")).status,
      ).toBe(403);
      // Removing the role takes effect on the next request.
      await admin.delete(`/v2/users/${personId}/roles/detach`, { resources: [role.id] });
      expect((await as(await mint({ sub: String(personId), scopes: ["*"] })).get("/v2/announcements")).status).toBe(
        403,
      );
    } finally {
      await admin.delete(`/v2/roles/${role.id}`);
    }
  });

  test("X-Perscom-Id names the account when the token has no tenant claim", async () => {
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: "HS256" })
      .setSubject(String(personId))
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode(secret));
    expect((await as(token, { "x-perscom-id": String(accountId) }).get("/v2/me")).status).toBe(200);
    expect((await as(token).get("/v2/me")).body.error.message).toMatch(/needs its account/);
  });
});

describe("refused with 401, saying why", () => {
  const refusal = async (token: string, headers: Record<string, string> = {}) => {
    const r = await as(token, headers).get("/v2/me");
    expect(r.status, JSON.stringify(r.body)).toBe(401);
    return r.body.error.message as string;
  };

  test("a bad signature, another algorithm, expired, not yet valid, no exp, an unknown person", async () => {
    expect(
      await refusal(await mint({ sub: String(personId) }, "sso_not-the-secret-at-all-xxxxxxxxxxxxxxxxxxxxx")),
    ).toMatch(/signature does not verify/);
    expect(await refusal(await mint({ sub: String(personId) }, secret + secret, "HS512"))).toMatch(
      /must be signed with HS256/,
    );
    expect(await refusal(await mint({ sub: String(personId), exp: Math.floor(Date.now() / 1000) - 60 }))).toMatch(
      /has expired/,
    );
    expect(await refusal(await mint({ sub: String(personId), nbf: Math.floor(Date.now() / 1000) + 600 }))).toMatch(
      /not valid yet/,
    );
    const noExp = await new SignJWT({ tenant: String(accountId) })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject(String(personId))
      .sign(new TextEncoder().encode(secret));
    expect(await refusal(noExp)).toMatch(/exp claim is missing/);
    expect(await refusal(await mint({ sub: "nobody@example.com" }))).toMatch(/no person of this account/);
    expect(await refusal(await mint({ sub: "999999" }))).toMatch(/no person of this account/);
  });

  test("a tenant that is not the X-Perscom-Id, another account's person, an account without a secret, a rotated secret", async () => {
    const token = await mint({ sub: String(personId) });
    expect(await refusal(token, { "x-perscom-id": String(accountId + 1000) })).toMatch(/tenant is not the account/);
    const betaAdmin = client(h, await h.key("beta"));
    const betaPerson = (await betaAdmin.post("/v2/users", { name: "Beta Member", email: "beta.member@example.com" }))
      .body.data;
    expect(await refusal(await mint({ sub: String(betaPerson.id) }))).toMatch(/no person of this account/);
    const betaId = (await h.db.store.prisma.account.findUniqueOrThrow({ where: { name: "beta" } })).id;
    expect(await refusal(await mint({ sub: String(betaPerson.id), tenant: String(betaId) }))).toMatch(/no SSO secret/);
    const before = secret;
    secret = await rotate("alpha");
    expect(secret).not.toBe(before);
    expect(await refusal(await mint({ sub: String(personId) }, before))).toMatch(/signature does not verify/);
    expect((await as(await mint({ sub: String(personId) })).get("/v2/me")).status).toBe(200);
  });

  test("a malformed token is a 401 like an unknown key", async () => {
    const r = await as("eyJhbGciOiJIUzI1NiJ9.bm90IGpzb24.c2ln").get("/v2/me");
    expect(r.status).toBe(401);
  });
});
