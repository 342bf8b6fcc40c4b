import type { ActionRun } from "../resources/define.ts";
import { revealLinkUrl } from "../resources/sign-in-link.ts";
import { setPassword } from "./passwords.ts";
import { createSignInLink, linkUrl } from "./sign-in-links.ts";

/*
 * The work of a user's password actions (src/resources/user.ts declares them): `POST /users/{user}/password` and
 * `POST /users/{user}/invitation`. The row is the caller's account's user (another account's is a 404 before this);
 * the scope, `update:user`, was checked.
 */

type Args = Parameters<ActionRun<"User">>[0];

/** Sets the person's password; the answer is the user (which carries no password). */
async function setUserPassword({ row, input, ctx }: Args): Promise<number> {
  await setPassword(ctx.store, row.id, input.password);
  return row.id;
}

/** A new invitation link for the person; the answer is the link, its URL shown this once. */
async function createUserInvitation({ row, ctx }: Args): Promise<number> {
  const link = await createSignInLink(ctx.store, { accountId: row.accountId, userId: row.id, purpose: "invitation" });
  revealLinkUrl(ctx, link.id, linkUrl(ctx.baseUrl, link.token));
  return link.id;
}

/** The work of each password action, by its field (`ActionDef.field`). */
export const passwordActions: Readonly<Record<string, ActionRun>> = { setUserPassword, createUserInvitation };
