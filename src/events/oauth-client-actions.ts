import type { ActionRun } from "../resources/define.ts";
import { clientSecretHash, newClientSecret, revealClientSecret } from "../resources/oauth-client.ts";
import { validationError } from "../core/errors.ts";
import { inTransaction } from "../data/write.ts";

/** Gives a confidential client a new secret; the answer (the client, read again in this request) shows it. */
async function rotateSecret({ row, ctx }: Parameters<ActionRun<"OAuthClient">>[0]): Promise<number> {
  if (row.public) throw validationError({ public: ["A public client has no secret to rotate."] });
  const secret = newClientSecret();
  await inTransaction(ctx, (tx) =>
    tx.update("OAuthClient", { where: { id: row.id }, data: { secretHash: clientSecretHash(secret) } }),
  );
  revealClientSecret(ctx, row.id, secret);
  return row.id;
}

/** The work of each OAuth client action, by its field (`ActionDef.field`). */
export const oauthClientActions: Readonly<Record<string, ActionRun>> = { rotateOAuthClientSecret: rotateSecret };
