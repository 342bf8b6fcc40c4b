import type { AdapterPayload } from "oidc-provider";
import type { Database } from "../../db/prisma.ts";
import { knownScopes } from "../../resources/scopes.ts";
import { oidcScopes } from "../../resources/oauth-client.ts";

/*
 * Our OAuthClient rows as oidc-provider's client metadata. Read on every use (oidc-provider caches the Client object
 * it builds by the metadata's hash, not by id), so a client disabled or changed through the API is refused or
 * changed on the next request, on every instance.
 */

/** Client metadata of ours (oidc-provider's `extraClientMetadata.properties`). */
export const ACCOUNT_METADATA = "muster_account_id";
export const ORIGINS_METADATA = "muster_allowed_origins";
export const API_SCOPES_METADATA = "muster_api_scopes";

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];

/** The API scopes a client may ask for, `*` spelt out (a scope `*` too, for a token that asks for everything). */
export const clientApiScopes = (scopes: unknown): string[] => {
  const list = strings(scopes);
  return list.includes("*") ? ["*", ...knownScopes] : list;
};

/**
 * The client `clientId` as oidc-provider reads it, or undefined when there is none or it is disabled. A confidential
 * client's `client_secret` is the SHA-256 of its secret (the one thing stored): see src/auth/oidc/client-secret-internals.ts.
 */
export async function clientMetadataOf(db: Database, clientId: string): Promise<AdapterPayload | undefined> {
  const row = await db.prisma.oAuthClient.findUnique({ where: { clientId } });
  if (!row || row.disabledAt) return undefined;
  const apiScopes = clientApiScopes(row.scopes);
  return {
    client_id: row.clientId,
    client_name: row.name,
    redirect_uris: strings(row.redirectUris),
    post_logout_redirect_uris: strings(row.postLogoutRedirectUris),
    response_types: ["code"],
    grant_types: row.public
      ? ["authorization_code", "refresh_token"]
      : ["authorization_code", "refresh_token", "client_credentials"],
    scope: [...oidcScopes, ...apiScopes].join(" "),
    ...(row.public || !row.secretHash
      ? { token_endpoint_auth_method: "none" }
      : { token_endpoint_auth_method: "client_secret_basic", client_secret: row.secretHash }),
    [ACCOUNT_METADATA]: row.accountId,
    [ORIGINS_METADATA]: strings(row.allowedOrigins),
    [API_SCOPES_METADATA]: apiScopes,
  };
}
