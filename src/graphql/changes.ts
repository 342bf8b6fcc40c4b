import { brandWithType } from "@pothos/core";
import { ApiError, validationError } from "../core/errors.ts";
import { guard, refusePublishable } from "../data/access.ts";
import type { ResourceDef } from "../resources/define.ts";
import { resources, resourceNamed } from "../resources/index.ts";
import { operations, viewScopesOf, type Operation } from "../resources/operations.ts";
import {
  countEvents,
  decodeCursor,
  encodeCursor,
  eventById,
  readEvents,
  readEventsBefore,
  START,
  type Cursor,
  type FeedPosition,
} from "../events/feed.ts";
import { retentionCutoff } from "../events/retention.ts";
import { actionOfType, eventPayload, type ChangeEventRecord } from "../core/events.ts";
import { eventModelOf } from "../resources/event-types.ts";
import { eventTypes } from "../events/types.ts";
import type { Builder } from "./builder.ts";
import type { Context } from "../request/context.ts";
import { sizedElsewhere } from "./cost.ts";
import { morphOwnersOf } from "../resources/index.ts";
import { registerRootField } from "./relation-scopes.ts";
import { dynamic, type DynamicFieldBuilder } from "./pothos-dynamic.ts";
import { actorType } from "./actor.ts";

/*
 * The change feed: the account's events in the outbox's order (src/events/feed.ts), a page at a time, with a cursor
 * to resume from. The public graph has it as the connection `changes`; REST's `GET /changes` runs `restChanges`.
 * Any key may read it, and sees the events of the resources it may view.
 */

export const CHANGE_EVENT = "ChangeEvent";

/**
 * The scopes a key needs to see `def`'s events: `view:<resource>`; for rows no route reads on their own (link rows,
 * schedules, tags), the view scopes of every resource they belong to (none for a tag).
 */
function eventScopesOf(def: ResourceDef): readonly string[] {
  const own = viewScopesOf(def);
  if (own) return own;
  const owners = Object.values(def.relations).flatMap((rel) =>
    rel.kind === "belongsTo" ? [resourceNamed(rel.target)] : rel.kind === "morphTo" ? morphOwnersOf(def.name) : [],
  );
  return [...new Set(owners.flatMap((owner) => viewScopesOf(owner) ?? []))].sort();
}

/** Each resource that records events, with its event model name and the scopes to see them. */
const eventResources = resources
  .filter((def) => !def.silent)
  .map((def) => ({ def, model: eventModelOf(def), scopes: eventScopesOf(def) }));
const resourceNames = new Set(eventResources.map((r) => r.def.name));
const knownTypes = new Set(eventTypes);

/** What `scopes` may see of the feed: the event types of the resources it may view (null for all). */
function visibleTypes(scopes: ReadonlySet<string>): Set<string> | null {
  if (scopes.has("*")) return null;
  return new Set(
    eventResources
      .filter((r) => r.scopes.every((s) => scopes.has(s)))
      .flatMap((r) => eventTypes.filter((t) => t.startsWith(`${r.model}.`))),
  );
}

/** Whether a key with `scopes` may see `event` (the same rule as the feed's). */
export function mayViewEvent(scopes: ReadonlySet<string>, event: Pick<ChangeEventRecord, "type">): boolean {
  return visibleTypes(scopes)?.has(event.type) ?? true;
}

export interface FeedArgs {
  after?: string | null;
  before?: string | null;
  /** At most this many events (already checked against the page maximum). */
  size: number;
  /** The last `size` events (before `before`), instead of the first (after `after`). */
  backwards: boolean;
  types?: readonly string[] | null;
  resources?: readonly string[] | null;
}

/** Names of the arguments as the caller sent them, for the fields a 422 names. */
export interface FeedArgNames {
  after: string;
  before: string;
  types: string;
  resources: string;
}

export interface FeedPage {
  events: ChangeEventRecord[];
  /** How many events the caller may see of the types asked, over all pages. */
  count: () => Promise<number>;
  /** More events follow the page (forward), or precede it (backwards). */
  more: boolean;
  /** Where to resume reading forward: the page's last event, or the cursor given when the page is empty; see `resumeCursor`. */
  resume: string | null;
}

/**
 * A cursor the client sent, or null when it sent none. One that is not ours is a 422 naming the argument; one older
 * than the retention period (only `after` matters: what follows it may have been pruned) is a 410, CURSOR_EXPIRED.
 */
function cursorArg(ctx: Context, text: string | null | undefined, name: string, retained: boolean): Cursor | null {
  if (text == null) return null;
  const cursor = decodeCursor(text);
  if (!cursor) throw validationError({ [name]: [`The ${name} field is not a change feed cursor.`] });
  if (retained && cursor.createdAt < retentionCutoff(ctx.config).getTime()) throw new ApiError("CURSOR_EXPIRED");
  return cursor;
}

/** The event types asked for by `types` and `resources` (null for every type); unknown ones are a 422 naming their field. */
function askedTypes(args: FeedArgs, names: FeedArgNames): Set<string> | null {
  const errors: Record<string, string[]> = {};
  const unknown = (values: readonly string[] | null | undefined, known: Set<string>) =>
    (values ?? []).filter((v) => !known.has(v));
  const badTypes = unknown(args.types, knownTypes);
  if (badTypes.length)
    errors[names.types] = [
      `The ${names.types} field has unknown event types: ${badTypes.join(", ")}. Types are \`<model>.created\`, \`.updated\` or \`.deleted\`, such as \`rankrecord.created\`.`,
    ];
  const badResources = unknown(args.resources, resourceNames);
  if (badResources.length)
    errors[names.resources] = [
      `The ${names.resources} field has unknown resources: ${badResources.join(", ")}. Resources are named as events name them, such as \`rankRecord\`.`,
    ];
  if (Object.keys(errors).length) throw validationError(errors);
  let asked: Set<string> | null = args.types?.length ? new Set(args.types) : null;
  if (args.resources?.length) {
    const models = new Set(eventResources.filter((r) => args.resources!.includes(r.def.name)).map((r) => r.model));
    const ofResources = eventTypes.filter((t) => models.has(t.slice(0, t.lastIndexOf("."))));
    asked = new Set(asked ? ofResources.filter((t) => asked!.has(t)) : ofResources);
  }
  return asked;
}

/**
 * The cursor to resume from after a page that reached the end of what is shown: the page's last position, stamped with
 * the time of this read rather than of its event, so that a client polling a quiet account keeps a cursor younger than
 * the retention period. That is safe: an event that follows the position but is not shown yet waits on a transaction
 * running now (its own, or one that had its id before the event was written: src/events/feed.ts), which began less
 * than the execution timeout ago (it is rolled back after that) and before the event was written; so the event is
 * younger than the stamp, and is not pruned before the cursor expires. A minute covers clock skew.
 */
function resumeCursor(ctx: Context, position: FeedPosition & { createdAt?: number }): string {
  const now = Date.now() - ctx.config.executionTimeoutMs - 60_000;
  return encodeCursor({
    txid: position.txid,
    id: position.id,
    createdAt: new Date(Math.max(position.createdAt ?? 0, now)),
  });
}

/** One page of the caller's feed. */
export async function readFeed(ctx: Context, args: FeedArgs, names: FeedArgNames): Promise<FeedPage> {
  const accountId = guard(ctx, []);
  refusePublishable(ctx, "the change feed");
  const after = cursorArg(ctx, args.after, names.after, true);
  const before = cursorArg(ctx, args.before, names.before, false);
  const asked = askedTypes(args, names);
  const visible = visibleTypes(ctx.auth!.scopes);
  const types =
    visible && asked
      ? [...asked].filter((t) => visible.has(t))
      : visible
        ? [...visible]
        : asked
          ? [...asked]
          : undefined;
  const empty = types !== undefined && types.length === 0;
  const db = ctx.store;
  let counted: Promise<number> | undefined;
  const count = () => (counted ??= empty ? Promise.resolve(0) : countEvents(db, { accountId, types }));
  const read =
    empty || args.size === 0
      ? []
      : args.backwards
        ? await readEventsBefore(db, { accountId, before: before ?? undefined, limit: args.size + 1, types })
        : await readEvents(db, { accountId, after: after ?? START, limit: args.size + 1, types });
  const more = read.length > args.size;
  const events = !more ? read : args.backwards ? read.slice(1) : read.slice(0, args.size);
  const last = events.at(-1);
  // The page reaches the end of what is shown when nothing follows it: read forward without more, or backward from the end.
  const atEnd = args.backwards ? !before : !more && args.size > 0;
  let resume: string | null;
  if (atEnd)
    resume = resumeCursor(
      ctx,
      last ? { txid: last.txid, id: last.id, createdAt: last.createdAt.getTime() } : (after ?? START),
    );
  else resume = last ? encodeCursor(last) : args.backwards ? null : (args.after ?? null);
  return { events, count, more, resume };
}

/** The event with row id `id` if the caller may see it (`node(id:)`). */
export async function changeEventNode(ctx: Context, id: number): Promise<ChangeEventRecord | null> {
  const accountId = guard(ctx, []);
  refusePublishable(ctx, "the change feed");
  const event = Number.isSafeInteger(id) ? await eventById(ctx.store, accountId, id) : null;
  if (!event || !mayViewEvent(ctx.auth!.scopes, event)) return null;
  return (brandWithType(event, CHANGE_EVENT as never), event);
}

/**
 * An event as the REST feed lists it: the webhook payload, the automation run that wrote it and its chain's depth
 * (null and 0 for a write of a person's, a key's or the CLI's), and the cursor to resume after it.
 */
export const feedItem = (event: ChangeEventRecord) => ({
  ...eventPayload(event),
  automation_run_id: event.automationRunId ?? null,
  depth: event.depth ?? 0,
  cursor: encodeCursor(event),
});

const SCOPE_RULE =
  "Any API key may read it; it shows the events of the resources the key may view (`view:<resource>`, or `*`): an event of a row no route reads on its own (a link row, a schedule, a tag) needs the view scopes of the resources it belongs to.";

/** The REST route of the feed operation, for descriptions. */
const restOf = (op: Operation) =>
  `REST: ${op.method} /{version}${op.path} — scopes: none (events filtered by the key's view scopes)`;
const feedOperation = () => operations.find((op) => op.kind === "feed")!;

/** The public `changes` connection and its types. */
export function addChangeFeed(builder: Builder): void {
  const b = dynamic(builder);
  const action = b.enumType("ChangeAction", {
    description: "What happened to the record.",
    values: {
      CREATED: { value: "created", description: "The record was created." },
      UPDATED: { value: "updated", description: "The record changed; `changes` holds its old and new values." },
      DELETED: { value: "deleted", description: "The record was deleted; `data` holds its last state (a tombstone)." },
    },
  });
  const node = b.node(CHANGE_EVENT, {
    description:
      "A change to one record of the account, as the change feed, webhooks and subscriptions carry it: created, updated or deleted (a tombstone: the type `<model>.deleted` and the record's id, with its last state).",
    id: { resolve: (e: ChangeEventRecord) => e.id },
    isTypeOf: (value: unknown) => typeof value === "object" && value !== null && "recordId" in value && "txid" in value,
    fields: (t) => ({
      rowId: t.exposeInt("id", {
        description:
          "The event's row id (REST's `id`): events of the account are numbered in the order they were written.",
      }),
      type: t.exposeString("type", {
        description:
          "The event type, as PERSCOM's webhooks name it: `<model>.<action>`, such as `rankrecord.created` or `user.deleted`.",
      }),
      action: t.field({
        type: action,
        description: "What happened: the type's action.",
        resolve: (e: ChangeEventRecord) => actionOfType(e.type),
      }),
      resource: t.exposeString("resource", {
        description: "The record's resource, as the API names it (`rankRecord`).",
      }),
      recordId: t.exposeInt("recordId", { description: "The record's row id (REST's `id`; `rowId` in the graph)." }),
      data: t.field({
        type: "JSON",
        description: "The record as REST shows it after the change; for a deletion, its last state.",
        resolve: (e: ChangeEventRecord) => e.data,
      }),
      changes: t.field({
        type: "JSON",
        nullable: true,
        description:
          "On an update, `{ column: { old, new } }` for each column that changed (snake_case, as REST names them); null otherwise.",
        resolve: (e: ChangeEventRecord) => e.changes,
      }),
      requestId: t.exposeString("requestId", {
        nullable: true,
        description: "The id of the request that made the change (`X-Perscom-Request-Id`).",
      }),
      traceId: t.exposeString("traceId", {
        nullable: true,
        description: "The trace id of the request that made the change.",
      }),
      actor: t.field({
        type: actorType(builder),
        nullable: true,
        description: "Who made the change; null for a change made by the CLI or the system.",
        resolve: (e: ChangeEventRecord) => e.actor,
      }),
      automationRunId: t.int({
        nullable: true,
        description:
          "The automation run whose action made the change (REST's `automation_run_id`); null for a change of a person's, a key's or the CLI's.",
        resolve: (e: ChangeEventRecord) => e.automationRunId ?? null,
      }),
      depth: t.int({
        description:
          "How deep in a chain of automations the change was made: 0 when no automation made it, 1 when an automation's action did on an event at depth 0, and so on. Events at depth 3 trigger no automation.",
        resolve: (e: ChangeEventRecord) => e.depth ?? 0,
      }),
      createdAt: t.field({
        type: "DateTime",
        description: "When the change was recorded (UTC).",
        resolve: (e: ChangeEventRecord) => e.createdAt,
      }),
      cursor: t.string({
        description: "Where this event is in the feed: pass it as `after` to read the events that follow it.",
        resolve: (e: ChangeEventRecord) => encodeCursor(e),
      }),
    }),
  });
  const edge = b.objectRef(`${CHANGE_EVENT}Edge`).implement({
    description: "One event of a page of the change feed, with its cursor.",
    fields: (t) => ({
      cursor: t.string({
        description: "Where this event is in the feed: pass it as `after` to read what follows it, or `before`.",
        resolve: (e: FeedEdge) => e.cursor,
      }),
      node: t.field({ type: node, description: "The event.", resolve: (e: FeedEdge) => e.node }),
    }),
  });
  const connection = b.objectRef(`${CHANGE_EVENT}Connection`).implement({
    description: "A page of the change feed (Relay connection), with the cursors to page on and to resume from.",
    fields: (t) => ({
      totalCount: t.int({
        description: "How many events match, over all pages, as the key sees them (counted only when selected).",
        resolve: (c: FeedConnection) => c.totalCount(),
      }),
      pageInfo: t.field({
        type: b.pageInfoRef(),
        description:
          "Whether more events follow (or, read with `last`, precede) this page, and its cursors. `endCursor` is where to resume: the last event's position; when the page reached the newest event, stamped with the time of this read so that a client polling a quiet account keeps a cursor younger than the retention period; the `after` given when the page is empty.",
        resolve: (c: FeedConnection) => c.pageInfo,
      }),
      edges: t.field({
        type: [edge],
        complexity: sizedElsewhere,
        description: "The events of this page with their cursors, in order.",
        resolve: (c: FeedConnection) => c.edges,
      }),
      nodes: t.field({
        type: [node],
        complexity: sizedElsewhere,
        description: "The events of this page, in order.",
        resolve: (c: FeedConnection) => c.nodes,
      }),
    }),
  });
  const where = b.inputType("ChangeEventWhere", {
    description:
      "Which events to list: those of any of the types and of any of the resources given (every event when both are absent).",
    fields: (t) => ({
      types: t.stringList({
        required: false,
        description: "Event types, such as `rankrecord.created` or `user.deleted`.",
      }),
      resources: t.stringList({
        required: false,
        description: "Resources, as events name them (`rankRecord`, `user`).",
      }),
    }),
  });
  const rest = restOf(feedOperation());

  b.queryField("changes", (t) =>
    t.field({
      type: connection,
      nullable: true,
      description: `The account's changes in the order they were committed: every create, update and delete of a record (a deletion is a tombstone), a page at a time. Read it from the start, keep the \`endCursor\` of each page, and pass it as \`after\` to get only what changed since; \`last: 1\` reads the newest event (a place to start from). A cursor older than the event retention period answers an error with code CURSOR_EXPIRED (410): read everything again, then follow the feed from a new cursor. ${SCOPE_RULE}\n\n${rest}`,
      args: {
        first: t.arg.int({
          description:
            "At most this many events from the start (after `after`): 20 when neither first nor last is given; at most the server's page maximum.",
        }),
        after: t.arg.string({
          description: "Only events after this cursor (an `endCursor`, or an edge's or event's `cursor`).",
        }),
        last: t.arg.int({ description: "At most this many events from the end (before `before`): the newest." }),
        before: t.arg.string({ description: "Only events before this cursor." }),
        where: t.arg({ type: where, description: "Which events to list." }),
      },
      resolve: async (_root: unknown, args: ChangesArgs, ctx: Context) => {
        const max = ctx.config.maxPageSize;
        const errors: Record<string, string[]> = {};
        for (const name of ["first", "last"] as const) {
          const value = args[name];
          if (value != null && (value < 0 || value > max)) errors[name] = [`${name} must be between 0 and ${max}.`];
        }
        if (args.first != null && args.last != null) errors.last = ["Give first or last, not both."];
        const backwards = args.last != null && args.first == null;
        if (backwards && args.after != null)
          errors.after = ["after reads forward: give it with first, or before with last."];
        if (!backwards && args.before != null)
          errors.before = ["before reads backward: give it with last, or after with first."];
        if (Object.keys(errors).length) throw validationError(errors);
        const page = await readFeed(
          ctx,
          {
            after: args.after,
            before: args.before,
            backwards,
            size: backwards ? args.last! : (args.first ?? ctx.config.graphqlDefaultFirst),
            types: args.where?.types,
            resources: args.where?.resources,
          },
          { after: "after", before: "before", types: "where.types", resources: "where.resources" },
        );
        return connectionOf(page, backwards);
      },
    }),
  );
  registerRootField("changes", { scopes: [] });
}

const feedPages = new WeakMap<Builder, unknown>();

/** The REST facade's field of the feed operation `op` (`restChanges`, run by `GET /changes`). */
export function restFeedField(builder: Builder, t: DynamicFieldBuilder, op: Operation) {
  const b = dynamic(builder);
  if (!feedPages.has(builder))
    feedPages.set(
      builder,
      b.objectRef("ChangeFeedPage").implement({
        subGraphs: ["internal"],
        description: "One page of the change feed, as REST answers it.",
        fields: (t) => ({
          items: t.field({
            type: "JSON",
            description: "The events, each as a webhook receives it plus its `cursor`.",
            resolve: (p: FeedPage) => p.events.map(feedItem),
          }),
          nextCursor: t.string({
            nullable: true,
            description: "Where to resume: pass it as `after`.",
            resolve: (p: FeedPage) => p.resume,
          }),
          hasMore: t.boolean({ description: "Whether more events follow now.", resolve: (p: FeedPage) => p.more }),
        }),
      }),
    );
  return t.field({
    subGraphs: ["internal"],
    type: feedPages.get(builder),
    nullable: true,
    description: `The account's change events after a cursor, in order. ${SCOPE_RULE}\n\n${restOf(op)}`,
    args: {
      after: t.arg.string({ description: "Only events after this cursor (`meta.next_cursor` or an item's `cursor`)." }),
      types: t.arg.stringList({ description: "Only events of these types." }),
      resources: t.arg.stringList({ description: "Only events of these resources." }),
      limit: t.arg.int({
        description: "At most this many events: the server's default page size when omitted, at most its maximum.",
      }),
    },
    resolve: (_root: unknown, args: RestFeedArgs, ctx: Context) => {
      const max = ctx.config.maxPageSize;
      if (args.limit != null && (args.limit < 1 || args.limit > max))
        throw validationError({ limit: [`The limit field must be between 1 and ${max}.`] });
      return readFeed(
        ctx,
        {
          after: args.after,
          size: args.limit ?? ctx.config.defaultPageSize,
          backwards: false,
          types: args.types,
          resources: args.resources,
        },
        {
          after: "after",
          before: "before",
          types: "types",
          resources: "resources",
        },
      );
    },
  });
}

/** The arguments of `changes`. */
interface ChangesArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
  where?: { types?: string[] | null; resources?: string[] | null } | null;
}

/** The arguments of `restChanges`. */
interface RestFeedArgs {
  after?: string | null;
  types?: string[] | null;
  resources?: string[] | null;
  limit?: number | null;
}

interface FeedEdge {
  node: ChangeEventRecord;
  cursor: string;
}

interface FeedConnection {
  edges: FeedEdge[];
  nodes: ChangeEventRecord[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  totalCount: () => Promise<number>;
}

/** A feed page as a Relay connection. */
function connectionOf(page: FeedPage, backwards: boolean): FeedConnection {
  const { events } = page;
  return {
    edges: events.map((node) => ({ node, cursor: encodeCursor(node) })),
    nodes: events,
    pageInfo: {
      hasNextPage: backwards ? false : page.more,
      hasPreviousPage: backwards ? page.more : false,
      startCursor: events.length ? encodeCursor(events[0]) : null,
      endCursor: page.resume,
    },
    totalCount: page.count,
  };
}
