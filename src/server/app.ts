import { createYoga, type Plugin, type YogaServerInstance } from "graphql-yoga";
import { Kind, type DocumentNode, type GraphQLError, type GraphQLSchema } from "graphql";
import type { Config } from "../core/config.ts";
import type { Database } from "../db/prisma.ts";
import { requestStore, type Context } from "../request/context.ts";
import { buildSchemas, type Schemas } from "../graphql/schema.ts";
import { authenticate } from "../auth/authenticate.ts";
import { restPlugin } from "../http/rest-plugin.ts";
import { openApiPlugin } from "../http/openapi-plugin.ts";
import { ApiError } from "../core/errors.ts";
import { graphqlResultsPlugin, maskedAt, toApiError } from "../http/errors.ts";
import { idsOf } from "../http/ids.ts";
import { filesPlugin } from "../http/files.ts";
import { fileStorage } from "../files/storage.ts";
import { maintenancePlugin } from "../http/maintenance.ts";
import { concurrencyPlugin } from "../http/concurrency.ts";
import { graphqlJsExecutorPlugin } from "../http/executor.ts";
import { isAnonymousRootField, relationScopesPlugin } from "../graphql/relation-scopes.ts";
import { publicWrites } from "../http/public-writes.ts";
import type { NodeServerContext } from "../http/client-address.ts";
import { securityHeadersPlugin } from "../http/headers.ts";
import { corsPolicy, varyOriginPlugin } from "../http/cors.ts";
import { wellFormedTextPlugin } from "../http/unicode.ts";
import { executionTimeoutPlugin, nestingLimitPlugin, queryLimitPlugins } from "../http/limits.ts";
import { bodyLimitsPlugin } from "../http/body-limits.ts";
import { trustedDocumentsPlugin } from "../http/trusted-documents.ts";
import { dotSegmentsPlugin } from "../http/request-target.ts";
import { graphiqlAssetsPlugin, renderOfflineGraphiQL } from "../http/graphiql.ts";
import { compressionPlugin } from "../http/compression.ts";
import { graphqlErrorBodiesPlugin } from "../http/graphql-errors.ts";
import { docsPlugin } from "../http/docs.ts";
import { frontDoorPlugin } from "../http/front-door.ts";
import { passwordPagesPlugin } from "../http/password-pages.ts";
import { createEventBus } from "../events/bus.ts";
import type { EventBus } from "../core/events.ts";
import { createRateLimit, type RateLimit } from "../http/rate-limit.ts";
import { createResponseCache } from "../http/response-cache.ts";
import { responseCacheStore } from "../http/response-cache-store.ts";
import { createSignInAttempts, signInLimits, type SignInAttempts } from "../auth/sign-in-attempts.ts";
import {
  createObservability,
  logInternalError,
  yogaHealthCheckOff,
  type Observability,
  type ObservabilityOptions,
} from "../http/observability/index.ts";

export interface App {
  yoga: YogaServerInstance<Record<string, unknown>, Context>;
  /** The public schema, served at `/graphql`. */
  schema: GraphQLSchema;
  /** The internal schema REST's prepared documents run on (the public one plus `attributes`); never served. */
  restSchema: GraphQLSchema;
  rateLimit: RateLimit;
  /** Failed password sign-ins per person and per address, counted where the rate limits are (the sign-in pages'). */
  signInAttempts: SignInAttempts;
  /** Logger, metrics registry and tracing of this instance; `close()` flushes the spans. */
  observability: Observability;
  /** Announces committed events to subscriptions and the webhook dispatcher, across instances with Redis. */
  events: EventBus;
}

let sharedSchemas: Schemas | undefined;
/** The schemas depend only on the registry, so every app in a process shares them. */
export const getSchemas = () => (sharedSchemas ??= buildSchemas());
/** The public schema: what `/graphql` serves. */
export const getSchema = () => getSchemas().public;

/** Request and trace ids on every response, and in the extensions of every GraphQL error. */
function requestIdsPlugin(): Plugin<Context> {
  const stamp = (ctx: Context, result: unknown) => {
    const errors = (result as { errors?: readonly GraphQLError[] }).errors;
    for (const e of errors ?? [])
      Object.assign(e.extensions as object, { request_id: ctx.requestId, trace_id: ctx.traceId });
  };
  return {
    onExecute: () => ({
      onExecuteDone({ args, result }) {
        stamp(args.contextValue as Context, result);
      },
    }),
    // A subscription's refusal, and each of its events.
    onSubscribe: () => ({
      onSubscribeResult({ args, result }) {
        stamp(args.contextValue as Context, result);
        return { onNext: ({ result: next }) => stamp(args.contextValue as Context, next) };
      },
    }),
    onResponse({ request, response }) {
      const ids = idsOf(request);
      response.headers.set("X-Perscom-Request-Id", ids.requestId);
      response.headers.set("X-Perscom-Trace-Id", ids.traceId);
    },
  };
}

/**
 * No key, no work: a keyless operation that touches anything but introspection, or a root field that runs without a
 * credential (a public form's, `Operation.anonymous`), is a 401 before its variables are even coerced (PERSCOM checks
 * the key before validating the request).
 */
function requireKeyPlugin(): Plugin<Context> {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const ctx = args.contextValue as Context;
      if (ctx.auth) return;
      const operation = (args.document as DocumentNode).definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION);
      const touchesData =
        operation?.kind === Kind.OPERATION_DEFINITION &&
        operation.selectionSet.selections.some(
          (s) => s.kind !== Kind.FIELD || !(s.name.value.startsWith("__") || isAnonymousRootField(s.name.value)),
        );
      if (touchesData) setResultAndStopExecution({ errors: [ctx.authFailure ?? new ApiError("UNAUTHENTICATED")] });
    },
  };
}

export function createApp({
  db,
  config,
  events: givenEvents,
  ...options
}: { db: Database; config: Config; events?: EventBus } & ObservabilityOptions): App {
  const observability = createObservability({ db, config, ...options });
  const announced =
    givenEvents ??
    createEventBus(config, (error) =>
      observability.logger.warn(
        { err: error },
        "Redis is unreachable: committed events are not announced to other instances' subscriptions until it is back (the change feed has them)",
      ),
    );
  const rateLimit = createRateLimit(config, db);
  const responseCache = createResponseCache({
    store: responseCacheStore(config),
    enabled: config.responseCache,
    maxAgeSeconds: config.responseCacheMaxAge,
    rateLimit,
    onBumpError: (error) =>
      observability.logger.warn(
        { err: error },
        "The response cache could not record a write: cached public reads may be stale until they expire (RESPONSE_CACHE_MAX_AGE)",
      ),
  });
  const events = responseCache.invalidating(announced);
  responseCache.follow(announced);
  const signInAttempts = createSignInAttempts(rateLimit.counter, signInLimits(config));
  const anonymousWrites = publicWrites(config, rateLimit);
  const schema = rateLimit.apply(getSchemas().public);
  const masked = new WeakSet<object>();
  // REST's prepared documents run on the internal schema (same resolvers, plus `attributes`): it is never served.
  const restSchema = rateLimit.apply(getSchemas().internal);
  const yoga = createYoga<Record<string, unknown>, Context>({
    schema,
    graphqlEndpoint: "/graphql",
    landingPage: false,
    healthCheckEndpoint: yogaHealthCheckOff,
    batching: false,
    cors: corsPolicy(config, db, (error) =>
      observability.logger.warn(
        { err: error },
        "The registered CORS origins could not be read: the request gets no CORS headers",
      ),
    ),
    renderGraphiQL: renderOfflineGraphiQL,
    graphiql: { title: "Muster GraphQL" },
    logging: false,
    maskedErrors: {
      maskError(error) {
        // An error masked once (Yoga may mask the same result again) is answered, and logged, once.
        if (masked.has(error as object)) return error as Error;
        const apiError = toApiError(error);
        const answer = maskedAt(apiError, error);
        masked.add(answer);
        if (apiError.code === "INTERNAL") {
          const ext = (error as { extensions?: { request_id?: unknown; trace_id?: unknown } }).extensions;
          logInternalError(observability.logger, error, {
            ids: { requestId: ext?.request_id, traceId: ext?.trace_id },
            answer,
          });
        }
        return answer;
      },
    },
    context: async ({ request, ...serverContext }) => {
      const url = new URL(request.url);
      const { auth, failure } = await authenticate(db, config, request, url);
      const ids = idsOf(request);
      return {
        store: requestStore(db.store, config),
        prisma: db.prisma,
        provider: db.provider,
        config,
        auth,
        authFailure: failure,
        baseUrl: config.publicUrl ?? url.origin,
        requestId: ids.requestId,
        traceId: ids.traceId,
        loaders: new Map(),
        events,
        notify: request.headers.get("x-perscom-notifications")?.trim().toLowerCase() !== "false",
        anonymousWrites: anonymousWrites.of(request, serverContext as NodeServerContext),
      } satisfies Context;
    },
    plugins: [
      // First: no plugin routes on a URL whose dot segments the parser resolved, and every one sees the body read.
      dotSegmentsPlugin(),
      bodyLimitsPlugin(config),
      graphqlJsExecutorPlugin(config),
      observability.plugin(),
      requestIdsPlugin(),
      rateLimit.plugin(),
      graphqlErrorBodiesPlugin(),
      graphqlResultsPlugin(schema),
      securityHeadersPlugin(),
      varyOriginPlugin(),
      // Before every plugin that reads the database: a hit answers here. Its onResponse runs after the security
      // headers' (its Cache-Control wins) and before compression's (it stores and hashes the plain body).
      responseCache.plugin(),
      requireKeyPlugin(),
      relationScopesPlugin(),
      trustedDocumentsPlugin(db, config),
      wellFormedTextPlugin(),
      nestingLimitPlugin(config),
      ...queryLimitPlugins(config),
      executionTimeoutPlugin(config),
      concurrencyPlugin({ reads: config.maxConcurrentOperations, writes: config.maxConcurrentWrites }),
      openApiPlugin(),
      docsPlugin(),
      graphiqlAssetsPlugin(),
      frontDoorPlugin(),
      passwordPagesPlugin({ db, config, logger: observability.logger, rateLimit }),
      maintenancePlugin(db),
      filesPlugin(fileStorage(config, db.store)),
      restPlugin(restSchema, config),
      compressionPlugin(),
    ],
  });
  return { yoga, schema, restSchema, rateLimit, signInAttempts, observability, events };
}
