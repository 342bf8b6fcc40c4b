import { resources } from "../resources/index.ts";
import { eventTypesOf } from "../resources/event-types.ts";

/** Every type an event can have, sorted: what a webhook may subscribe to (besides `*`). */
export const eventTypes: readonly string[] = eventTypesOf(resources);
