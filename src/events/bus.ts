import { createPubSub } from "graphql-yoga";
import { createRedisEventTarget } from "@graphql-yoga/redis-event-target";
import { Redis } from "ioredis";
import type { Config } from "../core/config.ts";
import type { CommittedEvents, EventBus } from "../core/events.ts";

/** The topics of graphql-yoga's pubsub: with Redis, a topic is a channel. */
type Topics = Record<string, [CommittedEvents]>;

/** The bus of one process: what it publishes, it hears; `deliver` hands it a batch another process published. */
export function createLocalEventBus(): EventBus & { deliver(batch: CommittedEvents): void } {
  const pubsub = createPubSub<Topics>();
  const deliver = (batch: CommittedEvents) => pubsub.publish("committed", batch);
  return { subscribe: () => pubsub.subscribe("committed"), publish: deliver, deliver, close: async () => {} };
}

/**
 * `onUnavailable` is told when announcing fails because Redis is unreachable (once per outage): subscriptions on other
 * instances then miss events, which the change feed still has; webhooks are found by the dispatcher's poll.
 */
export function createEventBus(
  config: Pick<Config, "redisUrl" | "redisPrefix">,
  onUnavailable: (error: unknown) => void = () => {},
): EventBus {
  if (!config.redisUrl) return createLocalEventBus();
  // The deployment's own channel: a deployment on another database numbers its accounts from 1 too.
  const channel = `${config.redisPrefix}:events`;
  // The publisher never queues: while Redis is unreachable an announcement fails at once (and is dropped) rather than
  // piling up in memory. The subscriber queues its few SUBSCRIBEs until Redis answers, and ioredis subscribes again
  // after each reconnection.
  //
  // The subscriber has no ready check (ioredis's INFO after connecting): a SUBSCRIBE sent while that check is pending
  // (the webhook dispatcher subscribes as the server starts, the moment the connection is up) puts the connection in
  // subscriber mode, where ioredis refuses the INFO, counts the check failed and reconnects; since the connection was
  // never "ready", it does not subscribe again, and the instance then heard no event of any instance, itself included,
  // until it restarted (ioredis 5.9; issue redis/ioredis#2037). A subscriber needs no such check: Redis answers
  // SUBSCRIBE while it loads its data set, and the messages come from PUBLISHes, not from the data set.
  const publishClient = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  const subscribeClient = new Redis(config.redisUrl, {
    enableOfflineQueue: true,
    maxRetriesPerRequest: null,
    enableReadyCheck: false,
  });
  // An unreachable Redis is reported by the rate limiter and `onUnavailable`; an "error" event must not end the process.
  for (const client of [publishClient, subscribeClient]) client.on("error", () => {});
  let reported = false;
  publishClient.on("ready", () => (reported = false));
  const pubsub = createPubSub<Topics>({ eventTarget: createRedisEventTarget({ publishClient, subscribeClient }) });
  return {
    subscribe: () => pubsub.subscribe(channel),
    // Straight to Redis rather than through `pubsub.publish`, whose event target drops the PUBLISH's promise: a failed
    // one would be an unhandled rejection. Every instance, this one included, hears it back through its subscriber.
    publish: (batch) => {
      publishClient.publish(channel, JSON.stringify(batch)).catch((error: unknown) => {
        if (reported) return;
        reported = true;
        onUnavailable(error);
      });
    },
    close: async () => {
      await Promise.allSettled([publishClient.quit(), subscribeClient.quit()]);
    },
  };
}
