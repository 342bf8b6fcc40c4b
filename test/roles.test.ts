import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { client, startHarness, type Client, type Harness } from "./harness.ts";
import { cliArgs } from "./support/built.ts";
import { execFile } from "node:child_process";
import { promisify } from "node:util";

/*
 * Roles (issue 42, item 1): the built-in roles every account has, CRUD with permissions checked against the scope
 * vocabulary, people ↔ roles links over REST and GraphQL, and the default roles a new person gets.
 */

let h: Harness;
let api: Client;
let other: Client;

beforeAll(async () => {
  h = await startHarness();
  api = client(h, await h.key("alpha"));
  other = client(h, await h.key("beta"));
});
afterAll(() => h.close());

interface RoleBody {
  id: number;
  name: string;
  description: string | null;
  permissions: string[];
  built_in: boolean;
}

const roleNamed = async (c: Client, name: string): Promise<RoleBody> => {
  const r = await c.get(`/v2/roles?limit=100`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const found = (r.body.data as RoleBody[]).find((role) => role.name === name);
  expect(found, name).toBeDefined();
  return found!;
};

describe("built-in roles", () => {
  test("every account has Admin (*) and User (no permission), marked built in", async () => {
    for (const c of [api, other]) {
      const r = await c.get("/v2/roles");
      expect(r.status).toBe(200);
      const byName = Object.fromEntries((r.body.data as RoleBody[]).map((role) => [role.name, role]));
      expect(byName.Admin).toMatchObject({ permissions: ["*"], built_in: true });
      expect(byName.User).toMatchObject({ permissions: [], built_in: true });
    }
    expect((await roleNamed(api, "Admin")).id).not.toBe((await roleNamed(other, "Admin")).id);
  });

  test("a built-in role keeps its name, Admin keeps *, and neither can be deleted; nothing is changed", async () => {
    const admin = await roleNamed(api, "Admin");
    const user = await roleNamed(api, "User");
    const renamed = await api.patch(`/v2/roles/${user.id}`, { name: "Member" });
    expect(renamed.status).toBe(422);
    expect(renamed.body.error.errors.name[0]).toMatch(/built-in role User cannot be renamed/);
    const narrowed = await api.patch(`/v2/roles/${admin.id}`, { permissions: ["view:user"] });
    expect(narrowed.status).toBe(422);
    expect(narrowed.body.error.errors.permissions[0]).toMatch(/keeps every permission/);
    for (const id of [admin.id, user.id]) {
      const deleted = await api.delete(`/v2/roles/${id}`);
      expect(deleted.status).toBe(422);
      expect(deleted.body.error.errors.id[0]).toMatch(/cannot be deleted/);
    }
    const batch = await api.delete("/v2/roles/batch", { resources: [user.id] });
    expect(batch.status).toBe(422);
    expect(await roleNamed(api, "Admin")).toEqual(admin);
    expect(await roleNamed(api, "User")).toEqual(user);
    // The User role's permissions may change: they are what every holder of it gets.
    const widened = await api.patch(`/v2/roles/${user.id}`, { permissions: ["view:rank"] });
    expect(widened.status, JSON.stringify(widened.body)).toBe(200);
    expect(widened.body.data.permissions).toEqual(["view:rank"]);
    expect((await api.patch(`/v2/roles/${user.id}`, { permissions: [] })).status).toBe(200);
  });
});

describe("CRUD", () => {
  test("create, read, update and delete a role with known permissions", async () => {
    const made = await api.post("/v2/roles", {
      name: "Recruiter",
      description: "Handles applications",
      permissions: ["view:user", "create:user", "view:user"],
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(made.body.data).toMatchObject({
      name: "Recruiter",
      permissions: ["view:user", "create:user"],
      built_in: false,
    });
    const id = made.body.data.id as number;
    expect((await api.get(`/v2/roles/${id}`)).body.data.name).toBe("Recruiter");
    expect((await other.get(`/v2/roles/${id}`)).status).toBe(404);
    const updated = await api.put(`/v2/roles/${id}`, { permissions: ["*"] });
    expect(updated.status).toBe(200);
    expect(updated.body.data.permissions).toEqual(["*"]);
    expect((await api.delete(`/v2/roles/${id}`)).status).toBe(200);
    expect((await api.get(`/v2/roles/${id}`)).status).toBe(404);
  });

  test("an unknown permission is a 422 naming the closest known one, and nothing is stored", async () => {
    const before = (await api.get("/v2/roles?limit=100")).body.data.length;
    const r = await api.post("/v2/roles", { name: "Typo", permissions: ["view:user", "veiw:rank"] });
    expect(r.status).toBe(422);
    expect(r.body.error.errors.permissions).toEqual(['The permission "veiw:rank" is unknown: did you mean view:rank?']);
    expect((await api.get("/v2/roles?limit=100")).body.data.length).toBe(before);
  });

  test("permissions must be a list of strings; a name is unique in the account but not across accounts", async () => {
    expect((await api.post("/v2/roles", { name: "Bad", permissions: "view:user" })).status).toBe(422);
    expect((await api.post("/v2/roles", { name: "Bad", permissions: [1] })).status).toBe(422);
    expect((await api.post("/v2/roles", { name: "Bad" })).status).toBe(422);
    expect((await api.post("/v2/roles", { name: "Twice", permissions: [] })).status).toBe(200);
    const again = await api.post("/v2/roles", { name: "Twice", permissions: [] });
    expect(again.status).toBe(422);
    expect(again.body.error.errors.name).toBeDefined();
    expect((await other.post("/v2/roles", { name: "Twice", permissions: [] })).status).toBe(200);
  });

  test("a key without the role scopes is refused", async () => {
    const reader = client(h, await h.key("alpha", "view:user"));
    expect((await reader.get("/v2/roles")).status).toBe(403);
    expect((await reader.post("/v2/roles", { name: "Nope", permissions: [] })).status).toBe(403);
  });
});

describe("people and roles", () => {
  test("a new person gets the default roles; attach, detach and sync change them; User.roles shows them", async () => {
    const person = (await api.post("/v2/users", { name: "Role Holder", email: "role.holder@example.com" })).body.data;
    const listed = await api.get(`/v2/users/${person.id}/roles`);
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect((listed.body.data as RoleBody[]).map((r) => r.name)).toEqual(["User"]);

    const medic = (await api.post("/v2/roles", { name: "Medic", permissions: ["view:qualification"] })).body.data;
    const attached = await api.post(`/v2/users/${person.id}/roles/attach`, { resources: [medic.id] });
    expect(attached.status, JSON.stringify(attached.body)).toBe(200);
    expect(attached.body.attached).toEqual([medic.id]);
    const included = await api.get(`/v2/users/${person.id}?include=roles`);
    expect((included.body.data.roles as RoleBody[]).map((r) => r.name).sort()).toEqual(["Medic", "User"]);

    const admin = await roleNamed(api, "Admin");
    const synced = await api.patch(`/v2/users/${person.id}/roles/sync`, { resources: [admin.id] });
    expect(synced.status).toBe(200);
    expect(synced.body.attached).toEqual([admin.id]);
    expect(synced.body.detached.length).toBe(2);

    const graph = await api.graphql(`query($id: Int!) { user(rowId: $id) { roles { nodes { name permissions } } } }`, {
      id: person.id,
    });
    expect(graph.body.errors).toBeUndefined();
    expect(graph.body.data.user.roles.nodes).toEqual([{ name: "Admin", permissions: ["*"] }]);

    const detached = await api.delete(`/v2/users/${person.id}/roles/detach`, { resources: [admin.id] });
    expect(detached.body.detached).toEqual([admin.id]);
    expect((await api.get(`/v2/users/${person.id}/roles`)).body.data).toEqual([]);
  });

  test("another account's role cannot be attached, and nothing is written", async () => {
    const person = (await api.post("/v2/users", { name: "Role Guard", email: "role.guard@example.com" })).body.data;
    const foreign = await roleNamed(other, "Admin");
    const r = await api.post(`/v2/users/${person.id}/roles/attach`, { resources: [foreign.id] });
    expect(r.status).toBe(422);
    expect(((await api.get(`/v2/users/${person.id}/roles`)).body.data as RoleBody[]).map((x) => x.name)).toEqual([
      "User",
    ]);
  });

  test("the default_roles setting decides what a new person gets; a name no role has is skipped", async () => {
    const setting = (await api.get("/v2/settings?limit=100")).body.data.find(
      (s: { name: string }) => s.name === "default_roles",
    );
    expect(setting.payload).toEqual(["User"]);
    const set = async (payload: unknown) => {
      const r = await h.db.store.prisma.setting.update({
        where: { id: setting.id },
        data: { payload: payload as object },
      });
      expect(r.id).toBe(setting.id);
    };
    await set(["Medic", "Nobody"]);
    try {
      const person = (await api.post("/v2/users", { name: "Medic Recruit", email: "medic.recruit@example.com" })).body
        .data;
      expect(((await api.get(`/v2/users/${person.id}/roles`)).body.data as RoleBody[]).map((r) => r.name)).toEqual([
        "Medic",
      ]);
      await set([]);
      const bare = (await api.post("/v2/users", { name: "No Roles", email: "no.roles@example.com" })).body.data;
      expect((await api.get(`/v2/users/${bare.id}/roles`)).body.data).toEqual([]);
    } finally {
      await set(["User"]);
    }
  });

  test("GraphQL creates a role and lists the account's roles", async () => {
    const made = await api.graphql(
      `mutation { createRole(input: { name: "Quartermaster", permissions: ["view:award"] }) { role { name permissions builtIn } } }`,
    );
    expect(made.body.errors).toBeUndefined();
    expect(made.body.data.createRole.role).toEqual({
      name: "Quartermaster",
      permissions: ["view:award"],
      builtIn: false,
    });
    const bad = await api.graphql(
      `mutation { createRole(input: { name: "Typo", permissions: ["update:rnak"] }) { role { name } } }`,
    );
    expect(bad.body.errors[0].extensions.code).toBe("VALIDATION");
  });
});

test("the CLI: a new account has the built-in roles", async () => {
  const run = promisify(execFile);
  await run(process.execPath, [...cliArgs, "accounts:create", "--name", "gamma"], {
    env: { ...process.env, DATABASE_URL: h.config.databaseUrl },
  });
  const gamma = client(h, await h.key("gamma"));
  expect(((await gamma.get("/v2/roles")).body.data as RoleBody[]).map((r) => r.name)).toEqual(["Admin", "User"]);
});

test("the CLI: roles:create, roles:grant, roles:revoke, roles:list, roles:delete; refusals name what is wrong", async () => {
  const run = promisify(execFile);
  const cli = async (...args: string[]) => {
    const { stdout } = await run(process.execPath, [...cliArgs, ...args], {
      env: { ...process.env, DATABASE_URL: h.config.databaseUrl },
    });
    return stdout;
  };
  const refusal = (...args: string[]) =>
    cli(...args).then(
      () => "",
      (error: { stderr: string }) => error.stderr,
    );
  const api = client(h, await h.key("alpha"));
  const person = (await api.post("/v2/users", { name: "Cli Person", email: "cli.person@example.com" })).body.data;
  expect(
    await cli("roles:create", "--account", "alpha", "--name", "Cli Clerk", "--permissions", "view:user,update:rank"),
  ).toMatch(/^Created role \d+ \(Cli Clerk\)/);
  expect(
    await refusal("roles:create", "--account", "alpha", "--name", "Cli Typo", "--permissions", "view:usr"),
  ).toMatch(/view:user/);
  expect(await cli("roles:grant", "--account", "alpha", "--email", person.email, "--role", "Cli Clerk")).toMatch(
    /now holds Cli Clerk/,
  );
  const held = async () =>
    ((await api.get(`/v2/users/${person.id}/roles`)).body.data as RoleBody[]).map((r) => r.name).sort();
  expect(await held()).toEqual(["Cli Clerk", "User"]);
  const listed = await cli("roles:list", "--account", "alpha");
  expect(listed.split("\n").find((line) => line.includes("Cli Clerk"))).toMatch(/\tno\tview:user,update:rank\t1$/);
  expect(await cli("roles:revoke", "--account", "alpha", "--email", person.email, "--role", "Cli Clerk")).toMatch(
    /no longer holds/,
  );
  expect(await held()).toEqual(["User"]);
  expect(await refusal("roles:delete", "--account", "alpha", "--name", "Admin")).toMatch(/built-in|built in/i);
  expect(await refusal("roles:grant", "--account", "alpha", "--email", person.email, "--role", "Nope")).toMatch(
    /No role named Nope: the account has Admin, /,
  );
  expect(await cli("roles:delete", "--account", "alpha", "--name", "Cli Clerk")).toMatch(/^Deleted role/);
  expect((await api.get("/v2/roles")).body.data.map((r: RoleBody) => r.name)).not.toContain("Cli Clerk");
});
