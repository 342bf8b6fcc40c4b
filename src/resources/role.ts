import { closestNames } from "../core/closest.ts";
import { FieldErrorBag, validationError } from "../core/errors.ts";
import { belongsToMany, bool, defineResource, json, string, text, type Hooks } from "./define.ts";
import { jsonString, listOf } from "./json-shapes.ts";

/*
 * A role gives the people who hold it permissions: scope names of the same vocabulary as API keys (`view:user`,
 * `update:rank`, ...), or `*` for all. What a signed-in person may do is their roles' permissions plus the self-service
 * rights every person has. Every account has the built-in roles below, made with the account.
 */

/** The roles every account has; `default_roles` (a setting) names those a new person gets. */
export const builtInRoles = [
  { name: "Admin", description: "Every permission of the account.", permissions: ["*"] },
  {
    name: "User",
    description: "Self-service only: a person's own profile, records, submissions, tasks and messages.",
    permissions: [],
  },
] as const;

const ADMIN = builtInRoles[0].name;

/** A new person gets the roles the account's `default_roles` setting names (roles of other names are skipped). */
export const giveDefaultRoles: NonNullable<Hooks["afterCreate"]> = async ({ row, ctx, tx, writes }) => {
  const accountId = ctx.auth!.accountId;
  const setting = await tx.findFirst("Setting", {
    where: { accountId, group: "permission", name: "default_roles" },
    select: { payload: true },
  });
  const payload: unknown = setting?.payload;
  const names = Array.isArray(payload) ? payload.filter((name): name is string => typeof name === "string") : [];
  if (names.length === 0) return;
  const roles = await tx.findMany("Role", {
    where: { accountId, name: { in: names } },
    select: { id: true },
    orderBy: [{ id: "asc" }],
  });
  for (const { id } of roles as Array<{ id: number }>) await writes.create("userRole", { userId: row.id, roleId: id });
};

/** Permissions are known scope names or `*`, each once; a built-in role keeps its name, and Admin keeps `*`. */
const checkRole: NonNullable<Hooks["beforeWrite"]> = ({ data, existing, scopes }) => {
  const bag = new FieldErrorBag();
  if (Array.isArray(data.permissions)) {
    const known = new Set(scopes);
    const permissions = data.permissions as string[];
    for (const permission of permissions) {
      if (permission !== "*" && !known.has(permission)) {
        bag.add(
          "permissions",
          `The permission "${permission}" is unknown: did you mean ${closestNames(permission, scopes).join(" or ")}?`,
        );
      }
    }
    data.permissions = [...new Set(permissions)];
  }
  if (existing?.builtIn) {
    if (typeof data.name === "string" && data.name !== existing.name)
      bag.add("name", `The built-in role ${String(existing.name)} cannot be renamed.`);
    const permissions = data.permissions as string[] | undefined;
    if (existing.name === ADMIN && permissions && !(permissions.length === 1 && permissions[0] === "*")) {
      bag.add("permissions", `The built-in role ${ADMIN} keeps every permission (["*"]).`);
    }
  }
  bag.throwIfAny();
};

export const role = defineResource<"Role">({
  name: "role",
  model: "Role",
  path: "roles",
  description:
    "A set of permissions given to the people who hold it. A person's rights are their roles' permissions plus the self-service " +
    "rights every signed-in person has. `Admin` (every permission) and `User` (self-service only) are built in.",
  fields: {
    name: string({ required: true, unique: true, max: 255, description: "The role's name, unique in the account." }),
    description: text({ max: 1000, description: "What the role is for, for people." }),
    permissions: json(
      listOf(jsonString({ description: "A scope name such as `view:user`, or `*` for every permission." })),
      {
        required: true,
        description:
          'Scope names of the same vocabulary as API keys (`view:user`, `update:rank`, ...), or `["*"]` for every permission.',
        invalid: ({ path, value }) =>
          path.length
            ? `The permission ${JSON.stringify(value)} is unknown.`
            : "The permissions field must be a list of scope names.",
      },
    ),
    builtIn: bool({
      writable: false,
      description: "Whether the role is one every account has (`Admin`, `User`): it cannot be renamed or deleted.",
    }),
  },
  relations: {
    users: belongsToMany({
      target: "user",
      field: "userLinks",
      pivot: { model: "UserRole", parentKey: "roleId", relatedKey: "userId", related: "user", as: "link", fields: {} },
    }),
  },
  includes: ["users"],
  orderBy: [{ id: "asc" }],
  hooks: {
    beforeWrite: checkRole,
    async beforeDelete({ ids, tx, ctx }) {
      const builtIn = await tx.findMany("Role", {
        where: { id: { in: ids }, accountId: ctx.auth!.accountId, builtIn: true },
        select: { name: true },
      });
      if (builtIn.length)
        throw validationError({ id: builtIn.map((r) => `The built-in role ${String(r.name)} cannot be deleted.`) });
    },
  },
});
