import { FieldErrorBag } from "../core/errors.ts";
import { closestNames } from "../core/closest.ts";
import { generateKey } from "../core/api-key-text.ts";
import type { Context } from "../request/context.ts";
import { bool, datetime, defineResource, json, string, type Hooks } from "./define.ts";
import { jsonString, listOf } from "./json-shapes.ts";
import { isOrigin } from "./oauth-client.ts";
import { isPublishableScope } from "./publishable.ts";
import { ShownOnce } from "./shown-once.ts";

/*
 * The account's API keys, managed through the API as the CLI's keys:create / keys:list / keys:revoke manage them. A
 * key is shown once, in the answer of the create that made it; only its SHA-256 is stored. A key can be given only
 * scopes its maker holds, so no credential makes a stronger one than itself. A publishable key (`publishable: true`)
 * is what a public page embeds: only view scopes of public resources and `create:submission`, used from its
 * `allowed_origins` (src/resources/publishable.ts).
 */

/** Keys made by this request, by their hash until `afterCreate` knows the row's id, then by row id. */
const keys = new ShownOnce();

const checkApiKey: NonNullable<Hooks<"ApiKey">["beforeWrite"]> = ({ data, existing, ctx, scopes }) => {
  const bag = new FieldErrorBag();
  if (existing && data.publishable !== undefined && data.publishable !== existing.publishable)
    bag.add("publishable", "A key cannot be made publishable or ordinary after it was created: create a new key.");
  const publishable = (data.publishable ?? existing?.publishable ?? false) === true;
  if (Array.isArray(data.scopes)) data.scopes = checkScopes(data.scopes as string[], publishable, ctx, scopes, bag);
  const origins = data.allowedOrigins !== undefined ? data.allowedOrigins : existing?.allowedOrigins;
  if (publishable) {
    if (!Array.isArray(origins) || origins.length === 0)
      bag.add("allowed_origins", "A publishable key needs the origins it is used from: a non-empty list of origins.");
    else
      origins.forEach((origin, index) => {
        if (typeof origin !== "string" || !isOrigin(origin))
          bag.add(
            `allowed_origins.${index}`,
            `The origin ${JSON.stringify(origin)} is no origin: scheme://host[:port], without path or trailing slash.`,
          );
      });
  } else if (Array.isArray(data.allowedOrigins) && data.allowedOrigins.length > 0) {
    bag.add("allowed_origins", "Only a publishable key is bound to origins.");
  }
  bag.throwIfAny();
  if (Array.isArray(data.allowedOrigins)) data.allowedOrigins = [...new Set(data.allowedOrigins as string[])];
  if (!existing) {
    const made = generateKey(publishable);
    Object.assign(data, { hash: made.hash, prefix: made.prefix, publishable });
    keys.hold(ctx, made.hash, made.key);
  }
};

/** The asked scopes, each known, each held by the caller, and (publishable) each one a public page may hold. */
function checkScopes(
  asked: string[],
  publishable: boolean,
  ctx: Context,
  known: readonly string[],
  bag: FieldErrorBag,
): string[] {
  const knownSet = new Set(known);
  const mine = ctx.auth?.scopes ?? new Set<string>();
  if (asked.length === 0) bag.add("scopes", "Give the key at least one scope.");
  asked.forEach((scope, index) => {
    const at = `scopes.${index}`;
    if (scope !== "*" && !knownSet.has(scope))
      bag.add(at, `The scope "${scope}" is unknown: did you mean ${closestNames(scope, known).join(" or ")}?`);
    else if (publishable && !isPublishableScope(scope))
      bag.add(
        at,
        `A publishable key cannot hold "${scope}": only view scopes of public resources and create:submission.`,
      );
    else if (!mine.has("*") && !mine.has(scope))
      bag.add(at, `The scope "${scope}" cannot be given: the credential making the key does not hold it.`);
  });
  return [...new Set(asked)];
}

export const apiKey = defineResource<"ApiKey">({
  name: "apiKey",
  model: "ApiKey",
  path: "api-keys",
  scope: "apikey",
  label: "API Key",
  // Configuration, not a change of the organisation: no events.
  silent: true,
  description:
    "A key of the account's for the API (`Authorization: Bearer <key>`): shown once, in the answer of its create. " +
    "It holds at most the scopes of the credential that made it. A publishable key (`publishable: true`) is meant to be " +
    "embedded in public pages: it holds only view scopes of public resources and `create:submission` (public forms), " +
    "never sees personal fields, and is refused from any browser origin but its `allowed_origins`. Deleting a key " +
    "revokes it: the next request made with it is a 401.",
  fields: {
    name: string({ required: true, max: 255, description: "A label for people: what or who the key is for." }),
    scopes: json(listOf(jsonString({ description: "A scope name such as `view:user`, or `*` for every scope." })), {
      required: true,
      description:
        'The scopes it holds (`["view:user", "view:rank"]`, or `["*"]`), each held by the credential that makes the key.',
      invalid: ({ path, value }) =>
        path.length
          ? `The scope ${JSON.stringify(value)} is unknown.`
          : "The scopes field must be a list of scope names.",
    }),
    publishable: bool({
      description:
        "A publishable key (default false), for public pages: view scopes of public resources and `create:submission` only, used from `allowed_origins`. Set on create only.",
    }),
    allowedOrigins: json(listOf(jsonString({ description: "An origin: `scheme://host[:port]`." })), {
      nullable: true,
      description:
        "The origins (`https://unit.example`) a publishable key may be used from: a browser request from any other is a 403. Required for a publishable key, absent for others.",
    }),
    prefix: string({ writable: false, description: "The key's first characters, which name it in lists and logs." }),
    hash: string({ hidden: true, writable: false }),
    expiresAt: datetime({ description: "When the key stops working (a 401 that says so), or null for never." }),
    revokedAt: datetime({ writable: false, description: "When it was revoked (`keys:revoke`), or null." }),
    lastUsedAt: datetime({
      writable: false,
      description: "When a request last used it (to within a minute), or null.",
    }),
  },
  computed: {
    key: {
      type: "string",
      nullable: true,
      needs: [],
      once: true,
      description: "The key itself: shown once, in the answer of the create that made it; null everywhere else.",
      resolve: (row, ctx) => keys.shown(ctx, row.id),
    },
  },
  orderBy: [{ id: "asc" }],
  hooks: {
    beforeWrite: checkApiKey,
    afterCreate: ({ row, ctx }) => keys.revealHeld(ctx, row.hash, row.id),
  },
});
