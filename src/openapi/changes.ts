import { eventTypes } from "../events/types.ts";
import { resources } from "../resources/index.ts";
import { Components, object, type Schema } from "./schema.ts";

/** The query parameters of `GET /changes`. */
export function feedParameters(): Schema[] {
  const list = (name: string, values: readonly string[], description: string): Schema => ({
    name,
    in: "query",
    style: "form",
    explode: false,
    description,
    schema: { type: "array", uniqueItems: true, items: { type: "string", enum: values } },
  });
  return [
    {
      name: "after",
      in: "query",
      description:
        "Only events after this cursor: a page's `meta.next_cursor` or an event's `cursor`. Absent: from the oldest event kept. A cursor that is not one is a 422; one older than the event retention period (`EVENT_RETENTION_DAYS`) a 410.",
      schema: { type: "string" },
    },
    list("types", eventTypes, "Only events of these types, comma-separated (an unknown type is a 422)."),
    list(
      "resources",
      resources.filter((r) => !r.silent).map((r) => r.name),
      "Only events of these resources, comma-separated, as events name them (an unknown resource is a 422).",
    ),
    {
      name: "limit",
      in: "query",
      description:
        "At most this many events: the default page size when absent; more than the maximum page size is a 422.",
      schema: { type: "integer", minimum: 1 },
    },
  ];
}

/** `Actor`: who made a change (`Actor` in src/core/events.ts), or null. */
export function actorSchema(components: Components): Schema {
  const actor = components.ref("Actor", () => ({
    description:
      "Who made the change: an API key (`key`), a person signed in through an SSO token or an access token (`person`; `client_id` is the OAuth client of an access token, null for SSO), or an OAuth client acting on its own (`client`, a client-credentials token).",
    oneOf: [
      object(
        {
          type: { type: "string", enum: ["key"] },
          key_id: { type: "integer", description: "The API key's id." },
        },
        ["type", "key_id"],
      ),
      object(
        {
          type: { type: "string", enum: ["person"] },
          user_id: { type: "integer", description: "The person's user id." },
          client_id: {
            type: ["string", "null"],
            description: "The OAuth client the person's access token was issued to; null for an SSO token.",
          },
          via: {
            type: "string",
            enum: ["sso", "oauth"],
            description: "The credential: an SSO token or an access token.",
          },
        },
        ["type", "user_id", "client_id", "via"],
      ),
      object(
        {
          type: { type: "string", enum: ["client"] },
          client_id: { type: "string", description: "The OAuth client's `client_id`." },
        },
        ["type", "client_id"],
      ),
    ],
  }));
  return {
    description: "Who made the change; null for a change made by the CLI or the system.",
    anyOf: [actor, { type: "null" }],
  };
}

/** The body of a feed page: the events, each as a webhook receives it plus its cursor, and where to resume. */
export function feedPageSchema(components: Components): Schema {
  const event = components.ref("ChangeEvent", () =>
    object(
      {
        id: {
          type: "integer",
          description: "The event's id: the account's events are numbered in the order they were written.",
        },
        event: {
          type: "string",
          description: "The event type, `<model>.<created|updated|deleted>`, such as `rankrecord.created`.",
        },
        created: { type: "string", format: "date-time", description: "When the change was recorded." },
        request_id: { type: ["string", "null"], description: "The id of the request that made the change." },
        trace_id: { type: ["string", "null"], description: "The trace id of the request that made the change." },
        resource: { type: "string", description: "The record's resource, as the API names it (`rankRecord`)." },
        record_id: { type: "integer", description: "The record's id." },
        data: {
          type: "object",
          description: "The record as REST shows it after the change; for a deletion (a tombstone), its last state.",
        },
        changes: {
          description: "On an update, `{column: {old, new}}` for each column that changed; null otherwise.",
          anyOf: [
            { type: "object", additionalProperties: object({ old: {}, new: {} }, ["old", "new"]) },
            { type: "null" },
          ],
        },
        actor: actorSchema(components),
        automation_run_id: {
          type: ["integer", "null"],
          description: "The automation run whose action made the change; null for a person's, a key's or the CLI's.",
        },
        depth: {
          type: "integer",
          description:
            "How deep in a chain of automations the change was made (0: no automation made it); events at depth 3 trigger none.",
        },
        cursor: {
          type: "string",
          description: "Where this event is in the feed: pass it as `after` to read what follows it.",
        },
      },
      [
        "id",
        "event",
        "created",
        "request_id",
        "trace_id",
        "resource",
        "record_id",
        "data",
        "changes",
        "actor",
        "automation_run_id",
        "depth",
        "cursor",
      ],
    ),
  );
  return components.ref("ChangeEventPage", () =>
    object(
      {
        data: { type: "array", items: event, description: "The events after `after`, oldest first." },
        meta: object(
          {
            next_cursor: {
              type: "string",
              description:
                "Where to resume: pass it as `after`. The last event's cursor; when the page reached the newest event, stamped with the time of this read, so that polling a quiet account keeps a cursor younger than the retention period.",
            },
            has_more: {
              type: "boolean",
              description: "Whether more events follow now: ask again at once with `after=next_cursor`.",
            },
          },
          ["next_cursor", "has_more"],
        ),
      },
      ["data", "meta"],
    ),
  );
}
