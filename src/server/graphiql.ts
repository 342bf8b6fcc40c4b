import { renderGraphiQL } from "@graphql-yoga/render-graphiql";
import type { GraphiQLOptions } from "graphql-yoga";

// Yoga's built-in page loads GraphiQL from unpkg.com. @graphql-yoga/render-graphiql
// inlines the same bundle (JS, CSS, monaco workers as Blob URLs, favicon as a data
// URI), so the page works with no network access beyond this server.

const DEFAULT_HEADERS = JSON.stringify({ Authorization: "Bearer <your API key>" }, null, 2);

// The page is ~9 MB and options rarely change between requests, so keep the last one.
let cached: { key: string; html: string } | undefined;

export function renderOfflineGraphiQL(opts: GraphiQLOptions): string {
  // YogaGraphiQL passes `headers` to GraphiQL as `defaultHeaders` (the header
  // editor's initial contents), so defaulting `headers` pre-fills the editor.
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
  if (cached?.key !== key) cached = { key, html: renderGraphiQL(options) };
  return cached.html;
}
