import cluster from "node:cluster";
import type { DestinationStream } from "pino";
import type { Plugin } from "graphql-yoga";
import { getOperationAST, type DocumentNode, type GraphQLError } from "graphql";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { Config } from "../../core/config.ts";
import { clientAddress, type NodeServerContext } from "../client-address.ts";
import type { Database } from "../../db/prisma.ts";
import { actorOf, type Context } from "../../request/context.ts";
import type { Actor } from "../../core/events.ts";
import { idsOf } from "../ids.ts";
import { toApiError } from "../errors.ts";
import { createLogger, safeUrl, type Logger } from "./logger.ts";
import { UNAUTHENTICATED_OPERATION, createMetrics, type Metrics } from "./metrics.ts";
import { SpanStatusCode, createTracing, traceIdAsUuid, type Span, type Tracing } from "./tracing.ts";
import { probe, probePaths } from "./probes.ts";

export { createLogger, safeUrl, type Logger } from "./logger.ts";
export { traceIdAsUuid } from "./tracing.ts";

export interface ObservabilityOptions {
  /** Where the JSON log lines go; stdout by default. Tests pass a stream of their own. */
  logStream?: DestinationStream;
  /** Where spans go; turns tracing on even when `config.tracing` is off (tests pass an `InMemorySpanExporter`). */
  spanExporter?: SpanExporter;
}

export interface Observability {
  logger: Logger;
  metrics: Metrics;
  tracing: Tracing | null;
  /** The Yoga plugin: probes, one log line, metrics and a span per request. Goes first in the plugin list. */
  plugin(): Plugin;
  /** Flushes and stops tracing. */
  close(): Promise<void>;
}

/** What is known about one request while it runs. */
interface RequestState {
  start: number;
  logger: Logger;
  /** REST: `GET /v2/users/{user}`, set by the REST plugin once the route matched. */
  route?: { method: string; template: string };
  operation?: string;
  account?: number;
  keyId?: number | null;
  /** Who sent it: the key, or the person and the OAuth client (never the credential). */
  actor?: Actor | null;
  limited?: boolean;
  span?: Span;
}

const states = new WeakMap<Request, RequestState>();
let fallback: Logger | undefined;

/** Called by the REST plugin when a route matched: the log and the metrics name the template, not the path. */
export function reportRoute(request: Request, method: string, template: string): void {
  const state = states.get(request);
  if (state) state.route = { method, template };
}

/** The logger of the app serving `request` (a default one outside an app). */
export function loggerOf(request: Request): Logger {
  return states.get(request)?.logger ?? (fallback ??= createLogger({ logLevel: "info" }));
}

/**
 * Yoga's `healthCheckEndpoint`, turned off: Yoga answers any URL that merely ends with it (an empty 200, before every
 * plugin). A request URL is percent-encoded and never ends with a NUL, so this matches nothing; `/health` is ours.
 */
export const yogaHealthCheckOff = "\u0000";

const isGraphQL = (path: string) => path === "/graphql" || path.startsWith("/graphql/");

/** Low-cardinality route label of a request that is neither a REST route nor GraphQL. */
function routeLabel(path: string, status: number): string {
  if (probePaths.has(path)) return path;
  if (status === 404 || status === 405) return "unmatched";
  const [first, ...rest] = path.split("/").filter(Boolean);
  return first ? `/${first}${rest.length ? "/*" : ""}` : "/";
}

function operationOf(document: unknown, operationName: string | null | undefined) {
  const op = getOperationAST(document as DocumentNode, operationName ?? undefined);
  return { name: op?.name?.value ?? "anonymous", type: op?.operation ?? "query" };
}

export function createObservability({
  config,
  db,
  logStream,
  spanExporter,
}: { config: Config; db: Database } & ObservabilityOptions): Observability {
  const logger = createLogger(config, logStream);
  const metrics = createMetrics({ acrossWorkers: config.workers > 1 && cluster.isWorker, commits: db.commits });
  const tracing = createTracing(config, spanExporter);

  const plugin = (): Plugin => ({
    async onRequest({ request, url, endResponse }) {
      const state: RequestState = { start: performance.now(), logger };
      states.set(request, state);
      if (tracing) {
        state.span = tracing.startRequestSpan(request, request.method);
        idsOf(request).traceId = traceIdAsUuid(state.span.spanContext().traceId);
      }
      if (probePaths.has(url.pathname) && (request.method === "GET" || request.method === "HEAD")) {
        endResponse(await probe(url.pathname, request, db, metrics, config.metricsToken));
      }
    },
    onContextBuilding:
      ({ context }) =>
      ({ context: built }) => {
        const { request, auth } = (built ?? context) as unknown as Context & { request: Request };
        const state = states.get(request);
        if (state && auth) Object.assign(state, { account: auth.accountId, keyId: auth.keyId, actor: actorOf(auth) });
      },
    onExecute({ args }) {
      const request = (args.contextValue as { request?: Request }).request;
      const state = request ? states.get(request) : undefined;
      const { name, type } = operationOf(args.document, args.operationName);
      // A client without a valid key could otherwise fill the label set with names of its choosing.
      metrics.operation((args.contextValue as Partial<Context>).auth ? name : UNAUTHENTICATED_OPERATION, type);
      if (state) state.operation = name;
      const span =
        tracing && state?.span
          ? tracing.startChild(state.span, `graphql.${type} ${name}`, {
              "graphql.operation.name": name,
              "graphql.operation.type": type,
            })
          : null;
      return {
        onExecuteDone({ result }) {
          const errors = "errors" in result ? ((result.errors ?? []) as GraphQLError[]) : [];
          if (state && errors.some((e) => e.extensions?.code === "RATE_LIMITED")) state.limited = true;
          // Logged here, before they are masked, while the request is at hand.
          for (const error of errors) {
            if (request && toApiError(error).code === "INTERNAL")
              logInternalError(logger, error, { ids: idsOf(request), request });
          }
          if (span) {
            if (errors.length)
              span.setStatus({
                code: SpanStatusCode.ERROR,
                message: String(errors[0].extensions?.code ?? errors[0].message),
              });
            span.end();
          }
        },
      };
    },
    onResponse({ request, response, serverContext }) {
      // Answered by Yoga itself before any plugin (CORS preflight, GraphiQL page): counted and logged, not timed.
      const state = states.get(request) ?? { start: Number.NaN, logger };
      const url = new URL(request.url);
      const status = response.status;
      const seconds = (performance.now() - state.start) / 1000;
      const graphql = isGraphQL(url.pathname);
      const metricRoute = state.route?.template ?? (graphql ? "/graphql" : routeLabel(url.pathname, status));
      const route = state.route
        ? `${state.route.method} ${state.route.template}`
        : graphql
          ? (state.operation ?? "anonymous")
          : `${request.method} ${metricRoute}`;
      metrics.request(metricRoute, request.method, status, seconds);
      if (status === 429 || state.limited) metrics.rateLimited();
      const ids = idsOf(request);
      const line = {
        request_id: ids.requestId,
        trace_id: ids.traceId,
        account: state.account ?? null,
        key_id: state.keyId ?? null,
        actor: state.actor ?? null,
        route,
        method: request.method,
        path: url.pathname,
        status,
        duration_ms: Number.isNaN(seconds) ? null : Math.round(seconds * 1e6) / 1e3,
        client: clientAddress(request, serverContext as NodeServerContext, config.trustProxy),
        user_agent: request.headers.get("user-agent"),
      };
      const level = status >= 500 ? "error" : probePaths.has(url.pathname) ? "debug" : "info";
      logger[level](line, "request");
      if (state.span) {
        state.span.updateName(graphql ? `${request.method} /graphql ${route}` : `${request.method} ${metricRoute}`);
        state.span.setAttributes({
          "http.request.method": request.method,
          "url.path": url.pathname,
          "http.route": metricRoute,
          "http.response.status_code": status,
          "muster.request_id": ids.requestId,
          ...(state.account !== undefined ? { "muster.account_id": state.account } : {}),
        });
        if (status >= 500) state.span.setStatus({ code: SpanStatusCode.ERROR });
        state.span.end();
      }
    },
  });

  return { logger, metrics, tracing, plugin, close: async () => tracing?.close() };
}

/** Errors given to the client in place of one already logged: not logged again when they surface a second time. */
const logged = new WeakSet<object>();

/**
 * Logs an unexpected error (a 500) in full, with the ids the client was given and the URL (its key censored).
 * `answer` is what the client is given instead (a masked error): it will not be logged again.
 */
export function logInternalError(
  logger: Logger,
  error: unknown,
  { ids, request, answer }: { ids: { requestId?: unknown; traceId?: unknown }; request?: Request; answer?: object },
): void {
  if (answer) logged.add(answer);
  if (typeof error === "object" && error !== null) {
    if (logged.has(error)) return;
    logged.add(error);
  }
  const where = request ? { method: request.method, url: safeUrl(request.url) } : {};
  logger.error(
    { err: error, request_id: ids.requestId ?? null, trace_id: ids.traceId ?? null, ...where },
    error instanceof Error ? error.message : "Internal error",
  );
}
