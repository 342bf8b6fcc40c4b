import {
  defaultExtractPersistedOperationId,
  usePersistedOperations,
  type ExtractPersistedOperationId,
} from "@graphql-yoga/plugin-persisted-operations";
import type { Plugin } from "graphql-yoga";
import type { Config } from "../core/config.ts";
import type { Database } from "../db/prisma.ts";
import { authenticate } from "../auth/authenticate.ts";
import { ARBITRARY_DOCUMENTS_SCOPE, maySendAnyDocument } from "../auth/keys.ts";
import { ApiError, type ErrorCode } from "../core/errors.ts";
import { idsOf } from "./ids.ts";
// Bundled into dist/ (and so part of its build stamp): a changed manifest rebuilds the server.
import manifest from "../../schema/persisted-documents.json" with { type: "json" };

/**
 * The trusted documents: the client preset's manifest of the typed client's documents (codegen.ts; `npm run generate`
 * copies it to schema/), id (`sha256:<hex of the normalized document>`) → document text.
 */
export const trustedDocuments: ReadonlyMap<string, string> = new Map(
  Object.entries(manifest as Record<string, string>),
);

/**
 * An ApiError (its status and PERSCOM type) whose GraphQL `extensions.code` names the trusted-documents case, with the
 * request's ids as an executed operation's errors have them.
 */
function trustedDocumentError(request: Request, kind: ErrorCode, code: string, message: string): ApiError {
  const error = new ApiError(kind, message);
  const ids = idsOf(request);
  Object.assign(error.extensions as Record<string, unknown>, {
    code,
    request_id: ids.requestId,
    trace_id: ids.traceId,
  });
  return error;
}

/**
 * The id a request names: `documentId` in a JSON body or a GET query string (what the client preset's
 * `document.__meta__.hash` holds), or Apollo's `extensions.persistedQuery.sha256Hash` (plain hex, the same hash).
 */
const documentIdOf: ExtractPersistedOperationId = (params, request, context) => {
  const id =
    (params as { documentId?: unknown }).documentId ??
    (request.method === "GET" ? new URL(request.url).searchParams.get("documentId") : null);
  if (typeof id === "string") return id;
  const apolloHash = defaultExtractPersistedOperationId(params, request, context);
  return apolloHash === null ? null : `sha256:${apolloHash}`;
};

/** The client's id as it may be repeated in a message: quoted, and cut short when long. */
const shown = (id: string) => JSON.stringify(id.length > 80 ? `${id.slice(0, 80)}…` : id);

/**
 * Trusted documents on `/graphql`: a request may send `documentId` instead of `query`, and runs the manifest's document.
 * With `GRAPHQL_TRUSTED_DOCUMENTS_ONLY`, a `query` text is refused (403 `TRUSTED_DOCUMENTS_ONLY`) unless the key holds
 * `graphql:arbitrary` or `*`. A request without a usable key goes on to its usual 401 (only introspection runs
 * keyless), so a wrong key is told so. REST routes execute their own prepared documents and never reach this hook.
 */
export function trustedDocumentsPlugin(db: Database, config: Config): Plugin {
  const mayQuery = async (request: Request): Promise<boolean> => {
    const { auth } = await authenticate(db, config, request, new URL(request.url));
    return !auth || maySendAnyDocument(auth.scopes);
  };
  return usePersistedOperations({
    getPersistedOperation(id, request) {
      const document = trustedDocuments.get(id);
      if (document === undefined) {
        throw trustedDocumentError(
          request,
          "NOT_FOUND",
          "PERSISTED_QUERY_NOT_FOUND",
          `No trusted document has the id ${shown(id)}: ids are the keys of schema/persisted-documents.json ("sha256:<hex>").`,
        );
      }
      return document;
    },
    extractPersistedOperationId: documentIdOf,
    allowArbitraryOperations: config.graphqlTrustedDocumentsOnly ? mayQuery : true,
    customErrors: {
      keyNotFound: ({ request }) =>
        trustedDocumentError(
          request,
          "BAD_REQUEST",
          "BAD_REQUEST",
          "Send a GraphQL document as `query`, or the id of a trusted document as `documentId`.",
        ),
      persistedQueryOnly: ({ request }) =>
        trustedDocumentError(
          request,
          "FORBIDDEN",
          "TRUSTED_DOCUMENTS_ONLY",
          `This API key may send only trusted documents (\`documentId\`, see schema/persisted-documents.json): a \`query\` text needs the ${ARBITRARY_DOCUMENTS_SCOPE} scope (or *) while GRAPHQL_TRUSTED_DOCUMENTS_ONLY is on.`,
        ),
    },
  });
}
