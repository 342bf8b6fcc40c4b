import cluster from "node:cluster";
import { createLocalEventBus } from "../events/bus.ts";
import type { CommittedEvents, EventBus } from "../core/events.ts";

/** The message a worker sends its primary, and the primary the other workers, for each batch committed. */
interface EventsMessage {
  muster: "events";
  batch: CommittedEvents;
}
const isEventsMessage = (message: unknown): message is EventsMessage =>
  typeof message === "object" && message !== null && (message as { muster?: unknown }).muster === "events";

/**
 * The event bus of a worker of `WORKERS>1` without Redis: what this worker commits is announced here and, through the
 * primary, to the other workers, so a subscription held by one worker sees the writes every worker makes. (With
 * Redis, every process shares Redis's channel instead: src/events/bus.ts.)
 */
export function createWorkerEventBus(): EventBus {
  const local = createLocalEventBus();
  process.on("message", (message: unknown) => {
    if (isEventsMessage(message)) local.deliver(message.batch);
  });
  return {
    subscribe: local.subscribe,
    publish(batch) {
      local.deliver(batch);
      if (process.connected) process.send!({ muster: "events", batch } satisfies EventsMessage);
    },
    close: local.close,
  };
}

/** In the primary of `WORKERS>1` without Redis: passes each worker's committed events on to the other workers. */
export function relayEventsBetweenWorkers(): void {
  cluster.on("message", (from, message: unknown) => {
    if (!isEventsMessage(message)) return;
    for (const worker of Object.values(cluster.workers ?? {}))
      if (worker && worker !== from && worker.isConnected()) worker.send(message);
  });
}
