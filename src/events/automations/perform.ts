import { randomUUID } from "node:crypto";
import type { Config } from "../../core/config.ts";
import type { Database } from "../../db/prisma.ts";
import type { ChangeEventRecord, EventBus } from "../../core/events.ts";
import { ApiError } from "../../core/errors.ts";
import { camel } from "../../core/names.ts";
import { renderTemplate, renderTemplatedJson } from "../../core/templates.ts";
import { requestStore, type Auth, type Context } from "../../request/context.ts";
import type { ResourceDef } from "../../resources/define.ts";
import { resourceNamed, resources } from "../../resources/index.ts";
import type {
  AutomationAction,
  EmailAction,
  MessageAction,
  Recipients,
  UpdateAction,
  WebhookAction,
} from "../../resources/automation-actions.ts";
import type { StoreTransaction } from "../../db/transaction.ts";
import { findOwned, guard } from "../../data/access.ts";
import { createRow, inTransaction, updateRow } from "../../data/write.ts";
import { postEvent } from "../webhooks/send.ts";
import { sendAutomationMail } from "./mail.ts";
import type { ClaimedAutomation } from "./leases.ts";

/**
 * An automation's actions, performed. Each has an idempotency key (`a<automation>-e<event>-<index>`, or
 * `-s<due time>-` for a scheduled run): what it made is recorded under it in AutomationEffect. A `message` or `update`
 * writes its row in the transaction of its own write, so an action retried after a crash finds it and does nothing
 * again; a `webhook` or `email` records it once the receiver took it (a crash in between sends again, with the same
 * `X-Muster-Delivery` or Message-ID, so that the receiver can drop the repeat).
 *
 * The writes go through the ordinary write path (src/data/write.ts) in a Context of the automation's owner: its key
 * or person, the scopes it had when it saved the automation, its account. Their events carry the run and the chain's
 * depth (`Context.automation`).
 */

export interface ActionRun {
  db: Pick<Database, "provider" | "prisma" | "store">;
  config: Config;
  bus: Pick<EventBus, "publish">;
  automation: ClaimedAutomation;
  /** The scopes the actions run with (`ownerStanding`). */
  scopes: string[];
  runId: number;
  /** The depth of the triggering event's chain (0 for a person's write or a schedule). */
  depth: number;
  event: ChangeEventRecord | null;
  variables: Record<string, unknown>;
}

/** An action that cannot succeed by being tried again (refused input, a missing scope): the run fails at once. */
export class PermanentActionError extends Error {}

export interface ActionOutcome {
  /** `succeeded`, or `done` when an earlier attempt had performed it (its AutomationEffect found). */
  status: "succeeded" | "done";
  detail: Record<string, unknown>;
}

/** Whether a failure is final: the write path refused it (input, scope, a missing record). */
export const isPermanent = (error: unknown): boolean =>
  error instanceof PermanentActionError ||
  (error instanceof ApiError && ["VALIDATION", "FORBIDDEN", "NOT_FOUND", "UNAUTHENTICATED"].includes(error.code));

/** A failure as the run log says it: with the field messages of a 422. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError && error.fieldErrors) {
    const fields = Object.entries(error.fieldErrors).map(([field, messages]) => `${field}: ${messages.join(" ")}`);
    return `${error.message} (${fields.join("; ")})`;
  }
  return error instanceof Error ? error.message : String(error);
}

export const effectKey = (automationId: number, run: { eventId: number } | { scheduledFor: Date }, index: number) =>
  `a${automationId}-${"eventId" in run ? `e${run.eventId}` : `s${run.scheduledFor.getTime()}`}-${index}`;

/** A key's scopes as stored: a JSON list (src/auth/accounts.ts). */
const storedScopes = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((s): s is string => typeof s === "string") : [];

/**
 * Whether the owner may still act, and with which scopes: those it held when it saved the automation that it still
 * holds (a key's scopes narrowed since narrow the automation's too). A revoked, expired or deleted key, or a person no
 * longer in the account, acts no more: the reason, for the run log.
 */
export async function ownerStanding(
  db: Pick<Database, "prisma">,
  automation: ClaimedAutomation,
  now = new Date(),
): Promise<{ scopes: string[] } | { refused: string }> {
  const saved = automation.ownerScopes;
  if (automation.ownerKeyId !== null) {
    const key = await db.prisma.apiKey.findFirst({
      where: { id: automation.ownerKeyId, accountId: automation.accountId },
      select: { scopes: true, revokedAt: true, expiresAt: true },
    });
    if (!key) return { refused: `The automation's owner, key ${automation.ownerKeyId}, no longer exists.` };
    if (key.revokedAt) return { refused: `The automation's owner, key ${automation.ownerKeyId}, was revoked.` };
    if (key.expiresAt && key.expiresAt <= now)
      return { refused: `The automation's owner, key ${automation.ownerKeyId}, has expired.` };
    const held = new Set(storedScopes(key.scopes));
    if (held.has("*")) return { scopes: saved };
    return { scopes: saved.includes("*") ? [...held] : saved.filter((scope) => held.has(scope)) };
  }
  if (automation.ownerUserId !== null) {
    const user = await db.prisma.user.findFirst({
      where: { id: automation.ownerUserId, accountId: automation.accountId },
      select: { id: true },
    });
    if (!user)
      return { refused: `The automation's owner, user ${automation.ownerUserId}, is no longer in the account.` };
    return { scopes: saved };
  }
  return { refused: "The automation has no owner to act as." };
}

/** The owner's credential: its key, or its person; with the scopes it holds for the automation (`ownerStanding`). */
function ownerAuth(automation: ClaimedAutomation, scopes: string[]): Auth {
  const { accountId, ownerKeyId, ownerUserId } = automation;
  return {
    kind: ownerKeyId !== null ? "key" : "sso",
    accountId,
    keyId: ownerKeyId,
    userId: ownerUserId,
    clientId: null,
    scopes: new Set(scopes),
    credential: ownerKeyId !== null ? `key:${ownerKeyId}` : `sso:${accountId}:${ownerUserId ?? 0}`,
  };
}

/** The Context an action writes in: the owner's, with the run and the depth its events are written at. */
export function ownerContext(run: ActionRun): Context {
  return {
    store: requestStore(run.db.store, run.config),
    prisma: run.db.prisma,
    provider: run.db.provider,
    config: run.config,
    auth: ownerAuth(run.automation, run.scopes),
    authFailure: null,
    baseUrl: run.config.publicUrl ?? `http://localhost:${run.config.port}`,
    requestId: randomUUID(),
    traceId: randomUUID(),
    events: run.bus as EventBus,
    notify: true,
    loaders: new Map(),
    automation: { runId: run.runId, depth: run.depth + 1 },
  };
}

/** The event's person: the user itself for a user event, else the record's `user_id`; null when it has none. */
export function personOf(event: ChangeEventRecord | null): number | null {
  if (!event) return null;
  if (event.resource === "user") return event.recordId;
  const id = event.data?.user_id;
  return typeof id === "number" ? id : null;
}

/** The users `to` names, in the automation's account (unknown ids dropped). */
async function recipientUsers(run: ActionRun, to: Recipients): Promise<number[]> {
  const { accountId } = run.automation;
  switch (to.kind) {
    case "person": {
      const person = personOf(run.event);
      if (person === null) throw new PermanentActionError("The event has no person to send to.");
      return [person];
    }
    case "role": {
      const links = await run.db.prisma.userRole.findMany({
        where: { roleId: to.role_id, role: { accountId }, user: { accountId } },
        select: { userId: true },
        orderBy: { userId: "asc" },
      });
      return [...new Set(links.map((l) => l.userId))];
    }
    case "users": {
      const users = await run.db.prisma.user.findMany({
        where: { id: { in: to.user_ids }, accountId },
        select: { id: true },
        orderBy: { id: "asc" },
      });
      return users.map((u) => u.id);
    }
    case "address":
      throw new PermanentActionError("A message goes to users of the account, not to addresses.");
  }
}

async function recipientAddresses(run: ActionRun, to: Recipients): Promise<string[]> {
  if (to.kind === "address") return to.addresses;
  const ids = await recipientUsers(run, to);
  const users = await run.db.prisma.user.findMany({
    where: { id: { in: ids }, accountId: run.automation.accountId },
    select: { email: true },
    orderBy: { id: "asc" },
  });
  return users.map((u) => u.email).filter((email) => !!email);
}

/** The recorded effect of `key`, or undefined when the action has not been performed. */
async function effectOf(reads: { prisma: Pick<Database["prisma"], "automationEffect"> }, key: string) {
  const effect = await reads.prisma.automationEffect.findUnique({ where: { key } });
  if (!effect) return undefined;
  const result = typeof effect.result === "string" ? JSON.parse(effect.result) : effect.result;
  return (result ?? {}) as Record<string, unknown>;
}

const recordEffect = (
  prisma: Pick<Database["prisma"], "automationEffect">,
  run: ActionRun,
  key: string,
  result: Record<string, unknown>,
) =>
  prisma.automationEffect.create({
    data: { key, accountId: run.automation.accountId, runId: run.runId, result: result as object },
  });

/** Records what a webhook or an email did, once sent; another instance that sent it too has recorded it already. */
async function recordSent(run: ActionRun, key: string, result: Record<string, unknown>): Promise<void> {
  await run.db.store.transaction(async (tx) => {
    if (!(await effectOf(tx, key))) await recordEffect(tx.prisma, run, key, result);
  });
}

/**
 * `work` through the write path, exactly once per key: in its transaction, the key is looked up first (a retry after
 * a crash finds it and returns what it made) and recorded with the write.
 */
async function writeOnce(
  run: ActionRun,
  key: string,
  work: (ctx: Context, tx: StoreTransaction) => Promise<Record<string, unknown>>,
): Promise<ActionOutcome> {
  const ctx = ownerContext(run);
  return inTransaction(ctx, async (tx) => {
    const done = await effectOf(tx, key);
    if (done) return { status: "done", detail: done };
    const detail = await work(ctx, tx);
    await recordEffect(tx.prisma, run, key, detail);
    return { status: "succeeded", detail };
  });
}

/** A resource's REST fields (`rank_id`) as its definition names them (`rankId`); an unknown one is refused. */
function fieldsOf(def: ResourceDef, values: Record<string, unknown>): Fields {
  const input: Record<string, unknown> = {};
  const custom: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    const name = camel(key);
    if (key.startsWith("fields.") && def.spread) custom[key.slice("fields.".length)] = value;
    else if (!key.startsWith("fields.") && Object.hasOwn(def.fields, name)) input[name] = value;
    else throw new PermanentActionError(`${def.path} has no field ${key} an automation can set.`);
  }
  return { input, custom };
}

/** Fields of a resource's own (`input`) and custom field values (`fields.<key>`, kept in its `spread` column). */
interface Fields {
  input: Record<string, unknown>;
  custom: Record<string, unknown>;
}

/** `input` with the custom field values set among those `row` has (none for a create). */
function withCustom(def: ResourceDef, { input, custom }: Fields, row?: Record<string, unknown>) {
  if (!def.spread || Object.keys(custom).length === 0) return { ...input };
  const stored = row?.[def.spread];
  const current = typeof stored === "string" ? JSON.parse(stored) : stored;
  return { ...input, [def.spread]: { ...(current && typeof current === "object" ? current : {}), ...custom } };
}

async function performMessage(run: ActionRun, action: MessageAction, key: string): Promise<ActionOutcome> {
  const recipients = await recipientUsers(run, action.to);
  if (!recipients.length) throw new PermanentActionError("The message has no recipients.");
  const text = await renderTemplate(action.text, run.variables);
  const def = resourceNamed("message");
  return writeOnce(run, key, async (ctx, tx) => {
    guard(ctx, [`create:${def.scope}`]);
    const row = await createRow(ctx, tx, def, {
      message: text,
      channels: action.channels ?? ["database"],
      recipients,
    });
    return { message_id: row.id, recipients };
  });
}

async function performUpdate(run: ActionRun, action: UpdateAction, key: string): Promise<ActionOutcome> {
  if ("create" in action) {
    const def = resources.find((r) => r.path === action.create && !r.link);
    if (!def) throw new PermanentActionError(`No resource ${action.create} to create a record of.`);
    const values = (await renderTemplatedJson(action.values, run.variables)) as Record<string, unknown>;
    const input = withCustom(def, fieldsOf(def, values));
    return writeOnce(run, key, async (ctx, tx) => {
      guard(ctx, [`create:${def.scope}`]);
      const row = await createRow(ctx, tx, def, input);
      return { resource: def.path, record_id: row.id };
    });
  }
  const event = run.event;
  if (!event) throw new PermanentActionError("A scheduled run has no record to update.");
  const def = action.target === "person" ? resourceNamed("user") : resourceNamed(event.resource);
  const id = action.target === "person" ? personOf(event) : event.recordId;
  if (id === null) throw new PermanentActionError("The event has no person to update.");
  const set = fieldsOf(def, (await renderTemplatedJson(action.set ?? {}, run.variables)) as Record<string, unknown>);
  const increment = fieldsOf(def, action.increment ?? {}).input;
  return writeOnce(run, key, async (ctx, tx) => {
    guard(ctx, [`update:${def.scope}`]);
    const existing = await findOwned(ctx, tx, def, id, {}, "update").catch((error: unknown) => {
      if (error instanceof ApiError && error.code === "NOT_FOUND")
        throw new PermanentActionError(`The ${def.path} record ${id} to update is not found (deleted since?).`);
      throw error;
    });
    const input = withCustom(def, set, existing);
    for (const [name, by] of Object.entries(increment)) {
      const current = existing[name] ?? 0;
      if (typeof current !== "number" || typeof by !== "number")
        throw new PermanentActionError(`${name} is not a number to increment.`);
      input[name] = current + by;
    }
    await updateRow(ctx, tx, def, existing, input);
    return { resource: def.path, record_id: id };
  });
}

async function performWebhook(run: ActionRun, action: WebhookAction, key: string): Promise<ActionOutcome> {
  const done = await effectOf(run.db, key);
  if (done) return { status: "done", detail: done };
  const body = JSON.stringify(await renderTemplatedJson(action.body, run.variables));
  const headers: Record<string, string> = {};
  for (const [name, template] of Object.entries(action.headers ?? {}))
    headers[name] = await renderTemplate(template, run.variables);
  const result = await postEvent({
    url: action.url,
    secret: run.automation.secret,
    body,
    eventType: run.event?.type ?? "automation.scheduled",
    deliveryId: key,
    timeoutMs: run.config.webhookTimeoutMs,
    allowPrivate: run.config.webhooksAllowPrivate,
    headers,
  });
  if (!result.succeeded) {
    const error = new Error(result.error ?? "failed") as Error & { statusCode?: number | null };
    error.statusCode = result.statusCode;
    throw error;
  }
  const detail = { status_code: result.statusCode };
  await recordSent(run, key, detail);
  return { status: "succeeded", detail };
}

async function performEmail(run: ActionRun, action: EmailAction, key: string): Promise<ActionOutcome> {
  const done = await effectOf(run.db, key);
  if (done) return { status: "done", detail: done };
  const to = await recipientAddresses(run, action.to);
  if (!to.length) throw new PermanentActionError("The email has no recipients.");
  const [subject, text] = await Promise.all([
    renderTemplate(action.subject, run.variables),
    renderTemplate(action.body, run.variables),
  ]);
  const sent = await sendAutomationMail(run.config, { to, subject, text, key });
  const detail = { ...sent, to };
  await recordSent(run, key, detail);
  return { status: "succeeded", detail };
}

export function performAction(run: ActionRun, action: AutomationAction, key: string): Promise<ActionOutcome> {
  switch (action.type) {
    case "message":
      return performMessage(run, action, key);
    case "update":
      return performUpdate(run, action, key);
    case "webhook":
      return performWebhook(run, action, key);
    case "email":
      return performEmail(run, action, key);
    default:
      throw new PermanentActionError(`Unknown action type ${(action as { type: unknown }).type}.`);
  }
}
