import type { IncomingMessage } from "node:http";
import type { Plugin } from "graphql-yoga";
import { ApiError } from "../core/errors.ts";
import { errorResponse } from "./errors.ts";
import { idsOf } from "./ids.ts";

/**
 * The path as the client sent it (the node request's target, before `?`). The URL parser resolves dot segments,
 * encoded ones too (`/v2/users/1/rank-records/%2e%2e` is `/v2/users/1`), so whatever routes on paths reads this one;
 * `yoga.fetch` has no node request, only the URL.
 */
export function rawPathOf(serverContext: object | undefined, url: URL): string {
  const target = (serverContext as { req?: IncomingMessage } | undefined)?.req?.url;
  if (typeof target !== "string") return url.pathname;
  const path = target.replace(/^[a-z][a-z\d+.-]*:\/\/[^/?#]*/i, "");
  const end = path.search(/[?#]/);
  return end === -1 ? path : path.slice(0, end);
}

const dotSegment = /^(?:\.|%2e){1,2}$/i;

/**
 * A path with a dot segment (`.`, `..`, or escaped, `%2e%2e`; the URL parser also splits on `\`) names nothing, on
 * every endpoint: 404 before any plugin routes on the resolved URL, which would serve another path than the one sent.
 */
export function dotSegmentsPlugin(): Plugin {
  return {
    onRequest({ request, url, serverContext, endResponse }) {
      const path = rawPathOf(serverContext, url);
      if (path.split(/[/\\]/).some((segment) => dotSegment.test(segment)))
        endResponse(errorResponse(new ApiError("NOT_FOUND"), idsOf(request)));
    },
  };
}
