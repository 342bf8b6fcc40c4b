import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { Plugin } from "graphql-yoga";
import { ApiError } from "../errors.ts";
import { openApiPath } from "../openapi/plugin.ts";
import { errorResponse } from "./errors.ts";
import { idsOf } from "./ids.ts";

// The API reference at /docs: Scalar (@scalar/api-reference) rendering /openapi.json. Its browser build is one
// self-contained script (styles injected, icons inline), served here from node_modules, so the page needs no network
// access beyond this server; its default fonts (a CDN), telemetry and AI agent (Scalar's servers) are turned off.
// Swagger UI, tried first, took seconds to open one operation of this document; Redoc has no request console.

export const docsPath = "/docs";
const assetsPrefix = `${docsPath}/assets/`;

const require = createRequire(import.meta.url);
/** The package exports no `package.json`; its main module lies in `dist/`, beside the browser build. */
const distDir = () => path.join(path.dirname(require.resolve("@scalar/api-reference")), "browser");

/**
 * Scalar's configuration. `preferredSecurityScheme` makes the Bearer header the scheme "Test Request" sends (the
 * `?apikey=` form puts the key in logs and history); `persistAuth` stays off so a key typed here is not kept.
 */
const configuration = {
  url: openApiPath,
  withDefaultFonts: false,
  telemetry: false,
  showDeveloperTools: "never",
  showToolbar: "never",
  mcp: { disabled: true },
  agent: { disabled: true },
  authentication: { preferredSecurityScheme: "bearerAuth" },
};

/**
 * Our initializer, a file of its own so that the page needs no inline script (its policy is `script-src 'self'`).
 * The element is not `#api-reference`: Scalar's script mounts a second reference, with default settings, there.
 */
const initializer = `Scalar.createApiReference("#reference", ${JSON.stringify(configuration)});\n`;

const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Muster API reference</title>
  <link rel="icon" href="data:,">
</head>
<body>
  <div id="reference"></div>
  <script src="${assetsPrefix}scalar.js"></script>
  <script src="${assetsPrefix}init.js"></script>
</body>
</html>
`;

/** Scalar injects its styles and draws icons inline; everything else comes from this origin only. */
const pagePolicy = [
  "default-src 'none'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:",
  "font-src 'self' data:", "connect-src 'self'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
].join("; ");

type Body = string | Uint8Array<ArrayBuffer>;
interface Asset { type: string; body: () => Body }

const fromDist = (file: string, type: string): Asset => ({ type, body: () => new Uint8Array(readFileSync(path.join(distDir(), file))) });

/** Only these names are served: nothing else under node_modules is reachable. */
const assets: Record<string, Asset> = {
  "scalar.js": fromDist("standalone.js", "text/javascript; charset=utf-8"),
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
