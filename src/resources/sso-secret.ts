import { randomBytes } from "node:crypto";
import type { Store } from "../db/store.ts";

/*
 * The account's SSO secret (src/auth/sso.ts verifies tokens with it): made here, below the registry, so that the
 * settings' `rotateSsoSecret` command (`POST /sso/rotate`) and the CLI's `sso:rotate` make it the same way.
 */

/** A new SSO secret: 32 random bytes behind a prefix that says what it is. */
export const newSsoSecret = (): string => `sso_${randomBytes(32).toString("base64url")}`;

/** Gives the account a new SSO secret (tokens signed with the old one stop working at once) and returns it. */
export async function rotateSsoSecret(store: Store, accountId: number): Promise<string> {
  const secret = newSsoSecret();
  await store.prisma.account.update({ where: { id: accountId }, data: { ssoSecret: secret } });
  return secret;
}
