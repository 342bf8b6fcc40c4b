import type { Plugin } from "graphql-yoga";
import type { Config } from "../core/config.ts";
import type { Database } from "../db/prisma.ts";
import { isRegisteredOrigin } from "../auth/client-origins.ts";

/** Headers a browser client may send: every request header the API reads (src/http, src/auth, src/server). */
const allowedHeaders = [
  "Authorization",
  "Content-Type",
  "Accept",
  "X-Perscom-Id",
  "X-Perscom-Notifications",
  "traceparent",
];

/** Headers clients may read across origins: ids, rate-limit state, retry hints. */
const exposedHeaders = [
  "X-Perscom-Request-Id",
  "X-Perscom-Trace-Id",
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
  "Retry-After",
];

/** What Yoga's `cors` option answers for an allowed origin (@whatwg-node/server's `CORSOptions`). */
interface CorsAnswer {
  origin: string;
  credentials: false;
  methods: string[];
  allowedHeaders: string[];
  exposedHeaders: string[];
  maxAge: number;
}

/**
 * Yoga's `cors` option: a function of the request (Yoga calls it as each response goes out, preflights included,
 * and adds no CORS header when it answers `false`). An Origin is allowed when the operator lists it in `CORS_ORIGINS`
 * (`*`: any), or an enabled OAuth client or a live publishable key lists it (src/auth/client-origins.ts, one query
 * per cross-origin request). Never with credentials: keys and tokens travel in `Authorization`, not cookies. One rule for every route,
 * the probes (`/health`, `/ready`, `/metrics`) included: they answer a registered page nothing it could not learn
 * otherwise, and browsers do not call them.
 */
/**
 * Requests whose Origin is known to be allowed without a lookup: a shared-cache hit of a publishable key whose origins
 * listed it when the entry was stored (src/http/response-cache.ts), so that the hit issues no SQL statement at all.
 */
const vouched = new WeakSet<Request>();
export const vouchForOrigin = (request: Request): void => void vouched.add(request);

export function corsPolicy(config: Config, db: Database, onLookupError: (error: unknown) => void) {
  const anyOrigin = config.corsOrigins.includes("*");
  const listed = new Set(config.corsOrigins);
  const ownOrigin = config.publicUrl && URL.canParse(config.publicUrl) ? new URL(config.publicUrl).origin : null;
  return async (request: Request): Promise<CorsAnswer | false> => {
    const origin = request.headers.get("origin");
    if (origin === null || origin === "null") return false;
    if (!anyOrigin && !listed.has(origin) && !vouched.has(request)) {
      // A page of this server (GraphiQL, the API reference) needs no CORS header, and costs no query.
      if (origin === ownOrigin || origin === new URL(request.url).origin) return false;
      const registered = await isRegisteredOrigin(db, origin).catch((error: unknown) => (onLookupError(error), false));
      if (!registered) return false;
    }
    return {
      origin,
      credentials: false,
      methods: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
      allowedHeaders,
      exposedHeaders,
      maxAge: 600,
    };
  };
}

/**
 * `Vary: Origin` on every response: whether it carries CORS headers, and which origin they name, depends on the
 * request's Origin, so a shared cache must not give one origin's answer to another.
 */
export function varyOriginPlugin(): Plugin {
  return {
    onResponse({ response }) {
      const vary = response.headers.get("vary");
      if (!vary) response.headers.set("Vary", "Origin");
      else if (!/(^|,)\s*origin\s*(,|$)/i.test(vary)) response.headers.set("Vary", `${vary}, Origin`);
    },
  };
}
