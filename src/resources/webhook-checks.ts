import { randomBytes } from "node:crypto";
import type { Context } from "../request/context.ts";
import type { Hooks, ResourceDef } from "./define.ts";
import { FieldErrorBag } from "../core/errors.ts";
import { resolvesToPrivate } from "../core/private-addresses.ts";
import { eventTypesOf } from "./event-types.ts";

/*
 * What a webhook checks before it is written. Its event types are the registry's, which its caller passes: this file
 * is part of the registry. Its actions (a new secret, a test event, a redelivery) send requests and are run by
 * src/events/webhooks/manage.ts.
 */

/** What a webhook may subscribe to: any event type, or `*` for all. */
const subscribable = new WeakMap<readonly ResourceDef[], ReadonlySet<string>>();
const subscribableIn = (registry: readonly ResourceDef[]) => {
  let types = subscribable.get(registry);
  if (!types) subscribable.set(registry, (types = new Set([...eventTypesOf(registry), "*"])));
  return types;
};

/** A new signing secret: 32 random bytes, hex, behind a prefix that says what it is. */
export const newSecret = (): string => `whsec_${randomBytes(32).toString("hex")}`;

/**
 * Checks `url` and `events`; on create, gives the webhook its secret and starts it after the account's latest event
 * (it receives what is written after it exists); re-enabling clears what the service recorded when it disabled it.
 */
export const checkWebhook: NonNullable<Hooks["beforeWrite"]> = async ({ data, existing, ctx, tx, registry }) => {
  const bag = new FieldErrorBag();
  if (typeof data.url === "string") await checkUrl(data.url, ctx, bag);
  if (data.events !== undefined) data.events = checkEvents(data.events, subscribableIn(registry), bag);
  bag.throwIfAny();
  if (!existing) {
    data.secret = newSecret();
    const latest = await tx.findFirst("ChangeEvent", {
      where: { accountId: ctx.auth!.accountId },
      orderBy: [{ txid: "desc" }, { id: "desc" }],
      select: { txid: true, id: true },
    });
    if (latest)
      Object.assign(data, { cursorTxid: BigInt(latest.txid as bigint | number | string), cursorId: latest.id });
  } else if (data.enabled === true && (existing.enabled === false || existing.disabledReason != null)) {
    Object.assign(data, { disabledReason: null, failingSince: null, attempts: 0, nextAttemptAt: null });
  }
};

/** Checks that `text` is an http(s) URL reaching no private address (unless allowed); problems under `field`. */
export async function checkUrl(text: string, ctx: Context, bag: FieldErrorBag, field = "url"): Promise<void> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return bag.add(field, "The url must be an absolute http or https URL.");
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || !url.hostname)
    return bag.add(field, "The url must be an absolute http or https URL.");
  if (!ctx.config.webhooksAllowPrivate && (await resolvesToPrivate(url))) {
    bag.add(field, "The url must not reach a private, loopback or link-local address.");
  }
}

function checkEvents(value: unknown, subscribable: ReadonlySet<string>, bag: FieldErrorBag): unknown {
  if (!Array.isArray(value) || value.length === 0) {
    bag.add("events", 'The events field must be a non-empty list of event types (or ["*"] for every type).');
    return value;
  }
  value.forEach((type, index) => {
    if (typeof type !== "string" || !subscribable.has(type))
      bag.add(`events.${index}`, `The event type ${JSON.stringify(type)} is unknown.`);
  });
  return [...new Set(value)];
}
