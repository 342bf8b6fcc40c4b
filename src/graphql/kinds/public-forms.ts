import { ApiError, validationError } from "../../core/errors.ts";
import { camel } from "../../core/names.ts";
import { findPublicForm, submitPublicForm } from "../../data/public-forms.ts";
import type { Context } from "../../request/context.ts";
import type { Operation } from "../../resources/operations.ts";
import type { Builder } from "../builder.ts";
import { dynamic, type ArgMap, type DynamicFieldBuilder, type OutputRef } from "../pothos-dynamic.ts";
import { registerRootField } from "../relation-scopes.ts";
import { INTERNAL, renamingErrors, type Args, type FacadeKind, type PublicParts, type Row } from "./shared.ts";

/*
 * The public-form kinds: `publicShow` reads a public form and the fields a submitter fills in, `publicSubmit` submits
 * one; both without any credential (the operation's `anonymous`), in the account the `account` slug names
 * (src/data/public-forms.ts). Their types show only what a public page needs: no hidden field, no status, no
 * submission of anyone else.
 */

/** The columns of a form a public page shows, and of each of its fields. */
export const PUBLIC_FORM_COLUMNS = ["id", "name", "slug", "description", "instructions", "successMessage"] as const;
export const PUBLIC_FIELD_COLUMNS = [
  "key",
  "name",
  "type",
  "description",
  "placeholder",
  "default",
  "help",
  "required",
  "readonly",
  "rules",
  "options",
] as const;
export const PUBLIC_SUBMISSION_COLUMNS = ["id", "formId", "createdAt", "successMessage"] as const;

interface PublicTypes {
  form: OutputRef;
  submission: OutputRef;
}
const made = new WeakMap<Builder, PublicTypes>();

/** `PublicForm`, `PublicFormField` and `PublicSubmission`, made once per builder (both graphs use them). */
export function publicTypes(builder: Builder): PublicTypes {
  const existing = made.get(builder);
  if (existing) return existing;
  const b = dynamic(builder);
  const text = (t: DynamicFieldBuilder, column: string, description: string) =>
    t.string({ description, nullable: true, resolve: (p: Row) => p[column] ?? null });
  const field = b.objectRef("PublicFormField").implement({
    description: "A field of a public form, as its submitters see it.",
    fields: (t) => ({
      key: t.exposeString("key", { description: "The key its value is submitted under (`values.<key>`)." }),
      name: t.exposeString("name", { description: "Its label." }),
      type: t.exposeString("type", {
        description:
          "The kind of input (`text`, `textarea`, `email`, `number`, `boolean`, `date`, `datetime-local`, `select`, ...).",
      }),
      description: text(t, "description", "What it asks for."),
      placeholder: text(t, "placeholder", "The placeholder of its input."),
      default: text(t, "default", "Its default value."),
      help: text(t, "help", "Help shown beside it."),
      required: t.boolean({ description: "Whether a value is required.", resolve: (p: Row) => !!p.required }),
      readonly: t.boolean({
        description: "Shown but not set by the submitter (it keeps its default).",
        resolve: (p: Row) => !!p.readonly,
      }),
      rules: text(t, "rules", "Its validation rules, Laravel style (`required|max:255`)."),
      options: t.field({
        type: "JSON",
        description: "A select field's choices, `[{label, value}]`; `[]` for none.",
        resolve: (p: Row) => (Array.isArray(p.options) ? p.options : []),
      }),
    }),
  });
  const form = b.objectRef("PublicForm").implement({
    description: "A public form, for a public page: what it asks, and its fields in order.",
    fields: (t) => ({
      id: t.exposeInt("id", { description: "The form's id." }),
      name: t.exposeString("name", { description: "The form's name." }),
      slug: t.exposeString("slug", { description: "The form's slug (its public address names it, or its id)." }),
      description: text(t, "description", "What the form is for."),
      instructions: text(t, "instructions", "What a submitter should know."),
      successMessage: text(t, "successMessage", "What to show once a submission is made."),
      fields: t.field({
        type: [field],
        description: "The fields to fill in, in order.",
        resolve: (p: Row) => p.fields,
      }),
    }),
  });
  const submission = b.objectRef("PublicSubmission").implement({
    description: "A submission just made to a public form.",
    fields: (t) => ({
      id: t.exposeInt("id", { description: "The submission's id." }),
      formId: t.exposeInt("formId", { description: "The form's id." }),
      createdAt: t.field({ type: "DateTime", description: "When it was made.", resolve: (p: Row) => p.createdAt }),
      successMessage: text(t, "successMessage", "The form's message to show now."),
    }),
  });
  const types = { form, submission };
  made.set(builder, types);
  return types;
}

const textArgs = (t: DynamicFieldBuilder): ArgMap => ({
  account: t.arg.string({ required: true, description: "The account's slug." }),
  form: t.arg.string({ required: true, description: "The form's slug, or its id." }),
});
const submitArgs = (t: DynamicFieldBuilder): ArgMap => ({
  ...textArgs(t),
  values: t.arg({
    type: "JSON",
    required: true,
    description: "The values, an object keyed by each field's `key`.",
  }),
  captchaToken: t.arg.string({ description: "The captcha's token, when the server verifies captchas." }),
});

/** The public form, or null when none is public there (REST: 404). */
async function showForm(ctx: Context, a: Args): Promise<Row | null> {
  try {
    const found = await findPublicForm(ctx, String(a.account), String(a.form));
    return { ...found.form, fields: found.fields };
  } catch (error) {
    if (error instanceof ApiError && error.code === "NOT_FOUND") return null;
    throw error;
  }
}

/** Submits it; field errors keyed by field key on REST, by `values.<key>` (and `captchaToken`) on GraphQL. */
async function submit(ctx: Context, a: Args): Promise<Row> {
  const values = a.values;
  if (typeof values !== "object" || values === null || Array.isArray(values))
    throw validationError({ values: ["The values must be an object keyed by field key."] });
  const token = typeof a.captchaToken === "string" && a.captchaToken !== "" ? a.captchaToken : null;
  const { submission, form } = await renamingErrors(
    submitPublicForm(ctx, String(a.account), String(a.form), values as Row, token),
    (key) => key,
    (key) => (key === "captcha_token" ? camel(key) : `values.${key}`),
  );
  return { ...submission, successMessage: form.successMessage ?? null };
}

/** The operation needs no credential: the key check lets its root fields through (src/server/app.ts). */
const registerAnonymous = (field: string) => registerRootField(field, { scopes: [], anonymous: true });

export const publicFormKinds: Record<"publicShow" | "publicSubmit", FacadeKind> = {
  publicShow: {
    summary: (op) => publicDescription(op),
    args: (t) => textArgs(t),
    field: (t, op, p) =>
      t.field({
        ...INTERNAL,
        type: publicTypes(p.builder).form,
        args: p.args,
        nullable: true,
        description: p.description,
        resolve: (_root: unknown, a: Args, ctx: Context) => showForm(ctx, a),
      }),
    addPublic: (p: PublicParts, op: Operation) => {
      dynamic(p.builder).queryField(op.field, (t) =>
        t.field({
          type: publicTypes(p.builder).form,
          args: textArgs(t),
          nullable: true,
          description: p.withRoute(`${publicDescription(op)} Null when there is none.`, op),
          resolve: (_root: unknown, a: Args, ctx: Context) => showForm(ctx, a),
        }),
      );
      registerAnonymous(op.field);
    },
  },
  publicSubmit: {
    summary: (op) => publicDescription(op),
    args: (t) => submitArgs(t),
    field: (t, _op, p) =>
      t.field({
        ...INTERNAL,
        type: publicTypes(p.builder).submission,
        args: p.args,
        description: p.description,
        resolve: (_root: unknown, a: Args, ctx: Context) => submit(ctx, a),
      }),
    addPublic: (p: PublicParts, op: Operation) => {
      const submission = publicTypes(p.builder).submission;
      dynamic(p.builder).mutationField(op.field, (t) =>
        t.field({
          type: p.payload(
            "SubmitPublicFormPayload",
            (t) => ({
              submission: t.field({ type: submission, description: "The submission made.", resolve: (r: Row) => r }),
            }),
            "What submitting a public form answers.",
          ),
          args: submitArgs(t),
          nullable: true,
          description: p.withRoute(publicDescription(op), op),
          resolve: (_root: unknown, a: Args, ctx: Context) => submit(ctx, a),
        }),
      );
      registerAnonymous(op.field);
    },
  },
};

const publicDescription = (op: Operation) => op.def.publicRoutes!.find((r) => r.field === op.field)!.description;
