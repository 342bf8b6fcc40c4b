import type { Context } from "../request/context.ts";
import { belongsTo, bool, datetime, defineResource, hasMany, int, json, string, text } from "./define.ts";
import { jsonString, listOf } from "./json-shapes.ts";
import { checkWebhook } from "./webhook-checks.ts";
import { ShownOnce } from "./shown-once.ts";

/*
 * A webhook is checked before it is written by src/resources/webhook-checks.ts; its actions are run by
 * src/events/webhooks/manage.ts (src/events/actions.ts), with the delivery code.
 */

/** Secrets made by this request (create, rotate), by webhook id: the one response that may show them. */
const secrets = new ShownOnce();

export const revealSecret = (ctx: Context, webhookId: number, secret: string): void =>
  secrets.reveal(ctx, webhookId, secret);

export const webhook = defineResource({
  name: "webhook",
  model: "Webhook",
  path: "webhooks",
  // Its own writes are configuration, not changes of the organisation: they record no events.
  silent: true,
  description:
    "A URL the account's events are POSTed to, signed with its secret (`Signature`: hex HMAC-SHA256 of the raw body). " +
    "The service disables a webhook whose deliveries keep failing, and says why in `disabled_reason`.",
  fields: {
    url: string({
      required: true,
      max: 2048,
      pattern: /^https?:\/\/\S+$/i,
      description:
        "Where events are POSTed: an http or https URL, which may not reach a private, loopback or link-local address (unless the server allows it).",
    }),
    description: text({ max: 1000, description: "What the webhook is for, for people." }),
    events: json(
      listOf(jsonString({ description: "An event type such as `rankrecord.created`, or `*` for every type." }), {
        minItems: 1,
        description:
          'The event types it receives: a non-empty list of types such as `rankrecord.created`, or `["*"]` for every type.',
      }),
      {
        required: true,
        description:
          'The event types it receives: a non-empty list of types such as `rankrecord.created`, or `["*"]` for every type.',
        // An item that is no string is an unknown event type, as the delivery code says of a string it does not know.
        invalid: ({ path, value }) =>
          path.length
            ? `The event type ${JSON.stringify(value)} is unknown.`
            : 'The events field must be a non-empty list of event types (or ["*"] for every type).',
      },
    ),
    enabled: bool({
      description:
        "Whether events are delivered (default true). Setting it true again on a webhook the service disabled clears `disabled_reason`.",
    }),
    disabledReason: string({
      nullable: true,
      writable: false,
      max: 1000,
      description: "Why the service disabled the webhook (its deliveries kept failing), or null.",
    }),
    failingSince: datetime({
      writable: false,
      description: "When its current run of failed deliveries began, or null while deliveries succeed.",
    }),
  },
  computed: {
    secret: {
      type: "string",
      nullable: true,
      needs: [],
      once: true,
      description:
        "The key of the `Signature` header: shown once, in the answer of the create or rotate-secret that made it; null everywhere else.",
      resolve: (row, ctx) => secrets.shown(ctx, row.id),
    },
  },
  relations: {
    deliveries: hasMany({
      target: "webhookDelivery",
      field: "deliveries",
      foreignKey: "webhookId",
      orderBy: [{ id: "desc" }],
    }),
  },
  nested: [{ path: "deliveries", param: "delivery", relation: "deliveries", operations: ["list", "show"] }],
  hooks: {
    beforeWrite: checkWebhook,
    afterCreate: async ({ row, ctx }) => revealSecret(ctx, row.id, row.secret),
  },
  actions: [
    {
      path: "secret",
      field: "rotateWebhookSecret",
      ability: "update",
      summary: "Rotate a webhook's secret",
      description:
        "Gives the webhook a new secret and answers the webhook with it, shown this once; deliveries are signed with the new secret from now on.",
    },
    {
      path: "test",
      field: "testWebhook",
      ability: "update",
      summary: "Send a webhook.test event to a webhook",
      description:
        "POSTs a signed `webhook.test` event to the webhook now (once, enabled or not) and answers the delivery, as the delivery log keeps it.",
      returns: "webhookDelivery",
    },
    {
      path: "redeliver",
      field: "redeliverWebhookEvent",
      ability: "update",
      summary: "Redeliver an event to a webhook",
      description:
        "POSTs a retained event of the account to the webhook again, now (one attempt, the body and `X-Muster-Delivery` of its first delivery), and answers the delivery.",
      input: {
        eventId: int({
          required: true,
          description: "Id of the event to deliver again (`id` of the payload, or of the change feed).",
        }),
      },
      returns: "webhookDelivery",
    },
  ],
});

export const webhookDelivery = defineResource({
  name: "webhookDelivery",
  model: "WebhookDelivery",
  plural: "webhookDeliveries",
  // Read with its webhook, under the webhook's scopes.
  scope: "webhook",
  silent: true,
  description: "One attempt to deliver an event to a webhook: the delivery log, newest first.",
  fields: {
    webhookId: int({ writable: false, description: "Id of the webhook." }),
    eventId: int({
      nullable: true,
      writable: false,
      description: "Id of the event delivered; null for a `webhook.test`.",
    }),
    eventType: string({
      writable: false,
      description: "The event's type (`X-Muster-Event`), such as `rankrecord.created`.",
    }),
    deliveryId: string({
      writable: false,
      description: "`X-Muster-Delivery`: the same for every attempt at one event, so a receiver can drop repeats.",
    }),
    attempt: int({ writable: false, description: "Which attempt at the event this was, from 1." }),
    statusCode: int({
      nullable: true,
      writable: false,
      description: "The receiver's HTTP status; null when it did not answer (network error, timeout, refused address).",
    }),
    durationMs: int({ writable: false, description: "How long the attempt took, in milliseconds." }),
    error: string({ nullable: true, writable: false, max: 65535, description: "Why the attempt failed, or null." }),
    succeeded: bool({ writable: false, description: "Whether the receiver answered 2xx." }),
  },
  relations: { webhook: belongsTo({ target: "webhook", foreignKey: "webhookId" }) },
  orderBy: [{ id: "desc" }],
});
