import type { Plugin } from "graphql-yoga";

/** Security headers on every response; the strict content policy only where the body is data, not a page. */
export function securityHeadersPlugin(): Plugin {
  return {
    onResponse({ request, response }) {
      const h = response.headers;
      h.set("X-Content-Type-Options", "nosniff");
      h.set("Referrer-Policy", "no-referrer");
      if (!h.has("X-Frame-Options")) h.set("X-Frame-Options", "DENY");
      const type = h.get("content-type") ?? "";
      if (type.includes("json")) {
        h.set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'");
        h.set("Cache-Control", "no-store");
        h.set("Vary", [h.get("Vary"), "Authorization, X-Perscom-Id"].filter(Boolean).join(", "));
      }
      if (request.headers.get("x-forwarded-proto") === "https" || request.url.startsWith("https:")) {
        h.set("Strict-Transport-Security", "max-age=31536000; includeSubDomains");
      }
    },
  };
}
