import type { ResourceDef } from "../resources/define.ts";
import { resources } from "../resources/index.ts";

export type ChangeAction = "created" | "updated" | "deleted";

/** The model part of an event type, as PERSCOM names it in webhooks: the lowercase class basename (`rankrecord`). */
export const eventModelOf = (def: ResourceDef): string => def.morphClass.slice(def.morphClass.lastIndexOf("\\") + 1).toLowerCase();

/** `rankrecord.created` */
export const eventTypeOf = (def: ResourceDef, action: ChangeAction): string => `${eventModelOf(def)}.${action}`;

/** `created` of `rankrecord.created`. */
export const actionOfType = (type: string): ChangeAction => type.slice(type.lastIndexOf(".") + 1) as ChangeAction;

/** The event a webhook receives on demand (`POST /v2/webhooks/{id}/test`); never stored in the outbox. */
export const TEST_EVENT = "webhook.test";

/** Every type an event can have, sorted: what a webhook may subscribe to (besides `*`). */
export const eventTypes: readonly string[] = [...new Set(resources.filter((def) => !def.silent).flatMap((def) => (["created", "updated", "deleted"] as const).map((a) => eventTypeOf(def, a))))].sort();

const known = new Set([...eventTypes, TEST_EVENT]);
export const isEventType = (type: string): boolean => known.has(type);

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
