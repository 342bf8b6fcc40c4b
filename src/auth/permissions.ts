import type { Database } from "../db/prisma.ts";

/** What a person's role links hold, as the queries below select them. */
type RoleLinks = ReadonlyArray<{ role: { permissions: unknown } }>;

/** The permissions of a person's roles (scope names, or `*`), from their role links. */
export const permissionsOf = (roleLinks: RoleLinks): string[] =>
  roleLinks.flatMap((link) =>
    Array.isArray(link.role.permissions) ? link.role.permissions.filter((p): p is string => typeof p === "string") : [],
  );

/** The permissions of the account's person `userId`'s roles, read now; null when there is no such person. */
export async function personPermissions(db: Database, accountId: number, userId: number): Promise<string[] | null> {
  const person = await db.prisma.user.findFirst({
    where: { id: userId, accountId },
    select: { roleLinks: { select: { role: { select: { permissions: true } } } } },
  });
  return person ? permissionsOf(person.roleLinks) : null;
}
