/*
 * The actions an automation performs, in order, as stored in `Automation.actions` and written by clients (REST and
 * GraphQL take the same JSON, snake_case keys). Every text is a Liquid template (src/core/templates.ts) and every
 * templated JSON value a JSON value whose strings are templates, rendered over the event's variables.
 *
 * They are checked before an automation is written (src/resources/automation-checks.ts) and performed by the runner
 * (src/events/automations).
 */

/** POSTs a rendered JSON body to a URL, signed like a webhook delivery, retried with backoff. */
export interface WebhookAction {
  type: "webhook";
  /** An http or https URL that does not reach a private address (unless the server allows it). */
  url: string;
  /** `json` (the body as given), `discord` (an execute-webhook body: `content` and/or `embeds`), `slack` (`text` and/or `blocks`). */
  preset?: "json" | "discord" | "slack";
  /** Extra request headers: name → template. */
  headers?: Record<string, string>;
  /** The templated JSON body. */
  body: unknown;
}

/** Who an email or a message goes to. */
export type Recipients =
  /** The event's person: the record's user, or the user itself for a user event. */
  | { kind: "person" }
  /** The people holding a role of the account. */
  | { kind: "role"; role_id: number }
  /** Fixed users of the account (message) or fixed addresses (email). */
  | { kind: "users"; user_ids: number[] }
  | { kind: "address"; addresses: string[] };

/** Sends an email over SMTP (`SMTP_URL`), retried. Recipients: person, role or address. */
export interface EmailAction {
  type: "email";
  to: Recipients;
  subject: string;
  body: string;
}

/** Creates a `messages` record, as PERSCOM's messages are. Recipients: person, role or users. */
export interface MessageAction {
  type: "message";
  to: Recipients;
  text: string;
  /** The message's channels (default `["database"]`). */
  channels?: string[];
}

/**
 * Changes records through the ordinary write path (validation, the owner's scopes, events): sets fields of the event's
 * record or of its person, adds to a number field, or creates a record of a resource.
 */
export type UpdateAction =
  | {
      type: "update";
      target: "record" | "person";
      /** REST field name → templated JSON value; `fields.<key>` names a custom field value. */
      set?: Record<string, unknown>;
      /** REST field name → a number to add. */
      increment?: Record<string, number>;
    }
  | {
      type: "update";
      /** A resource's REST path (`award-records`), to create one of. */
      create: string;
      /** REST field name → templated JSON value. */
      values: Record<string, unknown>;
    };

export type AutomationAction = WebhookAction | EmailAction | MessageAction | UpdateAction;

export const AUTOMATION_ACTION_TYPES = ["webhook", "email", "message", "update"] as const;

/** The most actions one automation may have. */
export const MAX_AUTOMATION_ACTIONS = 10;
/** How deep a chain of automations may go: events written at this depth trigger nothing (the run says so). */
export const MAX_AUTOMATION_DEPTH = 3;
