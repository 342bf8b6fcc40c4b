import type { Auth, Context } from "../request/context.ts";
import { ApiError, notFound, validationError } from "../core/errors.ts";
import { resources, resourceNamed } from "../resources/index.ts";
import type { ModelRow } from "../resources/define.ts";
import { checkPublicValues, choosesRow, type PublicField } from "../resources/form-rules.ts";
import type { StoredRow } from "../db/models-by-name.ts";
import { createRow, inTransaction } from "./write.ts";

/*
 * Public forms: read and submitted by anyone, without a credential, in the account the path names by its slug. The
 * request's own credential, if any, plays no part: a key of one account reads another's public form as a visitor
 * does. A form that is not public, does not exist or is another account's, an account slug that names none, and an
 * account refused for its subscription are all the same 404.
 */

const subscribed = new Set(["active", "trialing", "trial"]);

/** A public form with the fields its submitters see (not hidden), in order. */
export interface PublicForm {
  accountId: number;
  form: StoredRow;
  fields: Array<ModelRow<"Field">>;
}

/** The visitor of a public route in `accountId`: no key, no person, no scope. */
const visitorOf = (accountId: number): Auth => ({
  kind: "anonymous",
  accountId,
  keyId: null,
  userId: null,
  clientId: null,
  scopes: new Set(),
  credential: `anonymous:${accountId}`,
});

/** `ctx` as the visitor of the account `accountId` (the request's own credential set aside). */
const asVisitor = (ctx: Context, accountId: number): Context => ({ ...ctx, auth: visitorOf(accountId) });

/** The form `form` (its slug, or its id in digits) of the account whose slug is `account`, if it is public; else 404. */
export async function findPublicForm(ctx: Context, account: string, form: string): Promise<PublicForm> {
  const found = await ctx.store.findFirst("Account", {
    where: { slug: account },
    select: { id: true, subscriptionStatus: true },
  });
  if (!found || (ctx.config.subscriptionsEnforced && !subscribed.has(found.subscriptionStatus as string)))
    throw notFound();
  const accountId = found.id;
  const byId = /^[1-9]\d{0,9}$/.test(form) && Number(form) <= 2147483647;
  // A slug made of digits names its own form before the form of that id.
  const row =
    (await ctx.store.findFirst("Form", { where: { accountId, isPublic: true, slug: form } })) ??
    (byId ? await ctx.store.findFirst("Form", { where: { accountId, isPublic: true, id: Number(form) } }) : null);
  if (!row) throw notFound();
  const links = await ctx.store.findMany("FieldLink", {
    where: { formId: row.id },
    include: { field: true },
    orderBy: [{ order: "asc" }, { id: "asc" }],
  });
  const fields = links.map((l) => l.field as ModelRow<"Field">).filter((f) => !f.hidden);
  return { accountId, form: row, fields };
}

/** The values a select field of model options names that are no row of the account's: their keys. */
async function missingRows(ctx: Context, found: PublicForm, values: Record<string, unknown>): Promise<string[]> {
  const checks = found.fields
    .filter((f) => choosesRow(f) && values[f.key] !== undefined)
    .map(async (f) => {
      const def = resources.find((d) => d.path === f.optionsModel);
      const rows = def
        ? await ctx.store.count(def.model, { where: { accountId: found.accountId, id: Number(values[f.key]) } })
        : 0;
      return rows > 0 ? null : f.key;
    });
  return (await Promise.all(checks)).filter((k): k is string => k !== null);
}

/**
 * Submits a public form: the values checked against its fields (every problem at once, 422 keyed by field key), then
 * the limits of anonymous writes (`ctx.anonymousWrites`: rates, captcha), then the submission written through the
 * ordinary write path as the account's visitor, so its status record and its `submission.created` event are written
 * with it. Nothing is stored when any of these refuses.
 */
export async function submitPublicForm(
  ctx: Context,
  account: string,
  form: string,
  values: Record<string, unknown>,
  captchaToken: string | null,
): Promise<{ submission: StoredRow; form: StoredRow }> {
  const limits = ctx.anonymousWrites;
  if (!limits) throw new ApiError("FORBIDDEN", "Public forms are not served here.");
  const found = await findPublicForm(ctx, account, form);
  await limits.admit({ accountId: found.accountId, formId: found.form.id });
  const checked = checkPublicValues(found.fields as PublicField[], values);
  for (const key of await missingRows(ctx, found, checked.values)) {
    const f = found.fields.find((x) => x.key === key)!;
    (checked.errors[key] ??= []).push(`The selected ${f.name || f.key} is invalid.`);
  }
  if (Object.keys(checked.errors).length) throw validationError(checked.errors);
  await limits.verifyCaptcha(captchaToken);
  const visitor = asVisitor(ctx, found.accountId);
  const def = resourceNamed("submission");
  const submission = await inTransaction(visitor, (tx) =>
    createRow(visitor, tx, def, { data: checked.values }, { formId: found.form.id, userId: null }),
  );
  return { submission, form: found.form };
}
