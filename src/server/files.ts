import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Plugin } from "graphql-yoga";
import type { Config } from "../config.ts";
import { storedFilePath } from "../files/storage.ts";
import { ApiError } from "../errors.ts";
import { errorResponse } from "./errors.ts";
import { idsOf } from "./ids.ts";

const contentTypes: Record<string, string> = {
  ".png": "image/png", ".jpg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp", ".svg": "image/svg+xml", ".bmp": "image/bmp",
};

/** Serves stored uploads at `/files/<path>`, the URLs given as `image_url`. */
export function filesPlugin(config: Config): Plugin {
  return {
    async onRequest({ request, url, endResponse }) {
      if (!url.pathname.startsWith("/files/") || (request.method !== "GET" && request.method !== "HEAD")) return;
      const relative = decodeURIComponent(url.pathname.slice("/files/".length));
      const full = storedFilePath(config, relative);
      try {
        if (!full) throw new Error("outside storage");
        const bytes = await readFile(full);
        endResponse(new Response(bytes, {
          headers: {
            "Content-Type": contentTypes[path.extname(full).toLowerCase()] ?? "application/octet-stream",
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox",
          },
        }));
      } catch {
        endResponse(errorResponse(new ApiError("NOT_FOUND"), idsOf(request)));
      }
    },
  };
}
