import { Response } from "./response.ts";
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import path from "node:path";
import type { GraphiQLOptions, Plugin } from "graphql-yoga";

// GraphiQL, offline and in pieces. Yoga's built-in page loads GraphiQL from a CDN; @graphql-yoga/render-graphiql
// inlines the same bundle into one 9 MB page (JS, CSS, three monaco workers as Blob URLs, the favicon as a data URI),
// sent again on every visit. Here the page is a few hundred bytes and each of those pieces is a file of its own under
// a URL that names its content hash, so a browser downloads it once and keeps it (`immutable`), and the compression
// plugin sends it gzip- or brotli-encoded.

/** The pieces render-graphiql ships (its `graphiql.js` module is not in its exports map, so it is loaded by path). */
interface GraphiQLBundle {
  js: string;
  css: string;
  favicon: string;
  editorWorkerService: string;
  jsonWorker: string;
  graphqlWorker: string;
}

export const graphiqlAssetsPrefix = "/graphiql/";

const DEFAULT_HEADERS = JSON.stringify({ Authorization: "Bearer <your API key>" }, null, 2);

/** Ours, a file so that the page needs no inline script: workers from this origin, then GraphiQL with the page's options. */
const initializer = `(function () {
  var assets = JSON.parse(document.getElementById("graphiql-assets").textContent);
  var options = JSON.parse(document.getElementById("graphiql-options").textContent);
  var workers = { editorWorkerService: assets.editorWorkerService, json: assets.jsonWorker, graphql: assets.graphqlWorker };
  self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: function (moduleId, label) { return workers[label]; } };
  YogaGraphiQL.renderYogaGraphiQL(document.querySelector("#root"), options);
})();
`;

interface Asset {
  type: string;
  body: Buffer;
}

function loadAssets(): { byPath: Map<string, Asset>; urls: Record<string, string> } {
  const require = createRequire(import.meta.url);
  const bundle = require(
    path.join(path.dirname(require.resolve("@graphql-yoga/render-graphiql")), "graphiql.js"),
  ) as GraphiQLBundle;
  const favicon = /^data:([^;,]+);base64,(.*)$/s.exec(bundle.favicon);
  const pieces: Array<[name: string, file: string, type: string, body: Buffer]> = [
    ["js", "graphiql.js", "text/javascript; charset=utf-8", Buffer.from(bundle.js)],
    ["css", "graphiql.css", "text/css; charset=utf-8", Buffer.from(bundle.css)],
    [
      "editorWorkerService",
      "editor.worker.js",
      "text/javascript; charset=utf-8",
      Buffer.from(bundle.editorWorkerService),
    ],
    ["jsonWorker", "json.worker.js", "text/javascript; charset=utf-8", Buffer.from(bundle.jsonWorker)],
    ["graphqlWorker", "graphql.worker.js", "text/javascript; charset=utf-8", Buffer.from(bundle.graphqlWorker)],
    ["init", "init.js", "text/javascript; charset=utf-8", Buffer.from(initializer)],
    ...(favicon
      ? [["favicon", "favicon.ico", favicon[1], Buffer.from(favicon[2], "base64")] as [string, string, string, Buffer]]
      : []),
  ];
  const byPath = new Map<string, Asset>();
  const urls: Record<string, string> = {};
  for (const [name, file, type, body] of pieces) {
    const hash = createHash("sha256").update(body).digest("hex").slice(0, 16);
    const url = `${graphiqlAssetsPrefix}${hash}/${file}`;
    byPath.set(url, { type, body });
    urls[name] = url;
  }
  return { byPath, urls };
}

let assets: ReturnType<typeof loadAssets> | undefined;
const graphiqlAssets = () => (assets ??= loadAssets());

/** JSON inside a `<script type="application/json">`: nothing in it may close the element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, "\\u003c");

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

let cached: { key: string; html: string } | undefined;

/** Yoga's `renderGraphiQL`: the small page that loads the pieces served by `graphiqlAssetsPlugin`. */
export function renderOfflineGraphiQL(opts: GraphiQLOptions): string {
  // YogaGraphiQL passes `headers` to GraphiQL as `defaultHeaders` (the header editor's initial contents), so
  // defaulting `headers` pre-fills the editor.
  const { headers = DEFAULT_HEADERS, ...rest } = opts ?? {};
  const options: GraphiQLOptions = {
    isHeadersEditorEnabled: true,
    defaultEditorToolsVisibility: "headers",
    // Persisted in the browser's localStorage; users can turn this off in Settings.
    shouldPersistHeaders: true,
    ...rest,
    headers,
  };
  const key = JSON.stringify(options);
  if (cached?.key === key) return cached.html;
  const { urls } = graphiqlAssets();
  const html = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>${escapeHtml(options.title || "GraphiQL")}</title>
  ${urls.favicon ? `<link rel="icon" href="${urls.favicon}">` : ""}
  <link rel="stylesheet" href="${urls.css}">
</head>
<body id="body" class="no-focus-outline">
  <noscript>You need to enable JavaScript to run GraphiQL.</noscript>
  <div id="root"></div>
  <script type="application/json" id="graphiql-assets">${scriptJson(urls)}</script>
  <script type="application/json" id="graphiql-options">${scriptJson(options)}</script>
  <script src="${urls.js}"></script>
  <script src="${urls.init}"></script>
</body>
</html>
`;
  cached = { key, html };
  return html;
}

/** Serves GraphiQL's pieces under content-hashed URLs, cacheable for a year. Public, no key. */
export function graphiqlAssetsPlugin(): Plugin {
  return {
    onRequest({ request, url, endResponse }) {
      if (!url.pathname.startsWith(graphiqlAssetsPrefix) || (request.method !== "GET" && request.method !== "HEAD"))
        return;
      const asset = graphiqlAssets().byPath.get(url.pathname);
      if (!asset) return;
      endResponse(
        new Response(request.method === "HEAD" ? null : new Uint8Array(asset.body), {
          headers: {
            "Content-Type": asset.type,
            "Content-Length": String(asset.body.length),
            "Cache-Control": "public, max-age=31536000, immutable",
            "Cross-Origin-Resource-Policy": "same-origin",
          },
        }),
      );
    },
  };
}
