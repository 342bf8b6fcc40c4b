/*
 * What an event is, as the outbox stores it, the bus carries it, and webhooks, subscriptions and the change feed pass
 * it on: shapes only. The event types themselves come from the registry (src/resources/event-types.ts).
 */

export type ChangeAction = "created" | "updated" | "deleted";

/** `created` of `rankrecord.created`. */
export const actionOfType = (type: string): ChangeAction => type.slice(type.lastIndexOf(".") + 1) as ChangeAction;

/** The event a webhook receives on demand (`POST /v2/webhooks/{id}/test`); never stored in the outbox. */
export const TEST_EVENT = "webhook.test";

/**
 * Who made a change (or sent a request), as events and the request log name it: an API key; a person, through an SSO
 * token or an access token of one of the account's OAuth clients (`client_id`, null for SSO); an OAuth client acting
 * on its own (a client-credentials access token). Null for the CLI and the system. Never the credential itself.
 */
export type Actor =
  | { type: "key"; key_id: number }
  | { type: "person"; user_id: number; client_id: string | null; via: "sso" | "oauth" }
  | { type: "client"; client_id: string };

/** One stored event (a ChangeEvent row) as the outbox, the bus, webhooks and the change feed pass it around. */
export interface ChangeEventRecord {
  id: number;
  accountId: number;
  type: string;
  resource: string;
  recordId: number;
  data: Record<string, unknown>;
  changes: Record<string, { old: unknown; new: unknown }> | null;
  requestId: string | null;
  traceId: string | null;
  notify: boolean;
  /** Who made the change (null: the CLI or the system, and events recorded before actors were). */
  actor: Actor | null;
  /** Order key with `id` (src/events/feed.ts); a decimal string, since PostgreSQL's transaction ids exceed 2^53 in time. */
  txid: string;
  /** The automation run whose action wrote it, and the depth of its chain (0: not written by an automation). */
  automationRunId?: number | null;
  depth?: number;
  createdAt: Date;
}

/** The body a webhook receives and the change feed lists: PERSCOM's webhook payload plus the event's own id and type. */
export function eventPayload(event: ChangeEventRecord) {
  return {
    id: event.id,
    event: event.type,
    created: event.createdAt.toISOString(),
    request_id: event.requestId,
    trace_id: event.traceId,
    resource: event.resource,
    record_id: event.recordId,
    data: event.data,
    changes: event.changes,
    actor: event.actor ?? null,
  };
}

/** An event as it crosses the bus (JSON through Redis): its time as an ISO string. */
export type PublishedEvent = Omit<ChangeEventRecord, "createdAt"> & { createdAt: string };

/** What a committed transaction announces: the events it stored, in order, all of one account. */
export interface CommittedEvents {
  accountId: number;
  events: PublishedEvent[];
}

/**
 * Tells every instance that events were committed: subscriptions push them to their clients and the webhook
 * dispatcher wakes up. Through Redis pub/sub when `REDIS_URL` is set (every instance of the deployment that
 * `REDIS_PREFIX` names sees every one's events), in this process otherwise. The outbox table stays the record: the
 * bus only says "look now".
 */
export interface EventBus {
  /** The batches committed from now on, until the iteration is ended. */
  subscribe(): AsyncIterableIterator<CommittedEvents>;
  publish(batch: CommittedEvents): void;
  close(): Promise<void>;
}
