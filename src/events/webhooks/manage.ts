import { randomBytes, randomUUID } from "node:crypto";
import type { Context } from "../../graphql/context.ts";
import type { Hooks } from "../../resources/define.ts";
import { revealSecret } from "../../resources/webhook.ts";
import { FieldErrorBag, validationError } from "../../errors.ts";
import { inTransaction } from "../../data/write.ts";
import { eventById } from "../feed.ts";
import { eventPayload, eventTypes, TEST_EVENT } from "../types.ts";
import { deliveryIdOf, postEvent, resolvesToPrivate, type DeliveryResult } from "./send.ts";

/*
 * The webhooks API's own work (src/resources/webhook.ts declares it): checking a webhook before it is written, its
 * secret, and the deliveries a client asks for (a test event, a redelivery), each one signed POST logged as the
 * dispatcher logs its own.
 */

type Row = Record<string, any>;

/** What a webhook may subscribe to: any event type, or `*` for all. */
const subscribable = new Set([...eventTypes, "*"]);

/** A new signing secret: 32 random bytes, hex, behind a prefix that says what it is. */
export const newSecret = (): string => `whsec_${randomBytes(32).toString("hex")}`;

/**
 * Checks `url` and `events`; on create, gives the webhook its secret and starts it after the account's latest event
 * (it receives what is written after it exists); re-enabling clears what the service recorded when it disabled it.
 */
export const checkWebhook: NonNullable<Hooks["beforeWrite"]> = async ({ data, existing, ctx, tx }) => {
  const bag = new FieldErrorBag();
  if (typeof data.url === "string") await checkUrl(data.url, ctx, bag);
  if (data.events !== undefined) data.events = checkEvents(data.events, bag);
  bag.throwIfAny();
  if (!existing) {
    data.secret = newSecret();
    const latest = await tx.findFirst("ChangeEvent", {
      where: { accountId: ctx.auth!.accountId }, orderBy: [{ txid: "desc" }, { id: "desc" }], select: { txid: true, id: true },
    });
    if (latest) Object.assign(data, { cursorTxid: BigInt(latest.txid), cursorId: latest.id });
  } else if (data.enabled === true && (existing.enabled === false || existing.disabledReason != null)) {
    Object.assign(data, { disabledReason: null, failingSince: null, attempts: 0, nextAttemptAt: null });
  }
};

async function checkUrl(text: string, ctx: Context, bag: FieldErrorBag): Promise<void> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return bag.add("url", "The url must be an absolute http or https URL.");
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || !url.hostname) return bag.add("url", "The url must be an absolute http or https URL.");
  if (!ctx.config.webhooksAllowPrivate && (await resolvesToPrivate(url))) {
    bag.add("url", "The url must not reach a private, loopback or link-local address.");
  }
}

function checkEvents(value: unknown, bag: FieldErrorBag): unknown {
  if (!Array.isArray(value) || value.length === 0) {
    bag.add("events", 'The events field must be a non-empty list of event types (or ["*"] for every type).');
    return value;
  }
  value.forEach((type, index) => {
    if (typeof type !== "string" || !subscribable.has(type)) bag.add(`events.${index}`, `The event type ${JSON.stringify(type)} is unknown.`);
  });
  return [...new Set(value)];
}

/** Rotates the secret; the answer (the webhook, read again in this request) shows the new one. */
export async function rotateSecret({ row, ctx }: { row: Row; ctx: Context }): Promise<number> {
  const secret = newSecret();
  await inTransaction(ctx, (tx) => tx.update("Webhook", { where: { id: row.id }, data: { secret } }));
  revealSecret(ctx, row.id, secret);
  return row.id;
}

/** One signed POST of a `webhook.test` event; answers the id of its delivery-log row. */
export async function sendTest({ row, ctx }: { row: Row; ctx: Context }): Promise<number> {
  const body = JSON.stringify({
    id: null,
    event: TEST_EVENT,
    created: new Date().toISOString(),
    request_id: ctx.requestId,
    trace_id: ctx.traceId,
    resource: "webhook",
    record_id: row.id,
    data: { id: row.id, url: row.url, description: row.description, events: row.events, enabled: row.enabled },
    changes: null,
  });
  const deliveryId = `wh${row.id}-test-${randomUUID()}`;
  return deliver(ctx, row, { body, eventType: TEST_EVENT, eventId: null, deliveryId, attempt: 1 });
}

/** One more attempt at a retained event of the account, as the dispatcher sends it; answers its delivery-log row's id. */
export async function redeliver({ row, input, ctx }: { row: Row; input: Record<string, unknown>; ctx: Context }): Promise<number> {
  const event = await eventById(ctx.store, ctx.auth!.accountId, input.eventId as number);
  if (!event) throw validationError({ event_id: [`The event ${input.eventId} is not a retained event of this account.`] });
  const attempts = await ctx.store.count("WebhookDelivery", { where: { webhookId: row.id, eventId: event.id } });
  return deliver(ctx, row, {
    body: JSON.stringify(eventPayload(event)), eventType: event.type, eventId: event.id, deliveryId: deliveryIdOf(row.id, event.id), attempt: attempts + 1,
  });
}

interface Attempt {
  body: string;
  eventType: string;
  eventId: number | null;
  deliveryId: string;
  attempt: number;
}

async function deliver(ctx: Context, webhook: Row, attempt: Attempt): Promise<number> {
  const result: DeliveryResult = await postEvent({
    url: webhook.url, secret: webhook.secret, body: attempt.body, eventType: attempt.eventType, deliveryId: attempt.deliveryId,
    timeoutMs: ctx.config.webhookTimeoutMs, allowPrivate: ctx.config.webhooksAllowPrivate,
  });
  const logged = await inTransaction(ctx, (tx) => tx.create("WebhookDelivery", {
    data: {
      webhookId: webhook.id, accountId: ctx.auth!.accountId, eventId: attempt.eventId, eventType: attempt.eventType, deliveryId: attempt.deliveryId,
      attempt: attempt.attempt, statusCode: result.statusCode, durationMs: result.durationMs, error: result.error, succeeded: result.succeeded,
    },
  }));
  return logged.id;
}
