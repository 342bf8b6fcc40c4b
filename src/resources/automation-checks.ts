import { Cron } from "croner";
import type { Context } from "../request/context.ts";
import type { StoreReads } from "../db/store-reads.ts";
import { ownEntry, type FieldDef, type Hooks, type ResourceDef } from "./define.ts";
import { FieldErrorBag } from "../core/errors.ts";
import { camel, snake } from "../core/names.ts";
import { checkCondition } from "../core/conditions.ts";
import { checkTemplate, checkTemplatedJson } from "../core/templates.ts";
import { eventTypeOf } from "./event-types.ts";
import { checkUrl, newSecret } from "./webhook-checks.ts";
import { AUTOMATION_ACTION_TYPES, MAX_AUTOMATION_ACTIONS } from "./automation-actions.ts";

/*
 * What an automation checks before it is written (its runner, src/events/automations, trusts what is stored): its
 * triggers and schedule, its condition, and every action against the shapes of src/resources/automation-actions.ts,
 * the account's rows and the scopes of the credential saving it, whose rights its actions will run with.
 */

/** Discord's limits on an execute-webhook body. */
const DISCORD_CONTENT_MAX = 2000;
const DISCORD_EMBEDS_MAX = 10;
/** The most recipients a fixed list may name, and headers an action may send. */
const MAX_RECIPIENTS = 100;
const MAX_HEADERS = 20;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
/** Headers the delivery sets itself. */
const RESERVED_HEADERS = new Set([
  "host",
  "content-length",
  "content-type",
  "signature",
  "transfer-encoding",
  "connection",
]);

/** The account's time zone (the `organization.timezone` setting) when it is one the runtime knows; else UTC. */
export async function accountTimezone(reads: StoreReads, accountId: number): Promise<string> {
  const setting = await reads.findFirst("Setting", {
    where: { accountId, group: "organization", name: "timezone" },
    select: { payload: true },
  });
  const zone = setting?.payload;
  return typeof zone === "string" && isTimezone(zone) ? zone : "UTC";
}

function isTimezone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Why `schedule` is not a cron expression an automation may have, or null. */
export function scheduleProblem(schedule: string): string | null {
  if (schedule.trim().split(/\s+/).length !== 5)
    return "The schedule must be a cron expression of five fields: minute, hour, day of month, month, day of week.";
  try {
    new Cron(schedule, { timezone: "UTC" }).nextRun();
    return null;
  } catch (error) {
    return `The schedule is not a valid cron expression: ${(error as Error).message.replace(/^CronPattern: /, "")}.`;
  }
}

/** The first due time of `schedule` (read in `timezone`) after `after`; null when it has none. */
export function nextRunOf(schedule: string, timezone: string, after: Date = new Date()): Date | null {
  return new Cron(schedule, { timezone }).nextRun(after);
}

/** Whether `scopes` (a credential's, or an automation's owner's) hold `scope`. */
const hasScope = (scopes: ReadonlySet<string>, scope: string) => scopes.has("*") || scopes.has(scope);

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** The resource each event type is of. */
const resourcesByType = new WeakMap<readonly ResourceDef[], Map<string, ResourceDef>>();
function resourceOfType(registry: readonly ResourceDef[], type: string): ResourceDef | undefined {
  let map = resourcesByType.get(registry);
  if (!map) {
    map = new Map();
    for (const def of registry)
      if (!def.silent) for (const a of ["created", "updated", "deleted"] as const) map.set(eventTypeOf(def, a), def);
    resourcesByType.set(registry, map);
  }
  return map.get(type);
}

/**
 * Checks the automation; gives it on every write its owner (the credential saving it and its scopes), on create its
 * secret, and on create and re-enabling a cursor at the account's latest event (it sees what is written after).
 */
export const checkAutomation: NonNullable<Hooks["beforeWrite"]> = async ({ data, existing, ctx, tx, registry }) => {
  const bag = new FieldErrorBag();
  const merged = { ...(existing ?? {}), ...data } as Record<string, unknown>;
  const triggers = checkTriggers(merged.triggers, registry, bag, data.triggers !== undefined);
  const schedule = typeof merged.schedule === "string" && merged.schedule.trim() ? merged.schedule.trim() : null;
  if (data.schedule !== undefined) {
    data.schedule = schedule;
    if (schedule) {
      const problem = scheduleProblem(schedule);
      if (problem) bag.add("schedule", problem);
    }
  }
  if (triggers && triggers.length === 0 && !schedule)
    bag.add("triggers", "An automation needs at least one trigger (an event type) or a schedule.");
  if (typeof data.condition === "string") {
    if (!data.condition.trim()) data.condition = null;
    else {
      const problem = checkCondition(data.condition);
      if (problem) bag.add("condition", `${problem.message} at position ${problem.position}`);
    }
  }
  const auth = ctx.auth!;
  const ownerScopes = auth.scopes;
  // Every write makes its credential the owner, so the actions are checked against its scopes each time.
  if (triggers) await checkActions(merged.actions, { ctx, tx, registry, triggers, scopes: ownerScopes, bag });
  bag.throwIfAny();

  Object.assign(data, {
    ownerKeyId: auth.keyId,
    ownerUserId: auth.userId,
    ownerScopes: [...ownerScopes].sort(),
  });
  const timezone = schedule ? await accountTimezone(tx, auth.accountId) : "UTC";
  const enabled = merged.enabled !== false;
  data.nextRunAt = schedule && enabled ? nextRunOf(schedule, timezone) : null;
  const reenabled = existing && data.enabled === true && existing.enabled === false;
  if (!existing) data.secret = newSecret();
  if (!existing || reenabled) {
    const latest = await tx.findFirst("ChangeEvent", {
      where: { accountId: auth.accountId },
      orderBy: [{ txid: "desc" }, { id: "desc" }],
      select: { txid: true, id: true },
    });
    Object.assign(data, {
      cursorTxid: latest ? BigInt(latest.txid as bigint | number | string) : 0n,
      cursorId: latest?.id ?? 0,
      attempts: 0,
      nextAttemptAt: null,
    });
  }
};

/** The triggers as a list of known event types (duplicates dropped), or null when they are not one. */
function checkTriggers(
  value: unknown,
  registry: readonly ResourceDef[],
  bag: FieldErrorBag,
  written: boolean,
): string[] | null {
  if (!Array.isArray(value)) {
    bag.add("triggers", "The triggers field must be a list of event types such as `rankrecord.created`.");
    return null;
  }
  let good = true;
  value.forEach((type, index) => {
    if (typeof type !== "string" || !resourceOfType(registry, type)) {
      good = false;
      if (written) bag.add(`triggers.${index}`, `The event type ${JSON.stringify(type)} is unknown.`);
    }
  });
  return good ? [...new Set(value as string[])] : null;
}

interface ActionContext {
  ctx: Context;
  tx: StoreReads;
  registry: readonly ResourceDef[];
  triggers: string[];
  scopes: ReadonlySet<string>;
  bag: FieldErrorBag;
}

/** The keys each action type takes. */
const ACTION_KEYS: Record<string, readonly string[]> = {
  webhook: ["type", "url", "preset", "headers", "body"],
  email: ["type", "to", "subject", "body"],
  message: ["type", "to", "text", "channels"],
  update: ["type", "target", "set", "increment", "create", "values"],
};

async function checkActions(value: unknown, c: ActionContext): Promise<void> {
  if (!Array.isArray(value) || value.length === 0) {
    c.bag.add("actions", "The actions field must be a non-empty list of actions.");
    return;
  }
  if (value.length > MAX_AUTOMATION_ACTIONS) {
    c.bag.add("actions", `An automation may have at most ${MAX_AUTOMATION_ACTIONS} actions.`);
    return;
  }
  await Promise.all(value.map((action, index) => checkAction(action, `actions.${index}`, c)));
}

async function checkAction(action: unknown, at: string, c: ActionContext): Promise<void> {
  if (!isObject(action)) return c.bag.add(at, "Each action must be an object with a type.");
  const type = action.type;
  if (typeof type !== "string" || !(AUTOMATION_ACTION_TYPES as readonly string[]).includes(type))
    return c.bag.add(`${at}.type`, `The action type must be one of: ${AUTOMATION_ACTION_TYPES.join(", ")}.`);
  for (const key of Object.keys(action))
    if (!ACTION_KEYS[type].includes(key)) c.bag.add(`${at}.${key}`, `A ${type} action takes no ${key}.`);
  if (type === "webhook") return checkWebhookAction(action, at, c);
  if (type === "email" || type === "message") return checkNotice(action, type, at, c);
  return checkUpdate(action, at, c);
}

function template(value: unknown, at: string, c: ActionContext, required = true): void {
  if (value === undefined && !required) return;
  if (typeof value !== "string" || (required && !value.trim()))
    return c.bag.add(at, `The ${at.slice(at.lastIndexOf(".") + 1)} must be a non-empty template (a string).`);
  const problem = checkTemplate(value);
  if (problem) c.bag.add(at, `${problem.message} at line ${problem.line}, column ${problem.column}`);
}

function templatedJson(value: unknown, at: string, c: ActionContext): void {
  const problem = checkTemplatedJson(value);
  if (problem)
    c.bag.add([at, ...problem.path].join("."), `${problem.message} at line ${problem.line}, column ${problem.column}`);
}

async function checkWebhookAction(action: Record<string, unknown>, at: string, c: ActionContext): Promise<void> {
  const preset = action.preset ?? "json";
  if (preset !== "json" && preset !== "discord" && preset !== "slack")
    c.bag.add(`${at}.preset`, "The preset must be json, discord or slack.");
  if (action.headers !== undefined) {
    if (!isObject(action.headers) || Object.keys(action.headers).length > MAX_HEADERS)
      c.bag.add(`${at}.headers`, `The headers must be an object of at most ${MAX_HEADERS} header names → templates.`);
    else
      for (const [name, value] of Object.entries(action.headers)) {
        if (!HEADER_NAME.test(name) || RESERVED_HEADERS.has(name.toLowerCase()))
          c.bag.add(`${at}.headers.${name}`, `The header name ${JSON.stringify(name)} is not one an action may set.`);
        else template(value, `${at}.headers.${name}`, c);
      }
  }
  const body = action.body;
  if (body === undefined) c.bag.add(`${at}.body`, "A webhook action needs a body (a JSON value).");
  else if (preset === "discord") checkDiscordBody(body, `${at}.body`, c);
  else if (preset === "slack") checkSlackBody(body, `${at}.body`, c);
  if (body !== undefined) templatedJson(body, `${at}.body`, c);
  if (typeof action.url !== "string" || !action.url) c.bag.add(`${at}.url`, "A webhook action needs a url.");
  else if (action.url.length > 2048) c.bag.add(`${at}.url`, "The url must not be greater than 2048 characters.");
  else await checkUrl(action.url, c.ctx, c.bag, `${at}.url`);
}

function checkDiscordBody(body: unknown, at: string, c: ActionContext): void {
  if (!isObject(body) || (body.content === undefined && body.embeds === undefined))
    return c.bag.add(at, "A discord body must be an object with content and/or embeds.");
  if (body.content !== undefined) {
    if (typeof body.content !== "string") c.bag.add(`${at}.content`, "The content must be a string (a template).");
    else if (body.content.length > DISCORD_CONTENT_MAX)
      c.bag.add(`${at}.content`, `The content must not be greater than ${DISCORD_CONTENT_MAX} characters.`);
  }
  if (body.embeds !== undefined && (!Array.isArray(body.embeds) || body.embeds.length > DISCORD_EMBEDS_MAX))
    c.bag.add(`${at}.embeds`, `The embeds must be a list of at most ${DISCORD_EMBEDS_MAX} embed objects.`);
  else if (Array.isArray(body.embeds))
    body.embeds.forEach((embed, i) => {
      if (!isObject(embed)) c.bag.add(`${at}.embeds.${i}`, "Each embed must be an object.");
    });
}

function checkSlackBody(body: unknown, at: string, c: ActionContext): void {
  if (!isObject(body) || (body.text === undefined && body.blocks === undefined))
    return c.bag.add(at, "A slack body must be an object with text and/or blocks.");
  if (body.text !== undefined && typeof body.text !== "string")
    c.bag.add(`${at}.text`, "The text must be a string (a template).");
  if (body.blocks !== undefined && !Array.isArray(body.blocks))
    c.bag.add(`${at}.blocks`, "The blocks must be a list of block objects.");
}

async function checkNotice(
  action: Record<string, unknown>,
  type: "email" | "message",
  at: string,
  c: ActionContext,
): Promise<void> {
  if (type === "email") {
    template(action.subject, `${at}.subject`, c);
    template(action.body, `${at}.body`, c);
  } else {
    template(action.text, `${at}.text`, c);
    if (
      action.channels !== undefined &&
      (!Array.isArray(action.channels) ||
        action.channels.length === 0 ||
        action.channels.some((ch) => typeof ch !== "string" || !/^[a-z_]{1,50}$/.test(ch)))
    )
      c.bag.add(`${at}.channels`, "The channels must be a non-empty list of channel names such as database or mail.");
    needScope(c, at, "create:message");
  }
  await checkRecipients(action.to, type, `${at}.to`, c);
}

async function checkRecipients(to: unknown, type: "email" | "message", at: string, c: ActionContext): Promise<void> {
  const kinds = type === "email" ? ["person", "role", "address"] : ["person", "role", "users"];
  if (!isObject(to) || typeof to.kind !== "string" || !kinds.includes(to.kind))
    return c.bag.add(`${at}.kind`, `The recipients' kind must be one of: ${kinds.join(", ")}.`);
  const accountId = c.ctx.auth!.accountId;
  if (to.kind === "person") {
    if (!c.triggers.some((t) => personOfType(c.registry, t)))
      c.bag.add(
        at,
        "The event's person exists only for events of people or their records: give a trigger that has one.",
      );
    if (type === "email") needScope(c, at.slice(0, -3), "view:user");
  } else if (to.kind === "role") {
    if (typeof to.role_id !== "number" || !Number.isSafeInteger(to.role_id))
      return c.bag.add(`${at}.role_id`, "The role_id must be the id of a role of the account.");
    const role = await c.tx.findFirst("Role", { where: { id: to.role_id, accountId }, select: { id: true } });
    if (!role) c.bag.add(`${at}.role_id`, `The role ${to.role_id} is not a role of this account.`);
    if (type === "email") needScope(c, at.slice(0, -3), "view:user");
  } else if (to.kind === "users") {
    const ids = to.user_ids;
    if (
      !Array.isArray(ids) ||
      ids.length === 0 ||
      ids.length > MAX_RECIPIENTS ||
      ids.some((id) => typeof id !== "number" || !Number.isSafeInteger(id))
    )
      return c.bag.add(`${at}.user_ids`, `The user_ids must be a list of 1 to ${MAX_RECIPIENTS} user ids.`);
    const unique = [...new Set(ids as number[])];
    const found = await c.tx.findMany("User", { where: { id: { in: unique }, accountId }, select: { id: true } });
    const known = new Set(found.map((row) => row.id));
    ids.forEach((id, i) => {
      if (!known.has(id as number)) c.bag.add(`${at}.user_ids.${i}`, `The user ${id} is not a person of this account.`);
    });
  } else {
    const addresses = to.addresses;
    if (!Array.isArray(addresses) || addresses.length === 0 || addresses.length > MAX_RECIPIENTS)
      return c.bag.add(`${at}.addresses`, `The addresses must be a list of 1 to ${MAX_RECIPIENTS} email addresses.`);
    addresses.forEach((address, i) => {
      if (typeof address !== "string" || address.length > 255 || !EMAIL.test(address))
        c.bag.add(`${at}.addresses.${i}`, `${JSON.stringify(address)} is not an email address.`);
    });
  }
}

/** Whether events of `type` have a person (a user's own events, and records with a `user_id`). */
function personOfType(registry: readonly ResourceDef[], type: string): boolean {
  const def = resourceOfType(registry, type);
  return !!def && (def.name === "user" || "userId" in def.fields);
}

function needScope(c: ActionContext, at: string, scope: string): void {
  if (!hasScope(c.scopes, scope))
    c.bag.add(at, `This action needs the ${scope} scope, which the credential saving the automation does not hold.`);
}

async function checkUpdate(action: Record<string, unknown>, at: string, c: ActionContext): Promise<void> {
  if (action.create !== undefined) return checkCreate(action, at, c);
  const target = action.target;
  if (target !== "record" && target !== "person")
    return c.bag.add(`${at}.target`, "The target must be record or person (or give create: a resource path).");
  const set = action.set;
  const increment = action.increment;
  if (set === undefined && increment === undefined)
    return c.bag.add(at, "An update action needs set and/or increment.");
  if (set !== undefined && (!isObject(set) || !Object.keys(set).length))
    return c.bag.add(`${at}.set`, "The set must be an object of field names → values.");
  if (increment !== undefined && (!isObject(increment) || !Object.keys(increment).length))
    return c.bag.add(`${at}.increment`, "The increment must be an object of field names → numbers.");
  const defs = targetResources(target, c);
  if (!defs.length)
    return c.bag.add(
      `${at}.target`,
      target === "person"
        ? "The event's person exists only for events of people or their records: give a trigger that has one."
        : "An update of the event's record needs a trigger (a scheduled run has no record).",
    );
  for (const def of defs) {
    needScope(c, at, `update:${def.scope}`);
    for (const key of Object.keys(set ?? {})) checkWritable(def, key, `${at}.set.${key}`, c, false);
    for (const [key, amount] of Object.entries(increment ?? {})) {
      checkWritable(def, key, `${at}.increment.${key}`, c, true);
      if (typeof amount !== "number" || !Number.isFinite(amount))
        c.bag.add(`${at}.increment.${key}`, "The amount to add must be a number.");
    }
  }
  if (set) templatedJson(set, `${at}.set`, c);
}

/** The resources an update's target is a row of: each trigger's resource, or the user for `person`. */
function targetResources(target: "record" | "person", c: ActionContext): ResourceDef[] {
  if (target === "person") {
    const user = c.registry.find((d) => d.name === "user");
    return user && c.triggers.some((t) => personOfType(c.registry, t)) ? [user] : [];
  }
  return [...new Set(c.triggers.map((t) => resourceOfType(c.registry, t)!).filter(Boolean))];
}

/** `key` (a REST name, or `fields.<key>`) is a field an automation may write on `def`'s rows; `number`: an integer field. */
function checkWritable(def: ResourceDef, key: string, at: string, c: ActionContext, number: boolean): void {
  if (key.startsWith("fields.")) {
    if (!def.spread || number || !/^[A-Za-z0-9_-]{1,100}$/.test(key.slice(7)))
      c.bag.add(
        at,
        `${def.label} has no custom field ${JSON.stringify(key.slice(7))} an automation may ${number ? "add to" : "set"}.`,
      );
    return;
  }
  const f: FieldDef | undefined = ownEntry(def.fields, camel(key));
  if (!f || snake(camel(key)) !== key || f.hidden || f.writable === false)
    return c.bag.add(at, `${def.label} has no writable field ${key}.`);
  if (number && f.type !== "int") c.bag.add(at, `The field ${key} of ${def.label} is not a number.`);
}

function checkCreate(action: Record<string, unknown>, at: string, c: ActionContext): void {
  for (const key of ["target", "set", "increment"])
    if (action[key] !== undefined)
      c.bag.add(`${at}.${key}`, "An update that creates a record takes create and values.");
  const def = c.registry.find(
    (d) => d.path === action.create && !d.link && !d.silent && d.operations.includes("create"),
  );
  if (!def)
    return c.bag.add(
      `${at}.create`,
      `${JSON.stringify(action.create)} is not the path of a resource an automation may create.`,
    );
  needScope(c, `${at}.create`, `create:${def.scope}`);
  const values = action.values;
  if (!isObject(values)) return c.bag.add(`${at}.values`, "The values must be an object of field names → values.");
  for (const key of Object.keys(values)) checkWritable(def, key, `${at}.values.${key}`, c, false);
  for (const [name, f] of Object.entries(def.fields))
    if (f.required && f.writable !== false && values[snake(name)] === undefined)
      c.bag.add(
        `${at}.values.${snake(name)}`,
        `The ${snake(name)} value is required to create ${def.label.toLowerCase()}s.`,
      );
  templatedJson(values, `${at}.values`, c);
}
