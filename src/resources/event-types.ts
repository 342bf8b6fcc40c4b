import type { ResourceDef } from "./define.ts";
import type { ChangeAction } from "../core/events.ts";

/** The model part of an event type, as PERSCOM names it in webhooks: the lowercase class basename (`rankrecord`). */
export const eventModelOf = (def: ResourceDef): string =>
  def.morphClass.slice(def.morphClass.lastIndexOf("\\") + 1).toLowerCase();

/** `rankrecord.created` */
export const eventTypeOf = (def: ResourceDef, action: ChangeAction): string => `${eventModelOf(def)}.${action}`;

/** Every type an event of `registry` can have, sorted: what a webhook may subscribe to (besides `*`). */
export const eventTypesOf = (registry: readonly ResourceDef[]): string[] =>
  [
    ...new Set(
      registry
        .filter((def) => !def.silent)
        .flatMap((def) => (["created", "updated", "deleted"] as const).map((a) => eventTypeOf(def, a))),
    ),
  ].sort();
