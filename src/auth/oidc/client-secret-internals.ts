import { createHash, timingSafeEqual } from "node:crypto";
import type { default as Provider } from "oidc-provider";

/*
 * Library: oidc-provider.
 * Checked against: oidc-provider 9.13.3
 *
 * The one module that replaces a method of oidc-provider's. What it relies on (test/library-contracts.test.ts checks
 * it): the provider compares a presented client secret with the client metadata's `client_secret` in
 * `Client.prototype.compareClientSecret(actual)` (lib/models/client.js), called from lib/shared/client_auth.js for
 * client_secret_basic and client_secret_post, with the Client instance as `this` and its metadata's `client_secret`
 * as `this.clientSecret`.
 *
 * Why the public API did not do: oidc-provider keeps a client's secret as given and compares it as given; it has no
 * option for a stored hash. We store only the SHA-256 of a secret (as of API keys: a leaked table leaks no credential),
 * give the provider that hash as `client_secret` (src/auth/oidc/clients.ts), and compare here: SHA-256 of what was
 * presented, in constant time. The secret is never an HMAC key: the provider allows no HS* algorithm (`enabledJWA` in
 * provider.ts), the one other use oidc-provider makes of `client_secret`.
 */

export function compareHashedClientSecret(this: { clientSecret?: string }, actual: unknown): boolean {
  if (typeof actual !== "string" || typeof this.clientSecret !== "string") return false;
  const presented = createHash("sha256").update(actual).digest();
  const stored = Buffer.from(this.clientSecret, "hex");
  return stored.length === presented.length && timingSafeEqual(presented, stored);
}

/** Puts the hashed comparison in place of the provider's own, on the provider's Client class. */
export function compareClientSecretsHashed(provider: Provider): void {
  provider.Client.prototype.compareClientSecret = compareHashedClientSecret;
}
