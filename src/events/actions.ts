import type { ActionRun } from "../resources/define.ts";
import { resources } from "../resources/index.ts";
import { webhookActions } from "./webhooks/manage.ts";
import { oauthClientActions } from "./oauth-client-actions.ts";

/**
 * What runs each action of the registry, by its field (`ActionDef.field`). The registry declares an action (its path,
 * input, scopes, answer); its work sends requests and writes through the data layer, which sit above the registry.
 */
export const actionRunners: Readonly<Record<string, ActionRun>> = { ...webhookActions, ...oauthClientActions };

for (const def of resources) {
  for (const action of def.actions ?? []) {
    if (!actionRunners[action.field])
      throw new Error(`The action ${action.field} of ${def.name} has no runner in src/events/actions.ts`);
  }
}
