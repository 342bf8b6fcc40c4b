import pkg from "../../package.json" with { type: "json" };
import { operations } from "../resources/operations.ts";
import { Bodies } from "./bodies.ts";
import { Parameters } from "./parameters.ts";
import { pathsOf, tagOf } from "./paths.ts";
import { errorResponses, errorSchema, sharedHeaders, SuccessBodies } from "./responses.ts";
import { Components, idSchema, RowSchemas } from "./schema.ts";
import { knownScopes } from "../resources/scopes.ts";
import { scopeInWords } from "../resources/scope-words.ts";
import { oidcScopes } from "../resources/oauth-client.ts";
import { OIDC_PREFIX } from "../auth/oidc/provider.ts";

const description = `PERSCOM v2 compatible personnel management API. Every route answers under \`/v1\` and \`/v2\`.

Authenticate with an API key: \`Authorization: Bearer <key>\`. PERSCOM's \`?apikey=<key>\` is accepted too but discouraged:
a key in the URL lands in server logs and browser history. A key carries scopes such as
\`view:rank\` or \`*\`; each operation lists the scopes it needs. Single rows answer \`{"data": {...}}\`, lists add \`links\`
and \`meta\`, link operations answer the ids they changed, and every error answers \`{"error": {...}}\`.`;

/** Every scope an access token may ask for, in words: OpenID's own, and the API's (`*` included). */
const oauthScopes = () =>
  Object.fromEntries([...oidcScopes, "*", ...knownScopes].map((scope) => [scope, scopeInWords(scope)]));

/** The OpenAPI 3.1 document of the REST API, generated from the operation catalogue. */
export function buildOpenApi(): Record<string, unknown> {
  const components = new Components();
  const rows = new RowSchemas(components);
  const bodies = new Bodies(components);
  const success = new SuccessBodies(components, rows);
  const parameters = new Parameters();
  components.ref("Id", () => idSchema);
  const paths = pathsOf(bodies, success, parameters);
  const tags = new Map(operations.map((op) => tagOf(op)).map((t) => [t.name, t]));
  components.schemas.Error = errorSchema;
  return {
    openapi: "3.1.0",
    info: { title: "Muster", version: pkg.version, description },
    servers: [{ url: "/", description: "This service" }],
    security: [{ bearerAuth: [] }, { apiKeyQuery: [] }, { oauth2: [] }],
    tags: [...tags.values()].sort((a, b) => a.name.localeCompare(b.name)),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description:
            "An API key as a Bearer token: the way to send it (`mst_...`; made by `keys:create` or `POST /v2/api-keys`). A publishable key " +
            "(`mpk_...`) is one meant for public pages: view scopes of public resources and `create:submission` only, no personal field, " +
            "refused (403) from a browser origin it does not list; its GET responses may come from the shared cache. Or an SSO token: an HS256 JWT signed with the account's SSO secret " +
            "(`sub` a person's id or email, `scopes` or `scope`, `exp`, and `tenant` or the X-Perscom-Id header), which acts as that " +
            "person within their roles' permissions. Or an access token of the OpenID provider (the `oauth2` scheme).",
        },
        apiKeyQuery: {
          type: "apiKey",
          in: "query",
          name: "apikey",
          description:
            "The API key as the `apikey` query parameter, as PERSCOM takes it. Discouraged: the key lands in server logs and browser history.",
        },
        oauth2: {
          type: "oauth2",
          description:
            "An access token of this service's OpenID Connect provider, sent as `Authorization: Bearer`: a person signed in through an " +
            "OAuth client of the account (authorization code, PKCE required for public clients), or the client itself (client credentials). " +
            "It may do what it asked for ∩ the client's scopes ∩ the person's roles, plus every person's self-service rights. " +
            "Discovery: `/.well-known/openid-configuration`.",
          flows: {
            authorizationCode: {
              authorizationUrl: `${OIDC_PREFIX}/auth`,
              tokenUrl: `${OIDC_PREFIX}/token`,
              refreshUrl: `${OIDC_PREFIX}/token`,
              scopes: oauthScopes(),
            },
            clientCredentials: { tokenUrl: `${OIDC_PREFIX}/token`, scopes: oauthScopes() },
          },
        },
        openIdConnect: {
          type: "openIdConnect",
          openIdConnectUrl: "/.well-known/openid-configuration",
          description: "The same provider, by its discovery document (endpoints, signing keys, scopes).",
        },
      },
      parameters: parameters.components,
      headers: sharedHeaders,
      responses: { ...errorResponses(), ...success.responses },
      schemas: components.schemas,
    },
  };
}

const topLevel = [
  "openapi",
  "info",
  "jsonSchemaDialect",
  "servers",
  "security",
  "tags",
  "paths",
  "webhooks",
  "components",
];

/** Objects whose key order means something: renderers list security schemes in it, and offer the first. */
const ordered = new Set(["/components/securitySchemes"]);

/** Objects with their keys sorted (the top level in OpenAPI's own order), so the printed document is stable. */
function sorted(value: unknown, at = ""): unknown {
  if (Array.isArray(value)) return value.map((v, i) => sorted(v, `${at}/${i}`));
  if (value === null || typeof value !== "object") return value;
  const keys = Object.keys(value);
  if (!ordered.has(at))
    keys.sort((a, b) => (at === "" ? topLevel.indexOf(a) - topLevel.indexOf(b) : a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(keys.map((k) => [k, sorted((value as Record<string, unknown>)[k], `${at}/${k}`)]));
}

/** The document with stable key order, pretty-printed (what `schema/openapi.json` holds) or compact (what the server sends). */
export function printOpenApi({ compact = false } = {}): string {
  return compact ? JSON.stringify(sorted(buildOpenApi())) : `${JSON.stringify(sorted(buildOpenApi()), null, 2)}\n`;
}
