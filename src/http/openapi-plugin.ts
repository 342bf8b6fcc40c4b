import { Response } from "./response.ts";
import type { Plugin } from "graphql-yoga";
import { ApiError } from "../core/errors.ts";
import { errorResponse } from "./errors.ts";
import { idsOf } from "./ids.ts";
import { printOpenApi } from "../openapi/document.ts";

export const openApiPath = "/openapi.json";

let printed: string | undefined;
/** The document depends only on the registry: built once per process, on first request. */
const documentText = () => (printed ??= printOpenApi({ compact: true }));

/** Serves the OpenAPI document at `/openapi.json`: public (no API key); CORS as everywhere (src/http/cors.ts). */
export function openApiPlugin(): Plugin {
  return {
    onRequest({ request, url, endResponse }) {
      if (url.pathname !== openApiPath) return;
      if (request.method !== "GET" && request.method !== "HEAD") {
        endResponse(errorResponse(new ApiError("METHOD_NOT_ALLOWED"), idsOf(request), { Allow: "GET, HEAD" }));
        return;
      }
      endResponse(
        new Response(request.method === "HEAD" ? null : documentText(), {
          headers: {
            "Content-Type": "application/json; charset=utf-8",
            "Cache-Control": "public, max-age=300",
          },
        }),
      );
    },
  };
}
