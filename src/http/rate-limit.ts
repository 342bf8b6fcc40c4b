import cluster from "node:cluster";
import type { IncomingMessage } from "node:http";
import type { GraphQLFieldConfig, GraphQLSchema } from "graphql";
import type { Plugin } from "graphql-yoga";
import { MapperKind, mapSchema } from "@graphql-tools/utils";
import { rateLimitDirective, type RateLimitArgs } from "graphql-rate-limit-directive";
import {
  RateLimiterCluster,
  RateLimiterClusterMaster,
  RateLimiterMemory,
  RateLimiterRedis,
  type IRateLimiterRedisOptions,
  type RateLimiterAbstract,
  type RateLimiterRes,
} from "rate-limiter-flexible";
import { Redis } from "ioredis";
import type { Config } from "../core/config.ts";
import type { Database } from "../db/prisma.ts";
import type { Context } from "../request/context.ts";
import { authenticate } from "../auth/authenticate.ts";
import { clientAddress, type NodeServerContext } from "./client-address.ts";
import { processLog } from "./observability/process-log.ts";
import { ApiError } from "../core/errors.ts";

/** Name of the schema directive put on every root field. */
export const RATE_LIMIT_DIRECTIVE = "rateLimit";
const WINDOW_SECONDS = 60;

/** What the limiter told us about one request: the last word of every root field it ran. */
interface Usage {
  /** The allowance reported: the lower of the key's and, for a publishable key, its client address's. */
  limit: number;
  remaining: number;
  msBeforeNext: number;
  limited: boolean;
}

export interface RateLimit {
  /** `schema` with the `@rateLimit` directive applied to every root Query and Mutation field. */
  apply(schema: GraphQLSchema): GraphQLSchema;
  /** Charges keyless requests when their context is built; `X-RateLimit-*` (on a 429 also `Retry-After`) on every response. */
  plugin(): Plugin;
  /**
   * A counter of `points` per `durationSeconds` per key, of its own (`<REDIS_PREFIX>:<name>:<key>` in Redis), kept
   * where the API allowance is: in Redis when configured (each instance counting in memory while it is unreachable,
   * as the allowance does), in the primary's memory for `WORKERS>1`, else in this process's memory.
   */
  counter(name: string, points: number, durationSeconds: number): RateLimiterAbstract;
  /**
   * A named allowance of `points` per `seconds` for keys of the caller's choosing (an address, an email), counted where
   * the API's limits are (`counter`).
   */
  allowance(name: string, points: number, seconds: number): Allowance;
  /**
   * Charges a request answered without running its operation (a shared-cache hit): `points` units of `credential`'s
   * allowance (`Auth.credential`), or one of the client address's when `credential` is null, as running it would have.
   * Throws `RATE_LIMITED` past the allowance; the request's `X-RateLimit-*` headers then say so.
   */
  chargeAnswered(request: Request, serverContext: unknown, credential: string | null, points: number): Promise<void>;
  /** Resolves once the shared store is reachable (at once in memory); false when it was not within `timeoutMs`. */
  ready(timeoutMs?: number): Promise<boolean>;
  close(): Promise<void>;
}

/** One named allowance (`RateLimit.allowance`). */
export interface Allowance {
  /** Takes one unit of `key`'s allowance: false once it is used up (until its window ends). */
  take(key: string): Promise<boolean>;
}

type ServerContext = NodeServerContext;

/**
 * Rate limits of one app: `config.rateLimitPerMinute` root fields per minute per API key (one REST request runs
 * one root field; a GraphQL document pays for each of its root fields), counted by the `@rateLimit` directive on
 * every root field. A request without a usable key pays one unit of its client address's allowance as soon as its
 * context is built, since it may be refused (401) before any root field runs; its root fields then cost nothing.
 * Counted in memory, or in Redis when `config.redisUrl` is set so that every instance shares the allowance. While
 * Redis is unreachable each instance counts in memory with the same allowance (rate-limiter-flexible's insurance
 * limiter) and says so once in the log. Without Redis, the workers of `WORKERS>1` count in their primary's memory
 * (rate-limiter-flexible's cluster limiter; see `shareRateLimitsAcrossWorkers`), so they share one allowance.
 */
export function createRateLimit(config: Config, db: Database): RateLimit {
  const points = config.rateLimitPerMinute;
  /** One allowance per API key; requests without a usable key share one per client address. */
  const bucketOf = (auth: Context["auth"], request: Request | undefined, serverContext: ServerContext | undefined) =>
    auth
      ? auth.credential
      : `ip:${request ? clientAddress(request, serverContext, config.trustProxy) : (serverContext?.req?.socket?.remoteAddress ?? "unknown")}`;
  const usage = new WeakMap<Request, Usage>();
  /** The bucket of each request whose context was built, so that reading it needs no second key lookup. */
  const buckets = new WeakMap<Request, string>();
  const redis = config.redisUrl ? connect(config.redisUrl) : null;
  let limiter: RateLimiterAbstract | undefined;
  const keep = (built: RateLimiterAbstract) => (limiter = built);

  const Base = redis ? RateLimiterRedis : countsInPrimary(config) ? RateLimiterCluster : RateLimiterMemory;
  /** The directive builds its limiter itself; keep a hold of it to read a bucket without consuming. */
  class Limiter extends (Base as typeof RateLimiterRedis) {
    constructor(options: IRateLimiterRedisOptions) {
      super(options);
      keep(this);
    }
  }
  const keyPrefix = `${config.redisPrefix}:rl`;
  const limiterOptions = redis
    ? {
        keyPrefix,
        storeClient: redis,
        rejectIfRedisNotReady: true,
        insuranceLimiter: new RateLimiterMemory({ points, duration: WINDOW_SECONDS }),
        inMemoryBlockOnConsumed: points + 1,
      }
    : { keyPrefix };

  const record = (request: Request | undefined, res: RateLimiterRes, limited: boolean, limit = points) => {
    if (!request) return;
    const seen = usage.get(request);
    usage.set(request, {
      limit: Math.min(seen?.limit ?? points, limit),
      remaining: Math.min(seen?.remaining ?? points, res.remainingPoints),
      msBeforeNext: Math.max(seen?.msBeforeNext ?? 0, res.msBeforeNext),
      limited: (seen?.limited ?? false) || limited,
    });
  };
  const requestOf = (ctx: unknown) => (ctx as { request?: Request }).request;

  const directive = rateLimitDirective<
    Context & { req?: IncomingMessage; request?: Request },
    IRateLimiterRedisOptions
  >({
    name: RATE_LIMIT_DIRECTIVE,
    limiterClass: Limiter as unknown as typeof RateLimiterAbstract,
    limiterOptions: limiterOptions as IRateLimiterRedisOptions,
    keyGenerator: (_args, _source, _fieldArgs, ctx) => bucketOf(ctx.auth, ctx.request, ctx),
    pointsCalculator: (_args, _source, _fieldArgs, ctx) => (ctx.auth ? 1 : 0),
    setState: (res, _args, _source, _fieldArgs, ctx) => record(requestOf(ctx), res, false),
    onLimit: (res, _args, _source, _fieldArgs, ctx) => {
      record(requestOf(ctx), res, true);
      throw new ApiError("RATE_LIMITED");
    },
  });

  /** One unit of `bucket`: a keyless request's, taken when its context is built, or a subscription's when it starts. */
  async function charge(request: Request | undefined, bucket: string, from = limiter!, limit = points, units = 1) {
    try {
      record(request, await from.consume(bucket, units), false, limit);
    } catch (rejection) {
      if (rejection instanceof Error) throw rejection;
      record(request, rejection as RateLimiterRes, true, limit);
      throw new ApiError("RATE_LIMITED");
    }
  }

  /**
   * The allowance of each client address for publishable keys: one unit per request (a GraphQL document of several
   * root fields pays one here, and one per root field from the key's own allowance).
   */
  const publicPoints = config.publicRateLimitPerMinute;
  let publicLimiter: RateLimiterAbstract | undefined;
  const addressOf = (request: Request, serverContext: ServerContext) =>
    `ip:${clientAddress(request, serverContext, config.trustProxy)}`;

  /** The bucket of a request that ran no root field (unknown route, invalid document...), read without consuming. */
  async function peek(request: Request, serverContext: ServerContext): Promise<Usage> {
    const bucket =
      buckets.get(request) ??
      bucketOf((await authenticate(db, config, request, new URL(request.url))).auth, request, serverContext);
    const res = await limiter?.get(bucket);
    return {
      limit: points,
      remaining: res ? res.remainingPoints : points,
      msBeforeNext: res?.msBeforeNext ?? 0,
      limited: false,
    };
  }

  /**
   * A subscription pays one unit when it starts, like any root field, and nothing per event (the directive would
   * charge every event's `resolve`). Its fields are this app's own copies (the transformer built them), so they are
   * wrapped in place.
   */
  function chargedOnSubscribe(schema: GraphQLSchema): GraphQLSchema {
    for (const field of Object.values(schema.getSubscriptionType()?.getFields() ?? {})) {
      const subscribe = field.subscribe;
      if (!subscribe) continue;
      field.subscribe = async (source, args, context, info) => {
        const ctx = context as Context & ServerContext & { request?: Request };
        // A keyless request paid when its context was built; the field refuses it.
        if (ctx.auth && limiter) await charge(ctx.request, bucketOf(ctx.auth, ctx.request, ctx));
        return subscribe(source, args, context, info);
      };
    }
    return schema;
  }

  const counter = (name: string, counted: number, duration: number): RateLimiterAbstract => {
    const options = { keyPrefix: `${config.redisPrefix}:${name}`, points: counted, duration };
    if (redis)
      return new RateLimiterRedis({
        ...options,
        storeClient: redis,
        rejectIfRedisNotReady: true,
        insuranceLimiter: new RateLimiterMemory({ points: counted, duration }),
      });
    return countsInPrimary(config) ? new RateLimiterCluster(options) : new RateLimiterMemory(options);
  };

  function allowance(name: string, allowed: number, seconds: number): Allowance {
    const limiter = counter(name, allowed, seconds);
    return {
      async take(key) {
        try {
          await limiter.consume(key, 1);
          return true;
        } catch (rejection) {
          if (rejection instanceof Error) throw rejection;
          return false;
        }
      },
    };
  }

  return {
    counter,
    allowance,
    async chargeAnswered(request, serverContext, credential, charged) {
      const bucket = credential ?? bucketOf(null, request, serverContext as ServerContext);
      buckets.set(request, bucket);
      if (limiter && charged > 0) await charge(request, bucket, limiter, points, charged);
      // The shared cache holds only publishable keys' and anonymous reads: a credential here is a publishable key's,
      // and its client address pays its unit as when the operation runs.
      if (credential !== null) {
        publicLimiter ??= counter("rl-public", publicPoints, WINDOW_SECONDS);
        await charge(request, addressOf(request, serverContext as ServerContext), publicLimiter, publicPoints);
      }
    },
    apply: (schema) =>
      chargedOnSubscribe(
        directive.rateLimitDirectiveTransformer(marked(schema, { limit: points, duration: WINDOW_SECONDS })),
      ),
    plugin: () => ({
      onContextBuilding:
        () =>
        async ({ context }) => {
          const ctx = context as unknown as Context & ServerContext & { request: Request };
          const bucket = bucketOf(ctx.auth, ctx.request, ctx);
          buckets.set(ctx.request, bucket);
          if (!ctx.auth && limiter) await charge(ctx.request, bucket);
          if (ctx.auth?.kind === "publishable") {
            publicLimiter ??= counter("rl-public", publicPoints, WINDOW_SECONDS);
            await charge(ctx.request, addressOf(ctx.request, ctx), publicLimiter, publicPoints);
          }
        },
      async onResponse({ request, response, serverContext }) {
        let seen = usage.get(request);
        if (!seen) {
          try {
            seen = await peek(request, serverContext as ServerContext);
          } catch (error) {
            processLog().warn(`Rate limit headers unavailable: ${(error as Error).message}`);
            return;
          }
        }
        response.headers.set("X-RateLimit-Limit", String(seen.limit));
        response.headers.set("X-RateLimit-Remaining", String(seen.remaining));
        if (seen.limited) {
          const seconds = Math.max(1, Math.ceil(seen.msBeforeNext / 1000));
          response.headers.set("Retry-After", String(seconds));
          response.headers.set("X-RateLimit-Reset", String(Math.floor(Date.now() / 1000) + seconds));
        }
      },
    }),
    async ready(timeoutMs = 5000) {
      if (!redis || redis.status === "ready") return true;
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => done(false), timeoutMs);
        const done = (ok: boolean) => {
          clearTimeout(timer);
          redis.off("ready", onReady);
          resolve(ok);
        };
        const onReady = () => done(true);
        redis.on("ready", onReady);
      });
    },
    async close() {
      if (!redis) return;
      closing.add(redis);
      redis.disconnect();
    },
  };
}

/** A worker of `WORKERS>1` without Redis: its counters live in the primary, shared with the other workers. */
const countsInPrimary = (config: Config) => !config.redisUrl && config.workers > 1 && cluster.isWorker;

/**
 * In the primary of `WORKERS>1`, before forking: keeps the workers' counters (when there is no Redis to keep them),
 * so that the allowance is one for all the workers, not one per worker.
 */
export function shareRateLimitsAcrossWorkers(config: Config): void {
  if (!config.redisUrl) new RateLimiterClusterMaster();
}

/** Clients being closed on purpose: their disconnection is no outage. */
const closing = new WeakSet<Redis>();
const markedSchemas = new WeakMap<GraphQLSchema, Map<string, GraphQLSchema>>();

/** `schema` with `@rateLimit(limit, duration)` on every query and mutation field; built once per schema and allowance. */
function marked(schema: GraphQLSchema, args: RateLimitArgs): GraphQLSchema {
  const bySchema = markedSchemas.get(schema) ?? new Map<string, GraphQLSchema>();
  markedSchemas.set(schema, bySchema);
  const key = `${args.limit}/${args.duration}`;
  let result = bySchema.get(key);
  if (!result) {
    const limited = (field: GraphQLFieldConfig<unknown, unknown>) => ({
      ...field,
      extensions: {
        ...field.extensions,
        directives: { ...(field.extensions?.directives as object), [RATE_LIMIT_DIRECTIVE]: [args] },
      },
    });
    result = mapSchema(schema, { [MapperKind.QUERY_ROOT_FIELD]: limited, [MapperKind.MUTATION_ROOT_FIELD]: limited });
    bySchema.set(key, result);
  }
  return result;
}

/** A Redis client that never queues: while disconnected, commands fail at once and the insurance limiter counts. */
function connect(url: string): Redis {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 1000,
    connectTimeout: 2000,
  });
  let healthy = true;
  const down = (reason: string) => {
    if (!healthy || closing.has(client)) return;
    healthy = false;
    processLog().warn(
      `Redis unavailable (${reason}): rate limits are counted in memory on this instance until it returns.`,
    );
  };
  client.on("error", (error: Error) => down(error.message));
  client.on("close", () => down("connection closed"));
  client.on("ready", () => {
    if (healthy) return;
    healthy = true;
    processLog().warn("Redis reachable again: rate limits are shared again.");
  });
  return client;
}
