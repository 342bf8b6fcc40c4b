import { createPubSub, type PubSub } from "graphql-yoga";
import { createRedisEventTarget } from "@graphql-yoga/redis-event-target";
import { Redis } from "ioredis";
import type { Config } from "../config.ts";
import type { ChangeEventRecord } from "./types.ts";

/** An event as it crosses the bus (JSON through Redis): its time as an ISO string. */
export type PublishedEvent = Omit<ChangeEventRecord, "createdAt"> & { createdAt: string };

/** What a committed transaction announces: the events it stored, in order, all of one account. */
export interface CommittedEvents {
  accountId: number;
  events: PublishedEvent[];
}

export type EventTopics = { committed: [CommittedEvents] };

/**
 * Tells every instance that events were committed: subscriptions push them to their clients and the webhook
 * dispatcher wakes up. Through Redis pub/sub when `REDIS_URL` is set (each instance sees every instance's events),
 * in this process otherwise. The outbox table stays the record: the bus only says "look now".
 */
export interface EventBus {
  pubsub: PubSub<EventTopics>;
  publish(batch: CommittedEvents): void;
  close(): Promise<void>;
}

export function createEventBus(config: Pick<Config, "redisUrl">): EventBus {
  if (!config.redisUrl) {
    const pubsub = createPubSub<EventTopics>();
    return { pubsub, publish: (batch) => pubsub.publish("committed", batch), close: async () => {} };
  }
  const options = { lazyConnect: false, maxRetriesPerRequest: 3, enableOfflineQueue: true };
  const publishClient = new Redis(config.redisUrl, options);
  const subscribeClient = new Redis(config.redisUrl, options);
  // An unreachable Redis is said by the health check and the rate limiter; here it must not crash the process.
  for (const client of [publishClient, subscribeClient]) client.on("error", () => {});
  const pubsub = createPubSub<EventTopics>({ eventTarget: createRedisEventTarget({ publishClient, subscribeClient }) });
  return {
    pubsub,
    publish: (batch) => pubsub.publish("committed", batch),
    close: async () => {
      await Promise.allSettled([publishClient.quit(), subscribeClient.quit()]);
    },
  };
}
