import type { ActionRun } from "../resources/define.ts";
import { webhookActions } from "./webhooks/manage.ts";
import { oauthClientActions } from "./oauth-client-actions.ts";
import { automationActions } from "./automations/dry-run.ts";

/**
 * What runs the actions of the registry that this layer holds the work of, by field (`ActionDef.field`): the
 * webhooks', OAuth clients' and automations'. The registry declares an action (its path, input, scopes, answer); its work sends requests and writes
 * through the data layer, which sit above the registry. The password actions' work is in src/auth; the whole table,
 * and the check that every action has a runner, is src/graphql/actions.ts.
 */
export const eventActionRunners: Readonly<Record<string, ActionRun>> = {
  ...webhookActions,
  ...oauthClientActions,
  ...automationActions,
};
