import { createHash } from "node:crypto";
import {
  getOperationAST,
  Kind,
  OperationTypeNode,
  type DocumentNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from "graphql";
import type { Plugin } from "graphql-yoga";
import type { Auth, Context } from "../request/context.ts";
import type { CommittedEvents, EventBus } from "../core/events.ts";
import { actionOfType } from "../core/events.ts";
import { bearerOf } from "../auth/admission.ts";
import { hashKey, isPublishableKey } from "../auth/keys.ts";
import { toApiError, errorResponse } from "./errors.ts";
import { idsOf } from "./ids.ts";
import { vouchForOrigin } from "./cors.ts";
import { Response } from "./response.ts";
import type { RateLimit } from "./rate-limit.ts";
import { resourcesChanged, resourcesRead } from "./read-resources.ts";
import type { CachedResponse, ResponseCacheStore } from "./response-cache-store.ts";

export interface ResponseCacheOptions {
  store: ResponseCacheStore;
  /** False: no shared cache (RESPONSE_CACHE=off); ETag, 304 and Cache-Control stay. */
  enabled: boolean;
  /** Seconds a public read is fresh, in browsers and shared caches (`max-age`) and in `store`. */
  maxAgeSeconds: number;
  /** Charges a cache hit to the allowance the operation would have used. */
  rateLimit: Pick<RateLimit, "chargeAnswered">;
  /** Told when a bump fails (Redis unreachable): cached reads may then be stale until they expire. */
  onBumpError(error: unknown): void;
}

export interface ResponseCache {
  plugin(): Plugin;
  /** `bus`, with each batch announced also bumping the generations of the resources it changed (before it goes on). */
  invalidating(bus: EventBus): EventBus;
  /** Bumps, in this instance's own counters, for batches other instances committed (no-op with Redis). */
  follow(bus: EventBus): void;
  /** Every entry of `accountId` stale from now on (`POST /cache`). */
  purge(accountId: number): Promise<void>;
}

/** The account an anonymous read is counted under: its account is not known before it runs, so any account's write counts. */
const ANY_ACCOUNT = 0;
const EPOCH = "*";
/** `POST /cache`: the public graph's mutation and the REST facade's root field. */
const PURGE_FIELDS = new Set(["clearCache", "restClearCache"]);

/** Who asks, told by the request alone: a publishable key (`mpk_`), nobody, or someone whose reads are never shared. */
function publicCaller(request: Request, url: URL): { bearer: string | null } | null {
  const bearer = bearerOf(request, url);
  if (bearer === null) return request.headers.has("authorization") ? null : { bearer: null };
  return isPublishableKey(bearer) ? { bearer } : null;
}

/** The request headers that change a public read's answer (besides the credential and the URL). */
const VARYING = ["origin", "accept", "x-perscom-id"];

function cacheKey(request: Request, bearer: string | null): string {
  const parts = [request.method, request.url, bearer === null ? "" : hashKey(bearer)];
  for (const name of VARYING) parts.push(request.headers.get(name) ?? "");
  return createHash("sha256").update(JSON.stringify(parts)).digest("base64url");
}

const etagOf = (body: string) => `W/"${createHash("sha256").update(body).digest("base64url").slice(0, 32)}"`;

/** `If-None-Match` names `etag` (weak comparison, as RFC 9110 asks for it), or is `*`. */
function matches(header: string | null, etag: string): boolean {
  if (!header) return false;
  const opaque = etag.replace(/^W\//, "");
  return header.split(",").some((tag) => {
    const t = tag.trim();
    return t === "*" || t.replace(/^W\//, "") === opaque;
  });
}

const namesOf = (accountId: number, resources: readonly string[]) => [
  `${accountId}:${EPOCH}`,
  ...resources.map((r) => `${accountId}:${r}`),
];

const rootFields = (operation: OperationDefinitionNode) =>
  operation.selectionSet.selections.filter((s) => s.kind !== Kind.FIELD || !s.name.value.startsWith("__")).length;

/** What an execution of a public read left for its response to be stored with. */
interface Candidate {
  names: string[];
  generations: number[] | null;
  credential: string | null;
  points: number;
  origins: string[] | undefined;
  ok: boolean;
}

function vary(headers: Headers, ...names: string[]) {
  const present = (headers.get("vary") ?? "").split(",").map((v) => v.trim().toLowerCase());
  const added = names.filter((n) => !present.includes(n.toLowerCase()));
  if (added.length) headers.set("Vary", [headers.get("vary"), ...added].filter(Boolean).join(", "));
}

/**
 * ETag (a hash of the body) and `If-None-Match` → 304 on every successful GET that ran an operation (REST, GraphQL);
 * `Cache-Control: public, max-age` for publishable keys and anonymous reads, `private, no-cache` for the rest (they
 * revalidate). And the shared cache of public reads: a GET from a publishable key or from nobody is looked up before
 * anything else runs (no admission, no SQL), by a key of the credential's hash, the URL and the headers in `VARYING`;
 * a 2xx answered without errors is stored with the generations of the resources its document reads, read before it
 * ran. A write bumps the generations of what it changed (`invalidating`), so the next lookup misses.
 *
 * An entry is stored only after its credential authenticated, and a hit does not authenticate again: a revoked (or
 * re-scoped) publishable key still reads the entries stored for it while they are fresh, at most `maxAgeSeconds` old
 * (what browsers and CDNs may keep of the same public response anyway). Any other credential costs no lookup: the
 * request alone tells (`publicCaller`).
 */
export function createResponseCache(options: ResponseCacheOptions): ResponseCache {
  const { store, enabled, maxAgeSeconds, rateLimit } = options;
  const keys = new WeakMap<Request, string>();
  const candidates = new WeakMap<Request, Candidate>();
  const ran = new WeakMap<Request, Auth | null>();
  const hits = new WeakMap<Request, CachedResponse>();
  /** Bumps and purges started by a request, by request id: its response waits for them. */
  const pending = new Map<string, Promise<unknown>>();

  const track = (requestId: string | null, work: Promise<unknown>) => {
    const settled = work.catch(options.onBumpError);
    if (!requestId) return;
    const all = Promise.all([pending.get(requestId), settled]);
    pending.set(requestId, all);
    void all.then(() => pending.get(requestId) === all && pending.delete(requestId));
  };

  const bumpFor = (batch: CommittedEvents) => {
    const names = new Set<string>();
    for (const event of batch.events)
      for (const resource of resourcesChanged(event.resource, actionOfType(event.type))) {
        names.add(`${batch.accountId}:${resource}`);
        names.add(`${ANY_ACCOUNT}:${resource}`);
      }
    return store.bump([...names]);
  };

  const purge = (accountId: number) => store.bump([`${accountId}:${EPOCH}`, `${ANY_ACCOUNT}:${EPOCH}`]);

  async function lookup(key: string): Promise<CachedResponse | null> {
    try {
      const entry = await store.read(key);
      if (!entry) return null;
      const now = await store.generations(entry.names);
      return now.every((g, i) => g === entry.generations[i]) ? entry : null;
    } catch {
      return null;
    }
  }

  const plugin = (): Plugin => ({
    async onRequest({ request, url, endResponse, serverContext }) {
      if (!enabled || request.method !== "GET") return;
      const caller = publicCaller(request, url);
      if (!caller) return;
      const key = cacheKey(request, caller.bearer);
      keys.set(request, key);
      const entry = await lookup(key);
      if (!entry) return;
      try {
        await rateLimit.chargeAnswered(request, serverContext, entry.credential, entry.points);
      } catch (error) {
        endResponse(errorResponse(toApiError(error), idsOf(request)));
        return;
      }
      hits.set(request, entry);
      const origin = request.headers.get("origin");
      if (origin !== null && entry.origins?.includes(origin)) vouchForOrigin(request);
      endResponse(
        new Response(entry.body, {
          status: entry.status,
          headers: { "content-type": entry.contentType, "content-length": String(Buffer.byteLength(entry.body)) },
        }),
      );
    },
    async onExecute({ args }) {
      const ctx = args.contextValue as unknown as Context & { request?: Request };
      const request = ctx.request;
      if (!request) return;
      const operation = getOperationAST(args.document as DocumentNode, args.operationName);
      if (!operation) return;
      if (
        operation.operation === OperationTypeNode.MUTATION &&
        operation.selectionSet.selections.some((s) => s.kind === Kind.FIELD && PURGE_FIELDS.has(s.name.value))
      ) {
        return {
          onExecuteDone({ result }) {
            const errors = (result as { errors?: unknown[] }).errors;
            if (ctx.auth && !errors?.length) track(ctx.requestId, purge(ctx.auth.accountId));
          },
        };
      }
      if (request.method !== "GET" || operation.operation !== OperationTypeNode.QUERY) return;
      ran.set(request, ctx.auth);
      const key = keys.get(request);
      const publicAuth = !ctx.auth || ctx.auth.kind === "publishable";
      if (!key || !publicAuth) return;
      if (candidates.has(request)) {
        // More than one operation for one response: not a read this cache knows how to key.
        candidates.get(request)!.ok = false;
        return;
      }
      const names = namesOf(
        ctx.auth?.accountId ?? ANY_ACCOUNT,
        resourcesRead(args.schema as GraphQLSchema, args.document),
      );
      const candidate: Candidate = {
        names,
        // Before the operation runs: a write committed while it runs bumps past these, so what it stores is stale.
        generations: await store.generations(names).catch(() => null),
        credential: ctx.auth?.credential ?? null,
        points: ctx.auth ? rootFields(operation) : 1,
        origins: ctx.auth?.origins ? [...ctx.auth.origins] : undefined,
        ok: true,
      };
      candidates.set(request, candidate);
      return {
        onExecuteDone({ result }) {
          const errors = (result as { errors?: unknown[] }).errors;
          if (Symbol.asyncIterator in (result as object) || errors?.length) candidate.ok = false;
        },
      };
    },
    async onResponse({ request, response, setResponse }) {
      const waiting = pending.get(idsOf(request).requestId);
      if (waiting) await waiting;
      if (request.method !== "GET" || response.status < 200 || response.status >= 300) return;
      const hit = hits.get(request);
      if (!hit && !ran.has(request)) return;
      const auth = ran.get(request);
      const isPublic = hit !== undefined || !auth || auth.kind === "publishable";
      const headers = new Headers(response.headers);
      headers.set("Cache-Control", isPublic ? `public, max-age=${maxAgeSeconds}` : "private, no-cache");
      vary(headers, "Origin", "Authorization", "X-Perscom-Id");
      let body: string;
      let etag: string;
      if (hit) {
        ({ body, etag } = hit);
      } else {
        body = await response.text();
        etag = etagOf(body);
        const candidate = candidates.get(request);
        const key = keys.get(request);
        if (candidate?.ok && candidate.generations && key) {
          const entry: CachedResponse = {
            status: response.status,
            contentType: response.headers.get("content-type") ?? "application/json",
            body,
            etag,
            names: candidate.names,
            generations: candidate.generations,
            credential: candidate.credential,
            points: candidate.points,
            origins: candidate.origins,
          };
          await store.write(key, entry, maxAgeSeconds).catch(() => undefined);
        }
      }
      headers.set("ETag", etag);
      if (matches(request.headers.get("if-none-match"), etag)) {
        headers.delete("content-type");
        headers.delete("content-length");
        setResponse(new Response(null, { status: 304, headers }));
        return;
      }
      headers.set("Content-Length", String(Buffer.byteLength(body)));
      setResponse(new Response(body, { status: response.status, statusText: response.statusText, headers }));
    },
  });

  return {
    plugin,
    purge,
    invalidating: (bus) => ({
      subscribe: () => bus.subscribe(),
      publish(batch) {
        track(batch.events[0]?.requestId ?? null, bumpFor(batch));
        bus.publish(batch);
      },
      close: async () => {
        await bus.close();
        await store.close();
      },
    }),
    follow(bus) {
      if (store.shared || !enabled) return;
      void (async () => {
        for await (const batch of bus.subscribe()) await bumpFor(batch).catch(options.onBumpError);
      })();
    },
  };
}
