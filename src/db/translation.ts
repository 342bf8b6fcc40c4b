/**
 * What the SQL reader and writer share as they translate Prisma's arguments: the arguments, and `Unsupported`, raised
 * while planning for anything our SQL leaves to Prisma.
 */

/** Prisma's arguments of a call (`where`, `select`, `data`, ...), as the reader and writer take them: checked as read. */
export type Args = Record<string, unknown>;

export const isPlainObject = (value: unknown): value is Args =>
  typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);

/** A value Prisma takes alone or in a list (`AND`, `orderBy`, `by`), as a list. */
export const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);

export class Unsupported extends Error {}

/** The work `plan` prepares, or null when planning met something left to Prisma (any other error is a bug: thrown). */
export function plannedOrNull<T>(plan: () => T): T | null {
  try {
    return plan();
  } catch (error) {
    if (error instanceof Unsupported) return null;
    throw error;
  }
}
export function unsupported(what: string): never {
  throw new Unsupported(what);
}
