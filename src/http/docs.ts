import { Response } from "./response.ts";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { Plugin } from "graphql-yoga";
import { ApiError } from "../core/errors.ts";
import { openApiPath } from "./openapi-plugin.ts";
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

const renderPage = (urls: Record<AssetName, string>) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Muster API reference</title>
  <link rel="icon" href="data:,">
</head>
<body>
  <div id="reference"></div>
  <script src="${urls["scalar.js"]}"></script>
  <script src="${urls["init.js"]}"></script>
</body>
</html>
`;

/** Scalar injects its styles and draws icons inline; everything else comes from this origin only. */
const pagePolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

type AssetName = "scalar.js" | "init.js";
interface Asset {
  type: string;
  body: Buffer;
}

/**
 * The page's two scripts under URLs that name their content hash, so a browser keeps them (`immutable`) and the
 * compression plugin encodes the 4 MB script once, not on every visit. Only these are served: nothing else under
 * node_modules is reachable.
 */
function loadAssets() {
  const pieces: Array<[AssetName, Buffer]> = [
    ["scalar.js", readFileSync(path.join(distDir(), "standalone.js"))],
    ["init.js", Buffer.from(initializer)],
  ];
  const byPath = new Map<string, Asset>();
  const urls = {} as Record<AssetName, string>;
  for (const [name, body] of pieces) {
    const url = `${assetsPrefix}${createHash("sha256").update(body).digest("hex").slice(0, 16)}/${name}`;
    byPath.set(url, { type: "text/javascript; charset=utf-8", body });
    urls[name] = url;
  }
  return { byPath, page: renderPage(urls) };
}

let assets: ReturnType<typeof loadAssets> | undefined;
const docsAssets = () => (assets ??= loadAssets());

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
        endResponse(
          new Response(head ? null : docsAssets().page, {
            headers: {
              "Content-Type": "text/html; charset=utf-8",
              "Content-Security-Policy": pagePolicy,
              "Cache-Control": "no-cache",
            },
          }),
        );
        return;
      }
      const asset = docsAssets().byPath.get(pathname);
      if (!asset) {
        endResponse(errorResponse(new ApiError("NOT_FOUND"), idsOf(request)));
        return;
      }
      endResponse(
        new Response(head ? null : new Uint8Array(asset.body), {
          headers: {
            "Content-Type": asset.type,
            "Content-Length": String(asset.body.length),
            "Cache-Control": "public, max-age=31536000, immutable",
          },
        }),
      );
    },
  };
}
