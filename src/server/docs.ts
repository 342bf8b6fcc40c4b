import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { Plugin } from "graphql-yoga";
import { ApiError } from "../errors.ts";
import { openApiPath } from "../openapi/plugin.ts";
import { errorResponse } from "./errors.ts";
import { idsOf } from "./ids.ts";

// The API reference at /docs: Swagger UI rendering /openapi.json. swagger-ui-dist ships a self-contained bundle
// (JS, CSS with data-URI images, no web fonts), served here from node_modules, so the page needs no network access
// beyond this server. Its one external call, the validator badge (validator.swagger.io), is turned off.

export const docsPath = "/docs";
const assetsPrefix = `${docsPath}/assets/`;

const require = createRequire(import.meta.url);
const distDir = () => path.dirname(require.resolve("swagger-ui-dist/package.json"));

/** Our initializer, a file of its own so that the page needs no inline script (its policy is `script-src 'self'`). */
const initializer = `window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(openApiPath)},
    dom_id: "#swagger-ui",
    deepLinking: true,
    filter: true,
    validatorUrl: null,
    persistAuthorization: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
`;

const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Muster API reference</title>
  <link rel="icon" type="image/png" href="${assetsPrefix}favicon-32x32.png" sizes="32x32">
  <link rel="stylesheet" href="${assetsPrefix}swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${assetsPrefix}swagger-ui-bundle.js"></script>
  <script src="${assetsPrefix}init.js"></script>
</body>
</html>
`;

/** Swagger UI styles elements inline and draws icons as data URIs; everything else comes from this origin only. */
const pagePolicy = [
  "default-src 'none'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:",
  "font-src 'self' data:", "connect-src 'self'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
].join("; ");

type Body = string | Uint8Array<ArrayBuffer>;
interface Asset { type: string; body: () => Body }

const fromDist = (file: string, type: string): Asset => ({ type, body: () => new Uint8Array(readFileSync(path.join(distDir(), file))) });

/** Only these names are served: nothing else under node_modules is reachable. */
const assets: Record<string, Asset> = {
  "swagger-ui-bundle.js": fromDist("swagger-ui-bundle.js", "text/javascript; charset=utf-8"),
  "swagger-ui.css": fromDist("swagger-ui.css", "text/css; charset=utf-8"),
  "favicon-32x32.png": fromDist("favicon-32x32.png", "image/png"),
  "favicon-16x16.png": fromDist("favicon-16x16.png", "image/png"),
  "init.js": { type: "text/javascript; charset=utf-8", body: () => initializer },
};

const loaded = new Map<string, Body>();
const bodyOf = (name: string) => {
  let body = loaded.get(name);
  if (body === undefined) loaded.set(name, (body = assets[name]!.body()));
  return body;
};

/** Serves the API reference at `/docs` and its assets under `/docs/assets/`: public, no API key. */
export function docsPlugin(): Plugin {
  return {
    onRequest({ request, url, endResponse }) {
      const { pathname } = url;
      const isPage = pathname === docsPath || pathname === `${docsPath}/`;
      if (!isPage && !pathname.startsWith(assetsPrefix)) return;
      if (request.method !== "GET" && request.method !== "HEAD") {
        endResponse(errorResponse(new ApiError("METHOD_NOT_ALLOWED"), idsOf(request), { Allow: "GET, HEAD" }));
        return;
      }
      const head = request.method === "HEAD";
      if (isPage) {
        endResponse(new Response(head ? null : page, {
          headers: { "Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": pagePolicy, "Cache-Control": "no-cache" },
        }));
        return;
      }
      const name = pathname.slice(assetsPrefix.length);
      const asset = Object.hasOwn(assets, name) ? assets[name] : undefined;
      if (!asset) {
        endResponse(errorResponse(new ApiError("NOT_FOUND"), idsOf(request)));
        return;
      }
      endResponse(new Response(head ? null : bodyOf(name), {
        headers: { "Content-Type": asset.type, "Cache-Control": "public, max-age=3600" },
      }));
    },
  };
}
