import type { Store } from "../../db/store.ts";
import type { ActionRun } from "../../resources/define.ts";
import type { AutomationAction, Recipients } from "../../resources/automation-actions.ts";
import { revealTestResult } from "../../resources/automation.ts";
import { resources } from "../../resources/index.ts";
import { eventModelOf, eventTypesOf } from "../../resources/event-types.ts";
import { validationError } from "../../core/errors.ts";
import { evaluateCondition } from "../../core/conditions.ts";
import { renderTemplate, renderTemplatedJson } from "../../core/templates.ts";
import { eventById, readEventsBefore } from "../feed.ts";
import { automationVariables, type AutomationVariables, type VariablesEvent } from "./variables.ts";

/*
 * `POST /{version}/automations/{id}/test`: the automation's condition evaluated and every action rendered against an
 * event, as the runner would perform them, with nothing performed and nothing stored. The rendering of one action
 * (`renderAction`) and the resolution of its recipients are the runner's too.
 */

type Args = Parameters<ActionRun<"Automation">>[0];

/** The most people a role's recipients resolve to. */
export const MAX_ROLE_RECIPIENTS = 1000;

/** An email's or a message's recipients: the people (ids) and the addresses they resolve to. */
export interface ResolvedRecipients {
  user_ids: number[];
  addresses: string[];
}

/** Who `to` names, for the event whose variables these are: ids of people of the account and email addresses. */
export async function resolveRecipients(
  store: Store,
  accountId: number,
  to: Recipients,
  variables: AutomationVariables,
): Promise<ResolvedRecipients> {
  if (to.kind === "address") return { user_ids: [], addresses: [...to.addresses] };
  let where: Record<string, unknown>;
  if (to.kind === "person") {
    const id = variables.user?.id;
    if (typeof id !== "number") return { user_ids: [], addresses: [] };
    where = { id, accountId };
  } else if (to.kind === "users") where = { id: { in: to.user_ids }, accountId };
  else where = { accountId, roleLinks: { some: { roleId: to.role_id } } };
  const people = await store.findMany("User", {
    where,
    select: { id: true, email: true },
    orderBy: [{ id: "asc" }],
    take: MAX_ROLE_RECIPIENTS,
  });
  return {
    user_ids: people.map((p) => p.id),
    addresses: people.map((p) => p.email as string).filter(Boolean),
  };
}

/** One action as it would be performed for the event whose variables these are; `error` when it cannot be rendered. */
export async function renderAction(
  store: Store,
  accountId: number,
  action: AutomationAction,
  variables: AutomationVariables,
  event: VariablesEvent | null,
): Promise<Record<string, unknown>> {
  const vars = variables as unknown as Record<string, unknown>;
  try {
    switch (action.type) {
      case "webhook":
        return {
          type: "webhook",
          url: action.url,
          preset: action.preset ?? "json",
          headers: (await renderTemplatedJson(action.headers ?? {}, vars)) as Record<string, string>,
          body: await renderTemplatedJson(action.body, vars),
        };
      case "email": {
        const to = await resolveRecipients(store, accountId, action.to, variables);
        return {
          type: "email",
          to: to.addresses,
          subject: await renderTemplate(action.subject, vars),
          body: await renderTemplate(action.body, vars),
        };
      }
      case "message": {
        const to = await resolveRecipients(store, accountId, action.to, variables);
        return {
          type: "message",
          recipients: to.user_ids,
          text: await renderTemplate(action.text, vars),
          channels: action.channels ?? ["database"],
        };
      }
      case "update":
        if ("create" in action)
          return { type: "update", create: action.create, values: await renderTemplatedJson(action.values, vars) };
        return {
          type: "update",
          target: action.target,
          resource: action.target === "person" ? "user" : (event?.resource ?? null),
          record_id:
            action.target === "person"
              ? ((variables.user?.id as number | undefined) ?? null)
              : (event?.recordId ?? event?.data?.id ?? null),
          set: action.set ? await renderTemplatedJson(action.set, vars) : {},
          increment: action.increment ?? {},
        };
    }
  } catch (error) {
    return { type: (action as { type: string }).type, error: (error as Error).message };
  }
}

const knownTypes = new Set(eventTypesOf(resources));
const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** The event a test renders against: the one named, the one given, or the latest of the automation's triggers. */
async function eventOf(args: Args): Promise<VariablesEvent | null> {
  const { row, input, ctx } = args;
  const accountId = ctx.auth!.accountId;
  if (input.eventId != null && input.event != null)
    throw validationError({ event: ["Give event_id or event, not both."] });
  if (input.eventId != null) {
    const event = await eventById(ctx.store, accountId, input.eventId as number);
    if (!event)
      throw validationError({ event_id: [`The event ${input.eventId} is not a retained event of this account.`] });
    return event;
  }
  if (input.event != null) {
    const given = input.event as Record<string, unknown>;
    const errors: Record<string, string[]> = {};
    if (typeof given.type !== "string" || !knownTypes.has(given.type))
      errors["event.type"] = [`The event type ${JSON.stringify(given.type)} is unknown.`];
    if (given.data !== undefined && !isObject(given.data)) errors["event.data"] = ["The data must be an object."];
    if (given.changes != null && !isObject(given.changes))
      errors["event.changes"] = ["The changes must be an object of field → { old, new }."];
    if (Object.keys(errors).length) throw validationError(errors);
    const type = given.type as string;
    const def = resources.find((d) => !d.silent && type.startsWith(`${eventModelOf(d)}.`));
    return {
      id: null,
      type,
      resource: def?.name ?? "",
      data: (given.data as Record<string, unknown>) ?? {},
      changes: (given.changes as VariablesEvent["changes"]) ?? null,
      actor: (given.actor as VariablesEvent["actor"]) ?? null,
      createdAt: new Date(),
    };
  }
  const triggers = row.triggers as string[];
  if (!triggers.length) return null;
  const [latest] = await readEventsBefore(ctx.store, { accountId, limit: 1, types: triggers });
  if (!latest)
    throw validationError({
      event_id: ["No retained event of the automation's triggers: give event_id or event to render against."],
    });
  return latest;
}

/** Renders the automation (its `test_result`) and answers its id. */
export async function testAutomation(args: Args): Promise<number> {
  const { row, ctx } = args;
  const accountId = ctx.auth!.accountId;
  const event = await eventOf(args);
  const variables = await automationVariables(ctx.store, accountId, event, { baseUrl: ctx.baseUrl });
  let conditionValue: boolean | null = true;
  let conditionError: string | null = null;
  if (row.condition) {
    try {
      conditionValue = await evaluateCondition(row.condition, variables as unknown as Record<string, unknown>);
    } catch (error) {
      conditionValue = null;
      conditionError = (error as Error).message;
    }
  }
  const actions = await Promise.all(
    (row.actions as unknown as AutomationAction[]).map((action) =>
      renderAction(ctx.store, accountId, action, variables, event),
    ),
  );
  revealTestResult(ctx, row.id, {
    event_id: event?.id ?? null,
    condition_value: conditionValue,
    condition_error: conditionError,
    actions,
    variables,
  });
  return row.id;
}

/** The work of each automation action, by its field (`ActionDef.field`). */
export const automationActions: Readonly<Record<string, ActionRun>> = { testAutomation };
