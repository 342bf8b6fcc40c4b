import { knownScopes } from "./scopes.ts";

/**
 * Resources a publishable key never reaches, whatever scopes it was given: it is embedded in public pages, so anyone
 * holds it. Webhooks, automations, OAuth clients, roles and settings are the account's configuration; messages and
 * submissions are people's correspondence (a publishable key may only create submissions, on public forms).
 */
export const NEVER_PUBLIC = [
  "webhook",
  "webhookdelivery",
  "automation",
  "oauthclient",
  "role",
  "settings",
  "message",
  "submission",
];

/** The one write a publishable key may hold: submitting a public form (src/domain/public-forms.ts). */
export const PUBLIC_SUBMISSION_SCOPE = "create:submission";

const never = new Set(NEVER_PUBLIC);

/** Whether a publishable key may hold `scope`: a view scope of a public resource, or public-form submissions. */
export const isPublishableScope = (scope: string): boolean => {
  if (scope === PUBLIC_SUBMISSION_SCOPE) return true;
  const [verb, noun] = scope.split(":");
  return verb === "view" && noun !== undefined && !never.has(noun);
};

/** Every scope a publishable key may hold (`keys:create --publishable --help` lists them). */
export const publishableScopes: readonly string[] = knownScopes.filter(isPublishableScope);
