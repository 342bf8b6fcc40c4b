import { randomUUID } from "node:crypto";
import { actorOf, type Context } from "../../request/context.ts";
import type { ActionRun, ModelRow } from "../../resources/define.ts";
import { newSecret } from "../../resources/webhook-checks.ts";
import { revealSecret } from "../../resources/webhook.ts";
import { validationError } from "../../core/errors.ts";
import { inTransaction } from "../../data/write.ts";
import { eventById } from "../feed.ts";
import { eventPayload, TEST_EVENT } from "../../core/events.ts";
import { deliveryIdOf, postEvent, type DeliveryResult } from "./send.ts";

/*
 * The webhooks API's actions (src/resources/webhook.ts declares them, src/resources/webhook-checks.ts checks a webhook
 * before it is written): a new secret, and the deliveries a client asks for (a test event, a redelivery), each one
 * signed POST logged as the dispatcher logs its own.
 */

type Row = ModelRow<"Webhook">;
/** What each action is given: the webhook (read in the caller's account), the request body's input, the request. */
type Args = Parameters<ActionRun<"Webhook">>[0];

/** Rotates the secret; the answer (the webhook, read again in this request) shows the new one. */
export async function rotateSecret({ row, ctx }: Args): Promise<number> {
  const secret = newSecret();
  await inTransaction(ctx, (tx) => tx.update("Webhook", { where: { id: row.id }, data: { secret } }));
  revealSecret(ctx, row.id, secret);
  return row.id;
}

/** One signed POST of a `webhook.test` event; answers the id of its delivery-log row. */
export async function sendTest({ row, ctx }: Args): Promise<number> {
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
    actor: actorOf(ctx.auth),
  });
  const deliveryId = `wh${row.id}-test-${randomUUID()}`;
  return deliver(ctx, row, { body, eventType: TEST_EVENT, eventId: null, deliveryId, attempt: 1 });
}

/** One more attempt at a retained event of the account, as the dispatcher sends it; answers its delivery-log row's id. */
export async function redeliver({ row, input, ctx }: Args): Promise<number> {
  const event = await eventById(ctx.store, ctx.auth!.accountId, input.eventId as number);
  if (!event)
    throw validationError({ event_id: [`The event ${input.eventId} is not a retained event of this account.`] });
  const attempts = await ctx.store.count("WebhookDelivery", { where: { webhookId: row.id, eventId: event.id } });
  return deliver(ctx, row, {
    body: JSON.stringify(eventPayload(event)),
    eventType: event.type,
    eventId: event.id,
    deliveryId: deliveryIdOf(row.id, event.id),
    attempt: attempts + 1,
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
    url: webhook.url,
    secret: webhook.secret,
    body: attempt.body,
    eventType: attempt.eventType,
    deliveryId: attempt.deliveryId,
    timeoutMs: ctx.config.webhookTimeoutMs,
    allowPrivate: ctx.config.webhooksAllowPrivate,
  });
  const logged = await inTransaction(ctx, (tx) =>
    tx.create("WebhookDelivery", {
      data: {
        webhookId: webhook.id,
        accountId: ctx.auth!.accountId,
        eventId: attempt.eventId,
        eventType: attempt.eventType,
        deliveryId: attempt.deliveryId,
        attempt: attempt.attempt,
        statusCode: result.statusCode,
        durationMs: result.durationMs,
        error: result.error,
        succeeded: result.succeeded,
      },
    }),
  );
  return logged.id;
}

/** The work of each webhook action, by its field (`ActionDef.field`). */
export const webhookActions: Readonly<Record<string, ActionRun>> = {
  rotateWebhookSecret: rotateSecret,
  testWebhook: sendTest,
  redeliverWebhookEvent: redeliver,
};
