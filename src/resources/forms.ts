import { FieldErrorBag, validationError } from "../core/errors.ts";
import {
  belongsTo,
  belongsToMany,
  bool,
  defineResource,
  oneOf,
  hasMany,
  hasManyOperations,
  isPrototypeName,
  m2mOperations,
  morphMany,
  ownEntry,
  ref,
  string,
  text,
  type ExposedScope,
  type ModelName,
  type ModelRow,
  type PivotDef,
  json,
} from "./define.ts";
import { anyOf, anyValue, jsonBoolean, jsonNumber, jsonString, listOf, mapOf, objectOf } from "./json-shapes.ts";
import { sameIncludes } from "./routes.ts";
import { fieldOptionsModel, fieldOptionsType, fieldType } from "./enums.ts";
import { RULES_PATTERN, RULES_REFUSED, rulesProblem } from "./form-rules.ts";

export { fieldTypes, optionsModels } from "./enums.ts";

/** A resource's tags: link rows of `model` from `parentKey` to the tag. */
export const tagPivot = (model: ModelName, parentKey: string): PivotDef => ({
  model,
  parentKey,
  relatedKey: "tagId",
  related: "tag",
  as: "pivot",
  fields: {},
  orderBy: [{ tagId: "asc" }],
});

/** The `tags` search scope: rows linked to any of the given tags, each named by id or by name. */
export const taggedScope = (field = "tags"): ExposedScope => ({
  where(parameters) {
    const values = parameters.flat();
    const ids = values
      .filter((v) => (typeof v === "number" && Number.isInteger(v)) || (typeof v === "string" && /^\d+$/.test(v)))
      .map(Number);
    const names = values.filter((v): v is string => typeof v === "string");
    return { [field]: { some: { tag: { OR: [{ id: { in: ids } }, { name: { in: names } }] } } } };
  },
});

export const form = defineResource({
  name: "form",
  model: "Form",
  path: "forms",
  fields: {
    name: string({ required: true }),
    slug: string({ required: true, unique: true, pattern: /^[a-z0-9]+(?:[-_][a-z0-9]+)*$/i }),
    isPublic: bool({ required: true }),
    successMessage: text(),
    description: text(),
    instructions: text(),
    submissionStatusId: ref("status"),
  },
  relations: {
    fields: belongsToMany({
      target: "field",
      field: "fieldLinks",
      pivot: {
        model: "FieldLink",
        parentKey: "formId",
        relatedKey: "fieldId",
        related: "field",
        as: "fields",
        fields: { order: { type: "int" } },
        orderBy: [{ order: "asc" }, { id: "asc" }],
      },
    }),
    submissions: hasMany({
      target: "submission",
      field: "submissions",
      foreignKey: "formId",
      orderBy: [{ id: "asc" }],
    }),
    submission_status: belongsTo({ target: "status", foreignKey: "submissionStatusId", field: "submissionStatus" }),
    tags: belongsToMany({ target: "tag", field: "tags", pivot: tagPivot("FormTag", "formId") }),
  },
  includes: ["fields", "submissions", "submissions.*", "tags"],
  publicRoutes: [
    {
      kind: "publicShow",
      path: "forms/{form}",
      field: "publicForm",
      description:
        "A public form of the account (`account`: its slug; `form`: the form's slug or id) with the fields a submitter fills in, for a public page; no credential needed. A form that is not public, does not exist or is another account's is not found.",
    },
    {
      kind: "publicSubmit",
      path: "forms/{form}/submissions",
      field: "submitPublicForm",
      description:
        "Submits a public form (`account`: its slug; `form`: the form's slug or id) without any credential: the values are checked against the form's fields (type, options, required, rules), then stored as a submission of no user with the form's default status. A captcha token is needed when the server verifies captchas; submissions are rate-limited per client address and per form.",
    },
  ],
  nested: [
    { path: "fields", param: "field", relation: "fields", operations: m2mOperations, includes: {} },
    {
      path: "submissions",
      param: "submission",
      relation: "submissions",
      operations: hasManyOperations,
      includes: sameIncludes(hasManyOperations, ["form", "statuses", "statuses.record", "user"]),
    },
  ],
  scopes: { tags: taggedScope() },
});

export const tag = defineResource({ name: "tag", model: "Tag", fields: { name: string({ required: true }) } });

const isEmptyObject = (value: unknown) =>
  typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;

/** One choice of a select field. */
const fieldOption = objectOf(
  "FieldOption",
  {
    label: jsonString({ description: "What the form shows." }),
    value: jsonString({ description: "What a submission stores when it is chosen." }),
  },
  { description: "A choice of a select field." },
);
const fieldOptions = listOf(fieldOption, {
  description: "The choices of a select field, in order; `[]` when there are none.",
});

/**
 * A field's options as a list of `{label, value}`: `[]` for none (null or `{}`, as older writes stored them), and
 * PERSCOM's keyed form `{value: label}` as the list of its entries.
 */
export function optionList(options: unknown): unknown {
  if (options == null || isEmptyObject(options)) return [];
  if (typeof options !== "object" || Array.isArray(options)) return options;
  return Object.entries(options).map(([value, label]) => ({
    label: typeof label === "string" ? label : JSON.stringify(label),
    value,
  }));
}

export const field = defineResource({
  name: "field",
  model: "Field",
  path: "fields",
  fields: {
    name: string({ required: true }),
    key: string({ required: true, unique: true, pattern: /^(?!.*__)[a-z0-9]+(?:_[a-z0-9]+)*$/i }),
    type: string({ required: true, ...oneOf(fieldType) }),
    cast: string({ nullable: true }),
    description: text(),
    placeholder: string({ nullable: true }),
    default: string({ nullable: true }),
    help: text(),
    required: bool(),
    rules: string({ nullable: true, pattern: RULES_PATTERN, invalid: RULES_REFUSED }),
    readonly: bool(),
    hidden: bool(),
    options: json(fieldOptions, {
      nullable: true,
      invalid: "The options field must be a list of options.",
      input: anyOf(
        [
          fieldOptions,
          mapOf(jsonString(), {
            description:
              'PERSCOM\'s keyed form, `{"<value>": "<label>"}`: stored as the list of its entries; `{}` is no options.',
          }),
        ],
        {
          description:
            "The choices of a select field: a list of `{label, value}` (or PERSCOM's `{value: label}` object); null, `[]` or `{}` for none.",
        },
      ),
    }),
    optionsType: string({ ...oneOf(fieldOptionsType) }),
    optionsModel: string({ nullable: true, ...oneOf(fieldOptionsModel) }),
  },
  // A computed field of a column's name replaces how the column reads (GraphQL field and REST attribute): options are
  // a list, `[]` when there are none, whatever an older write stored (null or `{}`).
  computed: {
    options: { type: "json", shape: fieldOptions, needs: ["options"], resolve: (row) => optionList(row.options) },
  },
  includes: [],
  // Fields are created through the forms and users they belong to; PERSCOM has no top-level writes for them.
  operations: ["list", "show"],
  hooks: {
    independent: true,
    beforeWrite({ data }) {
      // The key names a body key of the form's submissions and an attribute they show.
      if (typeof data.key === "string" && isPrototypeName(data.key)) {
        throw validationError({ key: [`The key ${data.key} is reserved; choose another key.`] });
      }
      // A rule the public forms cannot apply would let submissions through unchecked (src/resources/form-rules.ts).
      const rules = typeof data.rules === "string" ? rulesProblem(data.rules) : null;
      if (rules) throw validationError({ rules: [rules] });
      if (data.options === undefined) return;
      if (typeof data.options !== "object")
        throw validationError({ options: ["The options field must be a list of options."] });
      data.options = optionList(data.options);
    },
  },
});

/** Checks the submitted custom values of a form against its fields: required, type, length. */
export function checkCustomValues(
  fields: Array<ModelRow<"Field">>,
  values: Record<string, unknown>,
  bag: FieldErrorBag,
): Record<string, unknown> {
  const kept = new Map<string, unknown>();
  for (const f of fields) {
    const value = ownEntry(values, f.key);
    const human = f.name || f.key;
    if (value === undefined || value === null || value === "") {
      if (f.required) bag.add(f.key, `The ${human} field is required.`);
      continue;
    }
    const numeric = f.type === "number";
    const boolean = f.type === "boolean";
    if (
      numeric &&
      !(typeof value === "number" || (typeof value === "string" && value.trim() !== "" && !Number.isNaN(Number(value))))
    ) {
      bag.add(f.key, `The ${human} field must be a number.`);
    } else if (boolean && typeof value !== "boolean" && !["0", "1", "true", "false", 0, 1].includes(value as never)) {
      bag.add(f.key, `The ${human} field must be true or false.`);
    } else if (!numeric && !boolean && typeof value !== "string") {
      bag.add(f.key, `The ${human} field must be a string.`);
    } else if (typeof value === "string" && value.length > 65535) {
      bag.add(f.key, `The ${human} field must not be greater than 65535 characters.`);
    } else if (f.type === "email" && typeof value === "string" && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value)) {
      bag.add(f.key, `The ${human} field must be a valid email address.`);
    } else {
      kept.set(f.key, value);
    }
  }
  return Object.fromEntries(kept);
}

export const submission = defineResource({
  name: "submission",
  model: "Submission",
  path: "submissions",
  fields: {
    formId: ref("form", { required: true }),
    userId: ref("user", { required: true, nullable: false }),
    readAt: { type: "datetime", nullable: true, writable: false },
    data: json(
      mapOf(anyOf([jsonString(), jsonNumber(), jsonBoolean()]), {
        description: "The submitted values of the form's custom fields, keyed by each field's `key`.",
      }),
      {
        nullable: true,
        // Each value is checked against its form's field, and keys that name none are dropped (the hook below).
        input: mapOf(anyValue(), { description: "Values of the form's custom fields, keyed by each field's `key`." }),
      },
    ),
  },
  spread: "data",
  relations: {
    form: belongsTo({ target: "form", foreignKey: "formId" }),
    user: belongsTo({ target: "user", foreignKey: "userId" }),
    comments: morphMany({ target: "comment", field: "comments" }),
    statuses: belongsToMany({
      target: "status",
      field: "statusRecords",
      pivot: {
        model: "StatusRecord",
        parentKey: "submissionId",
        relatedKey: "statusId",
        related: "status",
        as: "record",
        duplicates: true,
        fields: { text: { type: "text", nullable: true, max: 65535 } },
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      },
    }),
  },
  includes: ["comments", "comments.*", "form", "form.*", "user", "user.*", "statuses", "statuses.record"],
  nested: [
    {
      path: "statuses",
      param: "status",
      relation: "statuses",
      operations: m2mOperations,
      includes: sameIncludes(m2mOperations, ["record"]),
    },
  ],
  hooks: {
    async beforeWrite({ data, existing, ctx, tx }) {
      const formId = (data.formId ?? existing?.formId) as number | undefined;
      if (formId == null) return;
      if (ctx.auth?.kind === "publishable") {
        // A publishable key's create:submission reaches public forms only: anyone holds it.
        const form = await tx.findFirst("Form", {
          where: { id: formId, accountId: ctx.auth.accountId },
          select: { isPublic: true },
        });
        if (!form?.isPublic)
          throw validationError({ form_id: ["The form is not public: a publishable key submits only public forms."] });
      }
      const links = await tx.findMany("FieldLink", {
        where: { formId },
        include: { field: true },
        orderBy: [{ order: "asc" }, { id: "asc" }],
      });
      const bag = new FieldErrorBag();
      const values = (data.data ?? {}) as Record<string, unknown>;
      const fields = links.map((l) => l.field as ModelRow<"Field">).filter((f) => !f.hidden);
      const kept = checkCustomValues(fields, values, bag);
      bag.throwIfAny();
      data.data = existing ? { ...((existing.data as object) ?? {}), ...kept } : kept;
    },
    async afterCreate({ row, tx, writes }) {
      // formId is required on create (the column is nullable): always set here.
      if (row.formId == null) return;
      const form = await tx.findUnique("Form", { where: { id: row.formId }, select: { submissionStatusId: true } });
      if (form?.submissionStatusId != null)
        await writes.create("statusRecord", { statusId: form.submissionStatusId, submissionId: row.id });
    },
  },
});

/** Columns of a task assignment a client may set: who assigned it, when, and its deadlines. */
export const taskAssignmentPivot = (parentKey: "userId" | "taskId"): PivotDef => ({
  model: "TaskAssignment",
  parentKey,
  relatedKey: parentKey === "userId" ? "taskId" : "userId",
  related: parentKey === "userId" ? "task" : "user",
  as: "assignment",
  fields: {
    assignedById: { type: "int", nullable: true, references: "user", defaultsToCaller: true },
    assignedAt: { type: "datetime" },
    dueAt: { type: "datetime", nullable: true },
    completedAt: { type: "datetime", nullable: true },
    expiresAt: { type: "datetime", nullable: true },
  },
  orderBy: [{ assignedAt: "desc" }, { id: "desc" }],
});

export const task = defineResource({
  name: "task",
  model: "Task",
  path: "tasks",
  fields: {
    title: string({ required: true }),
    description: text(),
    instructions: text(),
    formId: ref("form"),
  },
  relations: {
    form: belongsTo({ target: "form", foreignKey: "formId" }),
    attachments: morphMany({ target: "attachment", field: "attachments" }),
    users: belongsToMany({ target: "user", field: "assignments", pivot: taskAssignmentPivot("taskId") }),
  },
  includes: ["attachments", "form", "users"],
});
