import type { Plugin } from "graphql-yoga";
import { ApiError, errorKinds, type ErrorCode } from "../core/errors.ts";
import { graphqlErrorBody } from "./errors.ts";
import { idsOf } from "./ids.ts";
import { Response } from "./response.ts";

const codes: Record<number, ErrorCode> = {
  400: "BAD_REQUEST",
  404: "NOT_FOUND",
  405: "METHOD_NOT_ALLOWED",
  415: "UNSUPPORTED_MEDIA_TYPE",
};
const messages: Partial<Record<ErrorCode, string>> = {
  UNSUPPORTED_MEDIA_TYPE: "A GraphQL request body must be JSON (application/json) or multipart/form-data.",
};

/**
 * Yoga refuses some requests to `/graphql` itself (a body that is neither JSON nor multipart: 415) with an empty body.
 * Those get a GraphQL error body like every other refusal, code and ids in `extensions`.
 */
export function graphqlErrorBodiesPlugin(): Plugin {
  return {
    onResponse({ request, response, setResponse }) {
      const code = codes[response.status];
      if (!code || response.headers.get("content-type") || !new URL(request.url).pathname.startsWith("/graphql"))
        return;
      const headers = Object.fromEntries(response.headers.entries());
      delete headers["content-length"];
      const body = graphqlErrorBody(new ApiError(code, messages[code]), idsOf(request));
      setResponse(Response.json(body, { status: errorKinds[code].status, headers }));
    },
  };
}
