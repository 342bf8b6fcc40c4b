import { Response } from "./response.ts";
import type { Plugin, YogaServerInstance } from "graphql-yoga";
import type { GraphQLError, GraphQLSchema } from "graphql";
import { ApiError, errorHeaders, validationError } from "../core/errors.ts";
import { RowCapExceeded } from "../db/row-budget.ts";
import type { Config } from "../core/config.ts";
import { errorResponse, toApiError } from "./errors.ts";
import { idsOf } from "./ids.ts";
import { rawPathOf } from "./request-target.ts";
import { capIncludes, parseIncludes, searchIncludes } from "../rest/includes.ts";
import { queryLimitRules } from "./limits.ts";
import { matchRoute, versions } from "../rest/routes.ts";
import { DocumentCache } from "../rest/documents.ts";
import type { Body } from "../rest/body.ts";
import { bodyIncludes, envelope, variablesOf } from "../rest/kinds.ts";
import type { Context } from "../request/context.ts";
import { effectiveMethod, readBody } from "../rest/request.ts";
import { applyV1 } from "../rest/v1.ts";
import { logInternalError, loggerOf, reportRoute } from "./observability/index.ts";

const isGraphQL = (path: string) => path === "/graphql" || path.startsWith("/graphql/");

/**
 * Serves the PERSCOM REST routes: each request becomes variables for a prepared GraphQL operation,
 * executed through the same envelop pipeline (context, auth, plugins) as `/graphql`.
 */
export function restPlugin(schema: GraphQLSchema, config: Config): Plugin {
  let yoga: YogaServerInstance<Record<string, unknown>, Record<string, unknown>>;
  const documents = new DocumentCache(schema, queryLimitRules(config));
  return {
    onYogaInit({ yoga: instance }) {
      yoga = instance as typeof yoga;
    },
    async onRequest({ request, url, endResponse, serverContext }) {
      const path = rawPathOf(serverContext, url);
      if (isGraphQL(url.pathname) && isGraphQL(path)) return;
      endResponse(await handle(request, url, path, serverContext ?? {}));
    },
  };

  async function handle(request: Request, url: URL, path: string, serverContext: object): Promise<Response> {
    const ids = idsOf(request);
    try {
      // PERSCOM's order: route, then key (401/402), then the request's own validity (400/422).
      let body: Body = {};
      let unreadable: { error: unknown } | null = null;
      try {
        body = await readBody(request, config);
      } catch (error) {
        if (error instanceof ApiError && error.code === "PAYLOAD_TOO_LARGE") throw error;
        unreadable = { error };
      }
      const method = effectiveMethod(request.method, body);
      const match = matchRoute(method, path);
      if (!("route" in match)) throw new ApiError(match.methodMismatch ? "METHOD_NOT_ALLOWED" : "NOT_FOUND");
      if (!versions.includes(match.version)) throw new ApiError("BAD_VERSION");
      reportRoute(request, method, `/${match.version}/${match.route.segments.join("/")}`);
      const { contextFactory, execute } = yoga.getEnveloped({ request, ...serverContext });
      const contextValue = (await contextFactory()) as unknown as Context;
      const { op } = match.route;
      // A route that needs no credential runs alike with any, or none.
      if (!contextValue.auth && !op.anonymous) throw contextValue.authFailure ?? new ApiError("UNAUTHENTICATED");
      if (unreadable) throw unreadable.error;
      const requested = parseIncludes(url.searchParams.get("include"), op.includes);
      const includes = capIncludes(
        bodyIncludes[op.kind]
          ? [...new Set([...requested, ...searchIncludes(body.includes, op.includes, op)])].sort()
          : requested,
        config,
      );
      const prepared = documents.get(op, includes);
      const variableValues = variablesOf(op, match.params, url.searchParams, body);
      const result = await execute({
        schema,
        document: prepared.document,
        variableValues,
        contextValue,
        operationName: prepared.operationName,
      });
      if ("errors" in result && result.errors?.length) throw blamingIncludes(result.errors[0], includes);
      const data = (result as { data: { result: unknown } }).data.result;
      // GraphQL answers a missing or foreign row with null; PERSCOM with a 404.
      if (data === null) throw new ApiError("NOT_FOUND");
      const reply = envelope(op, data, prepared.shape, url);
      if (match.version === "v1") applyV1(op, reply);
      return Response.json(reply);
    } catch (error) {
      const apiError = toApiError(error);
      if (apiError.code === "INTERNAL") logInternalError(loggerOf(request), error, { ids, request });
      return errorResponse(apiError, ids, errorHeaders(apiError));
    }
  }
}

/** Past the row cap with includes: they are what loaded the rows (a page alone is at most MAX_PAGE_SIZE), so `include` is named. */
function blamingIncludes(error: GraphQLError, includes: readonly string[]): unknown {
  const original = error.originalError ?? error;
  if (!(original instanceof RowCapExceeded) || includes.length === 0) return error;
  return validationError({
    include: [
      `The requested includes load more than ${original.cap} rows (MAX_ROWS_PER_REQUEST): ask for fewer includes or a smaller page.`,
    ],
  });
}
