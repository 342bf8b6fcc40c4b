import type { Operation } from "../resources/operations.ts";
import type { ActionRun } from "../resources/define.ts";
import { fieldDescription } from "../resources/descriptions.ts";
import { findOwned, guard } from "../data/access.ts";
import { validateFields } from "../data/validate.ts";
import type { Builder } from "./builder.ts";
import type { Context } from "../request/context.ts";
import { dynamic } from "./pothos-dynamic.ts";
import { scalarOf } from "./objects.ts";
import { pascal } from "../core/names.ts";
import { eventActionRunners } from "../events/actions.ts";
import { passwordActions } from "../auth/password-actions.ts";
import { resources } from "../resources/index.ts";

/*
 * Actions on one row (`POST /webhooks/{webhook}/test`, `testWebhook(rowId:)`): the REST facade's field
 * (src/graphql/operations.ts) and the public mutation (src/graphql/roots.ts) take the same input and run this.
 */

/** What runs each action of the registry, by its field: the events layer's (webhooks) and the auth layer's (passwords). */
const actionRunners: Readonly<Record<string, ActionRun>> = { ...eventActionRunners, ...passwordActions };

for (const def of resources) {
  for (const action of def.actions ?? []) {
    if (!actionRunners[action.field])
      throw new Error(`The action ${action.field} of ${def.name} has no runner (src/graphql/actions.ts)`);
  }
}

const inputTypes = new WeakMap<object, Map<string, unknown>>();

/** `RedeliverWebhookEventInput`: the attributes an action takes besides the row id, in both graphs; null when it takes none. */
export function actionInputType(builder: Builder, op: Operation): unknown {
  const input = op.action!.input;
  if (!input) return null;
  let made = inputTypes.get(builder);
  if (!made) inputTypes.set(builder, (made = new Map()));
  const name = `${pascal(op.field)}Input`;
  if (!made.has(name)) {
    made.set(
      name,
      dynamic(builder).inputType(name, {
        description: `What ${op.field} takes besides the row id. Required: ${
          Object.entries(input)
            .filter(([, f]) => f.required)
            .map(([k]) => k)
            .join(", ") || "none"
        }.`,
        // Optional in the type, checked by the action: a missing attribute is a 422 naming it, as on every write.
        fields: (t) =>
          Object.fromEntries(
            Object.entries(input).map(([key, f]) => [
              key,
              t.field({ type: scalarOf(f), required: false, description: fieldDescription(op.subject!, key, f) }),
            ]),
          ),
      }),
    );
  }
  return made.get(name);
}

/** Runs the action on the caller's row `rowId` (another account's is not found); answers the id of the row to show. */
export async function runAction(
  op: Operation,
  rowId: number,
  input: Record<string, unknown> | null | undefined,
  ctx: Context,
): Promise<number> {
  guard(ctx, op.scopes);
  const action = op.action!;
  const run = actionRunners[action.field];
  const row = await findOwned(ctx, ctx.store, op.subject!, rowId, {}, null);
  const values = action.input
    ? await validateFields(ctx, ctx.store, action.input, input ?? {}, { mode: "create" })
    : {};
  return run({ row, input: values, ctx });
}
