import { Response } from "./response.ts";
import type { Plugin } from "graphql-yoga";
import type { FileStorage } from "../files/storage.ts";
import { ApiError } from "../core/errors.ts";
import { errorResponse, toApiError } from "./errors.ts";
import { idsOf } from "./ids.ts";
import { logInternalError, loggerOf } from "./observability/index.ts";

/** Serves stored uploads at `/files/<path>`, the URLs given as `image_url`, from whichever store holds them. */
export function filesPlugin(storage: FileStorage): Plugin {
  return {
    async onRequest({ request, url, endResponse }) {
      if (!url.pathname.startsWith("/files/") || (request.method !== "GET" && request.method !== "HEAD")) return;
      const ids = idsOf(request);
      try {
        let relative: string;
        try {
          relative = decodeURIComponent(url.pathname.slice("/files/".length));
        } catch {
          throw new ApiError("NOT_FOUND");
        }
        const stored = await storage.get(relative);
        if (!stored) throw new ApiError("NOT_FOUND");
        endResponse(
          new Response(request.method === "HEAD" ? null : stored.body(), {
            headers: {
              "Content-Type": stored.contentType,
              "Content-Length": String(stored.size),
              "X-Content-Type-Options": "nosniff",
              "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox",
            },
          }),
        );
      } catch (error) {
        const apiError = toApiError(error);
        if (apiError.code === "INTERNAL") logInternalError(loggerOf(request), error, { ids, request });
        endResponse(errorResponse(apiError, ids));
      }
    },
  };
}
