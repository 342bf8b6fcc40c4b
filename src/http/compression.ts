import { Response } from "./response.ts";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import type { Plugin } from "graphql-yoga";

// Response compression. @whatwg-node/server's useContentEncoding compresses every body whatever its size, offers no
// brotli on Node 20 (its CompressionStream has gzip and deflate only), ignores q-values, and also inflates request
// bodies, which would let a small compressed body past the body size cap. So this is our own: node:zlib, on the
// libuv thread pool, for text responses of at least `thresholdBytes`, brotli preferred over gzip.

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

export type Encoding = "br" | "gzip";

export interface CompressionOptions {
  /** Smaller bodies go as they are: the framing would cost more than it saves. */
  thresholdBytes?: number;
  /** Compressed forms of `immutable` responses kept in memory, keyed by URL and encoding. */
  maxCachedAssets?: number;
}

const compressible = /^(?:text\/(?!event-stream)|application\/(?:[\w.+-]*\+)?(?:json|javascript|xml)|image\/svg\+xml)/i;

/** The encoding to answer with for an `Accept-Encoding` header: the client's highest q, brotli on a tie; null for none. */
export function negotiateEncoding(header: string | null): Encoding | null {
  if (!header) return null;
  const q: Record<string, number> = {};
  for (const part of header.split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    if (!name) continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const value = qParam ? Number(qParam.slice(2)) : 1;
    q[name] = Number.isFinite(value) ? value : 0;
  }
  const of = (name: Encoding) => q[name] ?? q["*"] ?? 0;
  const best = (["br", "gzip"] as const).reduce<Encoding | null>(
    (chosen, name) => (of(name) > 0 && (!chosen || of(name) > of(chosen)) ? name : chosen),
    null,
  );
  return best;
}

function compress(bytes: Buffer, encoding: Encoding): Promise<Buffer> {
  if (encoding === "gzip") return gzipAsync(bytes, { level: 6 });
  // Quality 5 costs about gzip's CPU for a smaller body. Higher pays little: GraphiQL's 5 MB script is 1.29 MB at 5
  // (1.1 s), 1.24 MB at 9 (3.9 s), 1.12 MB at 11 (52 s), so even the cached assets use 5.
  return brotli(bytes, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: 5,
      [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    },
  });
}

/**
 * gzip or brotli for text responses (JSON, HTML, JavaScript, CSS, the OpenAPI document) of `thresholdBytes` (1 KB)
 * or more, when the request's `Accept-Encoding` allows; `Vary: Accept-Encoding` on every compressible response.
 * Event streams are left alone. Register it last, so that it sees the response every other plugin has finished.
 */
export function compressionPlugin({ thresholdBytes = 1024, maxCachedAssets = 64 }: CompressionOptions = {}): Plugin {
  const assetCache = new Map<string, Promise<Buffer>>();
  return {
    async onResponse({ request, response, setResponse }) {
      const type = response.headers.get("content-type") ?? "";
      if (response.headers.has("content-encoding") || !compressible.test(type)) return;
      // In place: a response that goes as it is keeps its body as it is (Yoga writes a string body in one piece).
      // Its `body` is not looked at: @whatwg-node builds a stream for the getter (about 0.05 ms per response).
      response.headers.set("Vary", [response.headers.get("vary"), "Accept-Encoding"].filter(Boolean).join(", "));
      const encoding = request.method === "HEAD" ? null : negotiateEncoding(request.headers.get("accept-encoding"));
      if (!encoding || Number(response.headers.get("content-length") ?? NaN) < thresholdBytes || !response.body) return;
      const headers = new Headers(response.headers);
      const bytes = Buffer.from(await response.arrayBuffer());
      let body: Buffer = bytes;
      if (bytes.length >= thresholdBytes) {
        const immutable = /\bimmutable\b/.test(response.headers.get("cache-control") ?? "");
        if (immutable) {
          const key = `${encoding} ${request.url}`;
          let cached = assetCache.get(key);
          if (!cached) {
            cached = compress(bytes, encoding);
            if (assetCache.size < maxCachedAssets) assetCache.set(key, cached);
          }
          body = await cached;
        } else body = await compress(bytes, encoding);
        headers.set("Content-Encoding", encoding);
      }
      headers.set("Content-Length", String(body.length));
      setResponse(
        new Response(new Uint8Array(body.buffer as ArrayBuffer, body.byteOffset, body.length), {
          status: response.status,
          statusText: response.statusText,
          headers,
        }),
      );
    },
  };
}
