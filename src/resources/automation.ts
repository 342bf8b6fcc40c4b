import type { Context } from "../request/context.ts";
import { belongsTo, bool, datetime, defineResource, hasMany, int, json, string, text } from "./define.ts";
import { anyValue, jsonString, listOf, mapOf } from "./json-shapes.ts";
import { checkAutomation } from "./automation-checks.ts";
import { MAX_AUTOMATION_ACTIONS } from "./automation-actions.ts";

/*
 * An automation: when one of its triggers' events is written (or its schedule is due), its condition is evaluated and
 * its actions are performed, once. It is checked before it is written by src/resources/automation-checks.ts; its
 * `test` action renders it without performing anything (src/events/automations/dry-run.ts); the runner performs it
 * (src/events/automations).
 */

/** Secrets made by this request (create), and test renderings, by automation id: the one answer that shows each. */
const revealed = new WeakMap<object, Map<number, { secret?: string; test?: unknown }>>();

function reveal(ctx: Context, automationId: number, what: { secret?: string; test?: unknown }): void {
  let shown = revealed.get(ctx);
  if (!shown) revealed.set(ctx, (shown = new Map()));
  shown.set(automationId, { ...shown.get(automationId), ...what });
}

/** Shows what `POST /automations/{id}/test` rendered in its own answer (`test_result`). */
export const revealTestResult = (ctx: Context, automationId: number, result: unknown): void =>
  reveal(ctx, automationId, { test: result });

const actionsDescription =
  `The ordered actions, at most ${MAX_AUTOMATION_ACTIONS}, each an object with a \`type\`: ` +
  "`webhook` (`url`, `preset` json|discord|slack, `headers`, templated JSON `body`), " +
  "`email` (`to`, `subject`, `body`), `message` (`to`, `text`, `channels`), " +
  "`update` (`target` record|person with `set` and/or `increment`, or `create` a resource path with `values`). " +
  "`to` is `{kind: person}`, `{kind: role, role_id}`, `{kind: users, user_ids}` (messages) or `{kind: address, addresses}` (email). " +
  "Every text is a Liquid template over the event's variables (README, Automations).";

export const automation = defineResource({
  name: "automation",
  model: "Automation",
  path: "automations",
  // Its own writes are configuration, not changes of the organisation: they record no events.
  silent: true,
  description:
    "A routine of the account: when an event of one of its `triggers` is written (or its `schedule` is due), its `condition` is evaluated over the event and, when true, its `actions` are performed in order, once per event. Its actions run with the scopes of the credential that saved it last.",
  fields: {
    name: string({ required: true, description: "What the automation is called, for people." }),
    description: text({ max: 1000, description: "What the automation is for, for people." }),
    enabled: bool({
      description: "Whether it runs (default true). Enabling it again starts it after the latest event.",
    }),
    triggers: json(
      listOf(jsonString({ description: "An event type such as `rankrecord.created`." }), {
        description: "The event types that trigger it; `[]` for a scheduled automation.",
      }),
      {
        required: true,
        description:
          "The event types that trigger it, such as `rankrecord.created` or `user.updated`; `[]` for an automation that only has a `schedule`. It needs triggers or a schedule.",
        invalid: ({ path, value }) =>
          path.length
            ? `The event type ${JSON.stringify(value)} is unknown.`
            : "The triggers field must be a list of event types such as `rankrecord.created`.",
      },
    ),
    schedule: string({
      nullable: true,
      max: 100,
      description:
        "A cron expression of five fields (minute, hour, day of month, month, day of week) read in the account's time zone (its `organization.timezone` setting, else UTC): `0 8 * * 1` runs it on Mondays at 08:00. Null: triggered by events only.",
    }),
    condition: text({
      max: 2000,
      description:
        "A Jexl expression over the event's variables that must be true for the actions to run, such as `changes.rank_id != null and data.type == 0`; null: always.",
    }),
    priority: int({ description: "Among the automations one event triggers, higher runs first (default 0)." }),
    actions: json(listOf(mapOf(anyValue(), { description: "One action: `type` and its attributes." })), {
      required: true,
      description: actionsDescription,
      invalid: ({ path }) =>
        path.length ? "Each action must be an object with a type." : "The actions field must be a list of actions.",
    }),
    ownerKeyId: int({
      nullable: true,
      writable: false,
      description: "The API key that saved it last, whose scopes its actions run with; null when a person saved it.",
    }),
    ownerUserId: int({
      nullable: true,
      writable: false,
      description: "The person that saved it last (or the key's person), or null.",
    }),
    nextRunAt: datetime({
      writable: false,
      description: "When its schedule is next due, in UTC; null when it has none or is disabled.",
    }),
  },
  computed: {
    secret: {
      type: "string",
      nullable: true,
      needs: [],
      once: true,
      description:
        "The key of the `Signature` header its webhook actions send (hex HMAC-SHA256 of the body): shown once, in the answer of the create that made it; null everywhere else.",
      resolve: (row, ctx) => revealed.get(ctx)?.get(row.id)?.secret ?? null,
    },
    testResult: {
      type: "json",
      nullable: true,
      needs: [],
      once: true,
      description:
        "What `POST /automations/{id}/test` rendered, in its own answer only: `condition_value`, each action as it would be performed (`actions`) and the `variables`; null everywhere else.",
      resolve: (row, ctx) => revealed.get(ctx)?.get(row.id)?.test ?? null,
    },
  },
  relations: {
    runs: hasMany({ target: "automationRun", field: "runs", foreignKey: "automationId", orderBy: [{ id: "desc" }] }),
  },
  nested: [{ path: "runs", param: "run", relation: "runs", operations: ["list", "show"] }],
  hooks: {
    beforeWrite: checkAutomation,
    afterCreate: async ({ row, ctx }) => reveal(ctx, row.id, { secret: row.secret }),
  },
  actions: [
    {
      path: "test",
      field: "testAutomation",
      ability: "update",
      summary: "Render an automation against an event without performing it",
      description:
        "Evaluates the condition and renders every action against a retained event of the account (`event_id`), a given event (`event`: `type`, `data`, `changes`) or, with neither, the latest event of one of its triggers; performs nothing and stores nothing. Answers the automation with `test_result`: `condition_value`, the rendered `actions` and the `variables`.",
      input: {
        eventId: int({ description: "Id of a retained event of the account to render against." }),
        event: json(
          mapOf(anyValue(), {
            description: "An event to render against: `type`, `data`, `changes` (and `actor`).",
          }),
          { description: "An event to render against: `type` (an event type), `data`, `changes`, `actor`." },
        ),
      },
    },
  ],
});

export const automationRun = defineResource({
  name: "automationRun",
  model: "AutomationRun",
  // Read with its automation, under the automation's scopes.
  scope: "automation",
  silent: true,
  description:
    "One run of an automation, for one event or one due time of its schedule: the condition's value and each action's outcome. Newest first.",
  fields: {
    automationId: int({ writable: false, description: "Id of the automation." }),
    eventId: int({
      nullable: true,
      writable: false,
      description: "Id of the event it ran for; null for a scheduled run.",
    }),
    eventType: string({
      nullable: true,
      writable: false,
      description: "The event's type, such as `rankrecord.created`.",
    }),
    scheduledFor: datetime({ writable: false, description: "The due time of a scheduled run; null for an event's." }),
    depth: int({
      writable: false,
      description: "How deep in a chain of automations the event is (0: written by a person, a key or the CLI).",
    }),
    status: string({
      writable: false,
      description:
        "`running`, `succeeded`, `failed`, `skipped` (the condition was false) or `stopped` (the chain was too deep).",
    }),
    conditionValue: bool({
      nullable: true,
      writable: false,
      description: "The condition's value; null before it was evaluated, or when it failed.",
    }),
    outcomes: json(listOf(mapOf(anyValue())), {
      nullable: true,
      writable: false,
      description:
        "Each action's outcome, in order: `type`, `status`, `idempotency_key`, `detail`, `error`, `duration_ms`.",
    }),
    error: string({ nullable: true, writable: false, max: 65535, description: "Why the run failed, or null." }),
    durationMs: int({ nullable: true, writable: false, description: "How long the run took, in milliseconds." }),
    attempts: int({ writable: false, description: "Attempts made at the run." }),
  },
  relations: { automation: belongsTo({ target: "automation", foreignKey: "automationId" }) },
  orderBy: [{ id: "desc" }],
});
