import type { GraphQLResolveInfo } from "graphql";
import { encodeGlobalID } from "@pothos/plugin-relay";
import { queryFromInfo } from "@pothos/plugin-prisma";
import { Repeater } from "graphql-yoga";
import type { ResourceDef } from "../resources/define.ts";
import { resources } from "../resources/index.ts";
import { viewScopesOf } from "../resources/operations.ts";
import { resourceDescription } from "../resources/descriptions.ts";
import { ApiError, validationError } from "../core/errors.ts";
import { guardOutright, owned, refusePublishable } from "../data/access.ts";
import { actionOfType, type ChangeAction, type EventBus, type PublishedEvent } from "../core/events.ts";
import { encodeCursor } from "../events/feed.ts";
import { eventTypeOf } from "../resources/event-types.ts";
import type { Builder } from "./builder.ts";
import type { Context } from "../request/context.ts";
import type { ObjectRefs } from "./objects.ts";
import { pascal, pluralWords } from "../core/names.ts";
import { registerRootField } from "./relation-scopes.ts";
import { dynamic, type Args } from "./pothos-dynamic.ts";
import { actorType } from "./actor.ts";

/*
 * GraphQL subscriptions: one change stream per resource (`rankRecordChanged(where:)`) and `newsfeedItemAdded`, fed by
 * the event bus (src/events/bus.ts: the batches the outbox announces after each commit, from every instance when
 * Redis is configured). A stream yields the events of the subscriber's account only, of a resource its key may view;
 * each payload's record is read fresh, by id, when the subscriber's selection is executed for that event (with a
 * context of its own: src/http/subscription-execution.ts), so its relations can be selected under the usual scopes.
 */

/** What a change stream yields for one event: the field's resource and the event as the bus carried it. */
export interface ChangePayload {
  def: ResourceDef;
  action: ChangeAction;
  event: PublishedEvent;
}

/** The arguments of a change stream (`rankRecordChanged(where:)`). */
interface StreamArgs {
  where?: { actions?: ChangeAction[] | null; rowIds?: number[] | null } | null;
}

/** The subscriptions open in one app (one instance): how many per API key, and how to end each. */
interface Live {
  perKey: Map<string, number>;
  ends: Set<() => void>;
  /** Shutting down: a stream opened now completes at once (the client reconnects, to another instance). */
  closed: boolean;
}
const liveByBus = new WeakMap<EventBus, Live>();
const liveOf = (events: EventBus): Live => {
  let live = liveByBus.get(events);
  if (!live) liveByBus.set(events, (live = { perKey: new Map(), ends: new Set(), closed: false }));
  return live;
};

/** Subscriptions open in the app of `events` on this instance (all credentials', or one's: an API key by its id). */
export function openSubscriptions(events: EventBus, credential?: string | number): number {
  const live = liveOf(events);
  if (credential === undefined) return [...live.perKey.values()].reduce((a, b) => a + b, 0);
  return live.perKey.get(typeof credential === "number" ? `key:${credential}` : credential) ?? 0;
}

/**
 * Ends every subscription open in the app of `events` (a shutdown): each stream completes, so an SSE response ends
 * with `event: complete` and a WebSocket client receives `complete` for its operation.
 */
export function closeSubscriptions(events: EventBus): void {
  const live = liveOf(events);
  live.closed = true;
  for (const end of [...live.ends]) end();
}

/** Events a slow subscriber may fall behind before its stream ends (it can resume from the change feed by cursor). */
const MAX_BEHIND = 1000;

/**
 * A stream of the account's events that `accept` keeps, as payloads of `def`. Takes one of the key's
 * `subscriptionsPerKey` places at once (a GraphQL error, RATE_LIMITED, when none is left); ending the stream in any
 * way (the client closes it, the server shuts down) gives the place back.
 */
function changeStream(
  ctx: Context,
  def: ResourceDef,
  accept: (event: PublishedEvent, action: ChangeAction) => boolean,
): AsyncIterableIterator<ChangePayload> {
  const { accountId, credential } = ctx.auth!;
  const live = liveOf(ctx.events);
  const open = live.perKey.get(credential) ?? 0;
  const cap = ctx.config.subscriptionsPerKey;
  if (open >= cap) {
    throw new ApiError(
      "RATE_LIMITED",
      `This API key already has ${open} open subscription${open === 1 ? "" : "s"} on this server, its limit (SUBSCRIPTIONS_PER_KEY=${cap}): close one before opening another.`,
    );
  }
  live.perKey.set(credential, open + 1);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    const left = (live.perKey.get(credential) ?? 1) - 1;
    if (left > 0) live.perKey.set(credential, left);
    else live.perKey.delete(credential);
    live.ends.delete(end);
  };

  const stream = new Repeater<ChangePayload>(async (push, stop) => {
    if (live.closed) return stop();
    const source = ctx.events.subscribe();
    void stop.then(() => source.return?.());
    let behind = 0;
    try {
      for await (const batch of source) {
        if (batch.accountId !== accountId) continue;
        for (const event of batch.events) {
          const action = actionOfType(event.type);
          if (event.resource !== def.name || !accept(event, action)) continue;
          if (++behind > MAX_BEHIND) {
            stop(
              new ApiError(
                "RATE_LIMITED",
                `The subscriber fell more than ${MAX_BEHIND} events behind; resume from the change feed with the last cursor received.`,
              ),
            );
            return;
          }
          void push({ def, action, event }).then(() => behind--);
        }
      }
    } finally {
      release();
      stop();
    }
  });
  const end = () => (release(), void stream.return());
  live.ends.add(end);
  return {
    next: () => stream.next(),
    // Also before the stream has started (a client gone at once): the place is given back either way.
    return: (value?: unknown) => (release(), stream.return(value as never)),
    throw: (error?: unknown) => (release(), stream.throw(error)),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/**
 * Fails unless the caller is authenticated and may view `def`, saying which scope subscribing needs. A stream carries
 * every change of the resource in the account, which no self-service right reaches: the scopes must be held outright.
 */
function guardSubscription(ctx: Context, def: ResourceDef, scopes: readonly string[]) {
  refusePublishable(ctx, "subscriptions");
  try {
    guardOutright(ctx, scopes);
  } catch (error) {
    if (error instanceof ApiError && error.code === "FORBIDDEN") {
      throw new ApiError(
        "FORBIDDEN",
        `Subscribing to ${pluralWords(def)} needs the ${scopes.join(", ")} scope${scopes.length > 1 ? "s" : ""}.`,
      );
    }
    throw error;
  }
}

/** The change streams of every resource that has events and a top-level route, and `newsfeedItemAdded`. */
export function addSubscriptionFields(builder: Builder, refs: ObjectRefs): void {
  const b = dynamic(builder);
  b.subscriptionType({
    description:
      "Live changes, pushed as they are committed: over Server-Sent Events (`POST /graphql` with `Accept: text/event-stream`, or GET) or a graphql-ws WebSocket at `/graphql`.",
  });
  // The change feed's enum (src/graphql/changes.ts), by name: one vocabulary for both.
  const action = "ChangeAction";
  const where = b.inputType("RecordChangedWhere", {
    description:
      "Which changes a change stream pushes: all of them unless narrowed here (every condition given must hold).",
    fields: (t) => ({
      actions: t.field({
        type: [action],
        required: false,
        description: "Only changes that did one of these (all actions when absent).",
      }),
      rowIds: t.intList({ required: false, description: "Only changes of the records with these row ids (`rowId`)." }),
    }),
  });

  const payloads = new Map<ResourceDef, unknown>();
  /** `RankRecordChangedPayload`: one event of `def`, with the record read fresh for the subscriber. */
  function payloadOf(def: ResourceDef) {
    if (payloads.has(def)) return payloads.get(def);
    const Name = pascal(def.name);
    const one = def.label.toLowerCase();
    const ref = b.objectRef(`${Name}ChangedPayload`).implement({
      description: `One change of ${one === "newsfeed" ? "a newsfeed item" : `a ${one}`}, as it was committed: what happened, and the record as it is now.`,
      fields: (t) => ({
        eventId: t.int({
          description: "The event's id: increasing, in the order events were written in the account.",
          resolve: (p: ChangePayload) => p.event.id,
        }),
        type: t.string({
          description: `The event's type, as webhooks name it (\`${eventTypeOf(def, "created")}\`, \`${eventTypeOf(def, "updated")}\`, \`${eventTypeOf(def, "deleted")}\`).`,
          resolve: (p: ChangePayload) => p.event.type,
        }),
        action: t.field({ type: action, description: "What the change did.", resolve: (p: ChangePayload) => p.action }),
        cursor: t.string({
          description:
            "The change feed's cursor of this event: `GET /v2/changes?after=<cursor>` resumes right after it (after a reconnection, say).",
          resolve: (p: ChangePayload) =>
            encodeCursor({ txid: p.event.txid, id: p.event.id, createdAt: new Date(p.event.createdAt) }),
        }),
        rowId: t.int({
          description: `The ${one}'s row id (for a deletion, all that is left of it besides \`data\`).`,
          resolve: (p: ChangePayload) => p.event.recordId,
        }),
        deletedId: t.id({
          nullable: true,
          description: `The deleted ${one}'s global id, to drop it from a client cache; null unless the change is a deletion.`,
          resolve: (p: ChangePayload) => (p.action === "deleted" ? encodeGlobalID(Name, p.event.recordId) : null),
        }),
        [def.name]: t.field({
          type: refs.objects.get(def.name),
          nullable: true,
          description: `The ${one} as it is now, read when this event is pushed: select its relations as anywhere else. Null for a deletion, or when it has been deleted since.`,
          resolve: (p: ChangePayload, _args: Args, ctx: Context, info: GraphQLResolveInfo) =>
            p.action === "deleted"
              ? null
              : ctx.store.findFirst(def.model, {
                  ...queryFromInfo({ context: ctx, info }),
                  where: owned(ctx, def, { id: p.event.recordId }),
                }),
        }),
        data: t.field({
          type: "JSON",
          description: `The ${one}'s attributes as REST showed them when the change was made (for a deletion, its last state).`,
          resolve: (p: ChangePayload) => p.event.data,
        }),
        changes: t.field({
          type: "JSON",
          nullable: true,
          description:
            'For an update, each changed attribute (REST\'s name) with its old and new value: `{"rank_id": {"old": 1, "new": 2}}`; null otherwise.',
          resolve: (p: ChangePayload) => p.event.changes,
        }),
        createdAt: t.field({
          type: "DateTime",
          description: "When the change was committed.",
          resolve: (p: ChangePayload) => p.event.createdAt,
        }),
        requestId: t.string({
          nullable: true,
          description: "The id of the request that made the change (its `X-Perscom-Request-Id`).",
          resolve: (p: ChangePayload) => p.event.requestId,
        }),
        traceId: t.string({
          nullable: true,
          description: "The trace id of the request that made the change.",
          resolve: (p: ChangePayload) => p.event.traceId,
        }),
        actor: t.field({
          type: actorType(builder),
          nullable: true,
          description: "Who made the change; null for a change made by the CLI or the system.",
          resolve: (p: ChangePayload) => p.event.actor,
        }),
      }),
    });
    payloads.set(def, ref);
    return ref;
  }

  for (const def of resources) {
    if (def.link || def.silent || !def.path) continue;
    const scopes = viewScopesOf(def);
    if (!scopes) continue;
    const field = `${def.name}Changed`;
    const things = pluralWords(def);
    b.subscriptionField(field, (t) =>
      t.field({
        type: payloadOf(def),
        description: `Every change of the account's ${things} (created, updated, deleted), pushed once committed, optionally narrowed by \`where\`. ${resourceDescription(def)}\n\nScopes: ${scopes.join(", ")}`,
        args: {
          where: t.arg({ type: where, required: false, description: "Which changes to push (all when absent)." }),
        },
        subscribe: (_root: unknown, args: StreamArgs, ctx: Context) => {
          guardSubscription(ctx, def, scopes);
          const actions: ChangeAction[] | null = args.where?.actions ?? null;
          const rowIds: number[] | null = args.where?.rowIds ?? null;
          if (rowIds && rowIds.length > ctx.config.maxPageSize) {
            throw validationError({
              "where.rowIds": [`where.rowIds must not have more than ${ctx.config.maxPageSize} items.`],
            });
          }
          const ids = rowIds && new Set(rowIds);
          return changeStream(
            ctx,
            def,
            (event, done) => (!actions || actions.includes(done)) && (!ids || ids.has(event.recordId)),
          );
        },
        resolve: (payload: ChangePayload) => payload,
      }),
    );
    registerRootField(field, { scopes, def });
  }

  const newsfeed = resources.find((def) => def.name === "newsfeedItem");
  const newsfeedScopes = newsfeed && viewScopesOf(newsfeed);
  if (newsfeed && newsfeedScopes && !newsfeed.silent) {
    b.subscriptionField("newsfeedItemAdded", (t) =>
      t.field({
        type: payloadOf(newsfeed),
        description: `Every item added to the account's newsfeed, pushed once committed. ${resourceDescription(newsfeed)}\n\nScopes: ${newsfeedScopes.join(", ")}`,
        subscribe: (_root: unknown, _args: Args, ctx: Context) => {
          guardSubscription(ctx, newsfeed, newsfeedScopes);
          return changeStream(ctx, newsfeed, (_event, done) => done === "created");
        },
        resolve: (payload: ChangePayload) => payload,
      }),
    );
    registerRootField("newsfeedItemAdded", { scopes: newsfeedScopes, def: newsfeed });
  }
}
