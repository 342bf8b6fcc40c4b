import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Config } from "../../core/config.ts";
import type { Database } from "../../db/prisma.ts";
import type { EventBus } from "../../core/events.ts";
import { readEvents, type FeedPosition } from "../feed.ts";
import { eventPayload, type ChangeEventRecord } from "../../core/events.ts";
import {
  claimWebhooks,
  moveCursor,
  pruneDeliveries,
  recordAttempt,
  releaseWebhook,
  type ClaimedWebhook,
  type WebhookState,
} from "./leases.ts";
import { deliveryIdOf, postEvent } from "./send.ts";
import { retentionCutoff } from "../retention.ts";

/**
 * The webhook dispatcher: delivers each account's events to its webhooks, in order per webhook, at least once.
 *
 * Each webhook keeps a cursor, the last event handled. A dispatcher claims webhooks that have events after their
 * cursor with a lease (src/events/webhooks/leases.ts), so that with several instances each webhook is worked by one
 * of them at a time, POSTs the events one after the other, and after each POST logs the attempt and moves the cursor
 * in one transaction. A crash after a POST and before that commit sends the event again; a crash after a write's
 * commit and before its delivery loses nothing, since the cursor has not moved. A failed attempt is retried with
 * exponential backoff and jitter; after `webhookMaxAttempts` the event is given up on (logged) and the next one goes;
 * a webhook failing for `webhookDisableAfterMs` is disabled and says why.
 *
 * It runs soon after events commit (the bus's "committed", every instance's with Redis) and polls every
 * `webhookPollMs` for due retries and what it was not told of (a lease that ran out, a missed message).
 */

/** Webhooks one process delivers to at once. */
export const DISPATCH_CONCURRENCY = 8;
/** Events read per claim: a webhook is given back after them, so that busy webhooks take turns with the others. */
const EVENTS_PER_CLAIM = 100;
/** Bus messages arrive with every write; claims they start are at most this frequent. */
const WAKE_INTERVAL_MS = 20;
const PRUNE_EVERY_MS = 60_000;
const PRUNE_BATCH = 1000;
const MAX_RETRY_DELAY_MS = 60 * 60 * 1000;

export type DispatcherConfig = Pick<
  Config,
  | "eventRetentionDays"
  | "webhookMaxAttempts"
  | "webhookTimeoutMs"
  | "webhookRetryBaseMs"
  | "webhookDisableAfterMs"
  | "webhookPollMs"
  | "webhooksAllowPrivate"
>;

/** What an attempt came to: delivered; failed, to be retried; failed for the last time (the event is given up on). */
export type DeliveryOutcome = "delivered" | "failed" | "abandoned";

interface LogFn {
  (fields: object, message: string): void;
}

export interface DispatcherOptions {
  db: Pick<Database, "provider" | "prisma" | "store" | "read">;
  config: DispatcherConfig;
  bus: Pick<EventBus, "subscribe">;
  logger: { info: LogFn; warn: LogFn; error: LogFn };
  /** Names this process in the leases it takes (`claimedBy`); unique per process by default. */
  instanceId?: string;
  concurrency?: number;
  /** Told of every attempt (metrics). */
  onAttempt?: (outcome: DeliveryOutcome) => void;
}

export interface Dispatcher {
  /** Takes no more work, waits for the deliveries under way to be recorded, gives their webhooks back. */
  stop(): Promise<void>;
}

/** How long a claim lasts: a few receiver timeouts, renewed after every attempt. */
export const leaseMs = (config: Pick<Config, "webhookTimeoutMs">): number => 4 * config.webhookTimeoutMs + 1000;

/** The wait before retry `failedAttempts` + 1: `base · 2^(failedAttempts − 1)`, ±25 % jitter, at most an hour. */
export function retryDelayMs(baseMs: number, failedAttempts: number, random = Math.random): number {
  const exponential = Math.min(baseMs * 2 ** Math.min(Math.max(failedAttempts - 1, 0), 40), MAX_RETRY_DELAY_MS);
  return Math.round(exponential * (0.75 + random() / 2));
}

/** `86400000` → `24 h`, `90000` → `1.5 min`: how long a webhook failed, in its disabled reason. */
export function describeDuration(ms: number): string {
  for (const [size, unit] of [
    [3_600_000, "h"],
    [60_000, "min"],
    [1000, "s"],
  ] as const) {
    if (ms >= size) return `${Number((ms / size).toFixed(1))} ${unit}`;
  }
  return `${ms} ms`;
}

export const subscribesTo = (types: readonly string[], type: string): boolean =>
  types.includes("*") || types.includes(type);

const positionOf = (event: ChangeEventRecord): FeedPosition => ({ txid: event.txid, id: event.id });

export function startDispatcher({
  db,
  config,
  bus,
  logger,
  instanceId,
  concurrency = DISPATCH_CONCURRENCY,
  onAttempt,
}: DispatcherOptions): Dispatcher {
  const instance = instanceId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const lease = leaseMs(config);
  const leaseFrom = (now: Date) => new Date(now.getTime() + lease);

  /** The webhooks this process is working on: never two runs of one. */
  const running = new Map<number, Promise<void>>();
  let stopping = false;
  let ticking: Promise<void> | null = null;
  let tickAgain = false;
  /** The last claim took every free slot: more may be waiting for one. */
  let saturated = false;
  /** Counts wake-ups, so that a run that ends can tell whether events came in while it held its webhook. */
  let wakes = 0;
  let lastTick = 0;
  let wakeTimer: NodeJS.Timeout | null = null;
  let retryTimer: NodeJS.Timeout | null = null;
  let retryAt = Infinity;
  let lastPrune = 0;

  function wake() {
    wakes++;
    if (stopping || wakeTimer) return;
    wakeTimer = setTimeout(
      () => {
        wakeTimer = null;
        void tick();
      },
      Math.max(0, lastTick + WAKE_INTERVAL_MS - Date.now()),
    );
  }

  /** Runs a tick when the earliest retry this process scheduled is due (the poll would find it too, later). */
  function wakeAt(at: Date) {
    if (stopping || at.getTime() >= retryAt) return;
    if (retryTimer) clearTimeout(retryTimer);
    retryAt = at.getTime();
    retryTimer = setTimeout(
      () => {
        retryTimer = null;
        retryAt = Infinity;
        wake();
      },
      Math.max(0, retryAt - Date.now()),
    );
  }

  function tick(): Promise<void> {
    if (stopping) return Promise.resolve();
    if (ticking) {
      tickAgain = true;
      return ticking;
    }
    ticking = (async () => {
      do {
        tickAgain = false;
        lastTick = Date.now();
        const free = concurrency - running.size;
        if (free <= 0) {
          saturated = true;
          break;
        }
        const now = new Date();
        let claimed: ClaimedWebhook[];
        try {
          claimed = await claimWebhooks(db, instance, now, leaseFrom(now), free);
        } catch (error) {
          logger.error({ err: error }, "Webhook dispatcher: claiming webhooks failed; trying again at the next poll");
          break;
        }
        saturated = claimed.length === free;
        for (const webhook of claimed) start(webhook);
      } while (tickAgain && !stopping);
    })().finally(() => {
      ticking = null;
    });
    return ticking;
  }

  function start(webhook: ClaimedWebhook) {
    // Claimed again while this process still works it (its lease ran out meanwhile): the run under way renews it.
    if (running.has(webhook.id)) return;
    const wakesBefore = wakes;
    const run = work(webhook)
      .catch((error: unknown) => {
        logger.error(
          { err: error, webhook: webhook.id },
          "Webhook dispatcher: delivering failed; the webhook is tried again later",
        );
        return false;
      })
      .then((more) => {
        running.delete(webhook.id);
        if (!stopping && (more || saturated || wakes !== wakesBefore)) wake();
      });
    running.set(webhook.id, run);
  }

  /** One claim's work on a webhook: a page of events, at most. True when more events may be waiting. */
  async function work(webhook: ClaimedWebhook): Promise<boolean> {
    let held = true;
    try {
      const events = await readEvents(db, {
        accountId: webhook.accountId,
        after: webhook.cursor,
        notifying: true,
        limit: EVENTS_PER_CLAIM,
      });
      /** Events passed over since the cursor last moved: it moves past them with the next attempt, or at the end. */
      let passed: FeedPosition | null = null;
      for (const event of events) {
        if (stopping) break;
        if (!subscribesTo(webhook.events, event.type)) {
          passed = positionOf(event);
          continue;
        }
        const kept = await deliver(webhook, event, passed);
        passed = null;
        if (kept !== "held") {
          held = false;
          return false;
        }
      }
      if (passed) {
        if (await moveCursor(db, webhook, instance, passed, leaseFrom(new Date()))) webhook.cursor = passed;
        else held = false;
      }
      return events.length === EVENTS_PER_CLAIM;
    } finally {
      if (held) await releaseWebhook(db, webhook.id, instance, new Date());
    }
  }

  /**
   * POSTs `event` and records the attempt. "held": the lease is still this process's, go on; "released": the webhook
   * was given back (a retry is pending, or it was disabled); "lost": another took it, or it is gone or disabled.
   */
  async function deliver(
    webhook: ClaimedWebhook,
    event: ChangeEventRecord,
    passed: FeedPosition | null,
  ): Promise<"held" | "released" | "lost"> {
    const attempt = webhook.attempts + 1;
    const deliveryId = deliveryIdOf(webhook.id, event.id);
    const result = await postEvent({
      url: webhook.url,
      secret: webhook.secret,
      body: JSON.stringify(eventPayload(event)),
      eventType: event.type,
      deliveryId,
      timeoutMs: config.webhookTimeoutMs,
      allowPrivate: config.webhooksAllowPrivate,
    });
    const now = new Date();
    let outcome: DeliveryOutcome;
    let state: WebhookState;
    if (result.succeeded) {
      outcome = "delivered";
      state = {
        cursor: positionOf(event),
        attempts: 0,
        failingSince: null,
        nextAttemptAt: null,
        claimedUntil: leaseFrom(now),
      };
    } else {
      const failingSince = webhook.failingSince ?? now;
      if (attempt >= config.webhookMaxAttempts) {
        outcome = "abandoned";
        state = {
          cursor: positionOf(event),
          attempts: 0,
          failingSince,
          nextAttemptAt: null,
          claimedUntil: leaseFrom(now),
        };
      } else {
        outcome = "failed";
        const nextAttemptAt = new Date(now.getTime() + retryDelayMs(config.webhookRetryBaseMs, attempt));
        state = {
          cursor: passed ?? webhook.cursor,
          attempts: attempt,
          failingSince,
          nextAttemptAt,
          claimedUntil: null,
        };
      }
      if (now.getTime() - failingSince.getTime() >= config.webhookDisableAfterMs) {
        state.disabledReason = `Deliveries failed for ${describeDuration(now.getTime() - failingSince.getTime())}; last error: ${result.error}`;
        state.claimedUntil = null;
      }
    }
    const log = {
      eventId: event.id,
      eventType: event.type,
      deliveryId,
      attempt,
      statusCode: result.statusCode,
      durationMs: result.durationMs,
      error: result.error,
      succeeded: result.succeeded,
    };
    const kept = await recordAttempt(db, webhook, instance, log, state, now);
    onAttempt?.(outcome);
    if (!kept) return "lost";
    Object.assign(webhook, { cursor: state.cursor, attempts: state.attempts, failingSince: state.failingSince });
    if (outcome === "abandoned") {
      logger.warn(
        { webhook: webhook.id, event: event.id, type: event.type, attempts: attempt, error: result.error },
        "Webhook gave up on an event after its last attempt",
      );
    }
    if (state.disabledReason !== undefined) {
      logger.warn({ webhook: webhook.id, reason: state.disabledReason }, "Webhook disabled");
      return "released";
    }
    if (state.nextAttemptAt) wakeAt(state.nextAttemptAt);
    return state.claimedUntil ? "held" : "released";
  }

  async function prune() {
    if (Date.now() - lastPrune < PRUNE_EVERY_MS) return;
    lastPrune = Date.now();
    try {
      const before = retentionCutoff(config);
      // A full batch: more may be left; the next poll goes on.
      if ((await pruneDeliveries(db, before, PRUNE_BATCH)) === PRUNE_BATCH) lastPrune = 0;
    } catch (error) {
      logger.error({ err: error }, "Webhook dispatcher: pruning the delivery log failed");
    }
  }

  let pruning: Promise<void> = Promise.resolve();
  const poll = setInterval(() => {
    pruning = prune();
    wake();
  }, config.webhookPollMs);
  poll.unref();

  const committed = bus.subscribe();
  const listening = (async () => {
    for (;;) {
      const next = await committed.next();
      if (next.done) return;
      if (next.value.events.some((event) => event.notify)) wake();
    }
  })().catch((error: unknown) =>
    logger.error({ err: error }, "Webhook dispatcher: the event bus failed; polling only"),
  );

  pruning = prune();
  wake();

  return {
    async stop() {
      if (stopping) return;
      stopping = true;
      clearInterval(poll);
      if (wakeTimer) clearTimeout(wakeTimer);
      if (retryTimer) clearTimeout(retryTimer);
      await committed.return?.();
      await listening;
      await ticking;
      await Promise.allSettled([...running.values(), pruning]);
    },
  };
}
