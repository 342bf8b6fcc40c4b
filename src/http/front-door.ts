import { Response } from "./response.ts";
import type { Plugin } from "graphql-yoga";
import pkg from "../../package.json" with { type: "json" };
import { ApiError } from "../core/errors.ts";
import { openApiPath } from "./openapi-plugin.ts";
import { docsPath } from "./docs.ts";
import { errorResponse } from "./errors.ts";
import { idsOf } from "./ids.ts";
import { firstKeyCommand } from "./first-run.ts";
import { escapeHtml, PAGE_STYLE } from "./pages.ts";

/** What `/` says about this service, to a browser as a page and to an API client as JSON. */
export function frontDoor() {
  return {
    name: "Muster",
    version: pkg.version,
    description:
      "Personnel management service: a PERSCOM v2 compatible REST API (/v1, /v2) and a GraphQL API over one core.",
    links: {
      docs: { href: docsPath, title: "API reference (OpenAPI, rendered)" },
      graphql: { href: "/graphql", title: "GraphQL endpoint; GraphiQL in a browser" },
      openapi: { href: openApiPath, title: "OpenAPI 3.1 document" },
      health: { href: "/health", title: "Liveness probe" },
      ready: { href: "/ready", title: "Readiness probe" },
    },
    authentication: {
      scheme: "Bearer",
      header: "Authorization: Bearer <key>",
      get_a_key: `An operator creates one on the server: ${firstKeyCommand}`,
    },
  };
}

function page(): string {
  const door = frontDoor();
  const links = Object.values(door.links)
    .map(
      (l) => `<li><a href="${escapeHtml(l.href)}"><code>${escapeHtml(l.href)}</code></a> ${escapeHtml(l.title)}</li>`,
    )
    .join("\n      ");
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${door.name} ${escapeHtml(door.version)}</title>
  <style>${PAGE_STYLE}
  </style>
</head>
<body>
  <main>
    <h1>${door.name}</h1>
    <p class="version">version ${escapeHtml(door.version)}</p>
    <p>${escapeHtml(door.description)}</p>
    <h2>Start here</h2>
    <ul>
      ${links}
    </ul>
    <h2>API keys</h2>
    <p>Every API request carries a key: <code>${escapeHtml(door.authentication.header)}</code>. An operator creates one on the server:</p>
    <pre>${escapeHtml(firstKeyCommand)}</pre>
  </main>
</body>
</html>
`;
}

/** A browser asked for the page unless the client prefers JSON (`Accept: application/json`, listed before any HTML). */
function wantsJson(accept: string): boolean {
  const json = accept.search(/application\/(?:[\w.+-]*\+)?json/);
  const html = accept.search(/text\/html/);
  return json !== -1 && (html === -1 || json < html);
}

/** `/`: a small page for browsers, the same facts as JSON for API clients. Public, no key. */
export function frontDoorPlugin(): Plugin {
  let html: string | undefined;
  return {
    onRequest({ request, url, endResponse }) {
      if (url.pathname !== "/") return;
      if (request.method !== "GET" && request.method !== "HEAD") {
        endResponse(errorResponse(new ApiError("METHOD_NOT_ALLOWED"), idsOf(request), { Allow: "GET, HEAD" }));
        return;
      }
      const json = wantsJson(request.headers.get("accept") ?? "");
      const body = json ? JSON.stringify(frontDoor()) : (html ??= page());
      endResponse(
        new Response(request.method === "HEAD" ? null : body, {
          headers: json
            ? { "Content-Type": "application/json; charset=utf-8", Vary: "Accept" }
            : {
                "Content-Type": "text/html; charset=utf-8",
                Vary: "Accept",
                "Cache-Control": "no-cache",
                "Content-Security-Policy":
                  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
              },
        }),
      );
    },
  };
}
