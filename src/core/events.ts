/*
 * What an event is, as the outbox stores it, the bus carries it, and webhooks, subscriptions and the change feed pass
 * it on: shapes only. The event types themselves come from the registry (src/resources/event-types.ts).
 */

export type ChangeAction = "created" | "updated" | "deleted";

/** `created` of `rankrecord.created`. */
export const actionOfType = (type: string): ChangeAction => type.slice(type.lastIndexOf(".") + 1) as ChangeAction;

/** The event a webhook receives on demand (`POST /v2/webhooks/{id}/test`); never stored in the outbox. */
export const TEST_EVENT = "webhook.test";

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
  /** Order key with `id` (src/events/feed.ts); a decimal string, since PostgreSQL's transaction ids exceed 2^53 in time. */
  txid: string;
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
