import { Prisma } from "../generated/prisma/client.ts";

/** SQLSTATEs PostgreSQL answers a refused write with, as the Prisma error codes the rest of the service knows. */
const prismaCodeOf: Record<string, { code: string; message: string }> = {
  "23505": { code: "P2002", message: "Unique constraint failed" },
  "23503": { code: "P2003", message: "Foreign key constraint violated" },
};

/**
 * The error to throw for a statement PostgreSQL refused inside a transaction. The transaction is aborted then, so the
 * statement cannot be handed to Prisma for its own error: a constraint violation becomes the Prisma error Prisma would
 * have thrown; anything else is thrown as it is.
 */
export function refusedWriteError(error: unknown): unknown {
  const state = (error as { code?: unknown })?.code;
  const known = typeof state === "string" ? prismaCodeOf[state] : undefined;
  if (!known) return error;
  const { constraint, detail } = error as { constraint?: string; detail?: string };
  return new Prisma.PrismaClientKnownRequestError(
    `${known.message}${constraint ? ` on the constraint: \`${constraint}\`` : ""}`,
    {
      code: known.code,
      clientVersion: Prisma.prismaVersion.client,
      meta: { constraint, detail },
    },
  );
}

/**
 * PostgreSQL rolled the transaction back to break a deadlock or a serialisation conflict: nothing was written, and
 * running it again may succeed. Prisma reports these as P2034; a statement of ours as the SQLSTATE.
 */
export function isDeadlock(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return code === "40P01" || code === "40001" || code === "P2034";
}
