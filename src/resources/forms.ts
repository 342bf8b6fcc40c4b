import { FieldErrorBag } from "../errors.ts";
import { belongsTo, belongsToMany, bool, defineResource, hasMany, m2mOperations, morphMany, ref, string, text } from "./define.ts";

export const fieldTypes = [
  "component_text", "boolean", "code", "color", "country", "date", "datetime-local", "email", "file", "number", "password",
  "select", "text", "textarea", "timezone",
] as const;
export const optionsModels = [
  "awards", "calendars", "events", "forms", "groups", "documents", "positions", "qualifications", "ranks", "specialties", "statuses",
  "tasks", "slots", "units", "users",
] as const;

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
    fields: belongsToMany("field", "fieldLinks", {
      model: "FieldLink", parentKey: "formId", relatedKey: "fieldId", related: "field", as: "fields",
      fields: { order: { type: "int", nullable: true } }, orderBy: [{ order: "asc" }, { id: "asc" }],
    }),
    submissions: hasMany("submission", "submissions", "formId", [{ id: "asc" }]),
    submission_status: belongsTo("status", "submissionStatusId", "submissionStatus"),
    tags: belongsToMany("tag", "tags", {
      model: "FormTag", parentKey: "formId", relatedKey: "tagId", related: "tag", as: "pivot", fields: {}, orderBy: [{ tagId: "asc" }],
    }),
  },
  includes: ["fields", "submissions", "submissions.*", "tags"],
  nested: [
    { path: "fields", param: "field", relation: "fields", operations: m2mOperations, includes: {} },
    { path: "submissions", param: "submission", relation: "submissions", operations: ["list", "show", "create", "update", "delete"] },
  ],
});

export const tag = defineResource({ name: "tag", model: "Tag", fields: { name: string({ required: true }) } });

export const field = defineResource({
  name: "field",
  model: "Field",
  path: "fields",
  fields: {
    name: string({ required: true }),
    key: string({ required: true, unique: true, pattern: /^(?!.*__)[a-z0-9]+(?:_[a-z0-9]+)*$/i }),
    type: string({ required: true, oneOf: fieldTypes }),
    cast: string({ nullable: true }),
    description: text(),
    placeholder: string({ nullable: true }),
    default: string({ nullable: true }),
    help: text(),
    required: bool(),
    rules: string({ nullable: true }),
    readonly: bool(),
    hidden: bool(),
    options: { type: "json", nullable: true },
    optionsType: string({ oneOf: ["array", "model"] }),
    optionsModel: string({ nullable: true, oneOf: optionsModels }),
  },
  includes: [],
  // Fields are created through the forms and users they belong to; PERSCOM has no top-level writes for them.
  operations: ["list", "show"],
});

/** Checks the submitted custom values of a form against its fields: required, type, length. */
export function checkCustomValues(fields: Array<Record<string, any>>, values: Record<string, unknown>, bag: FieldErrorBag): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const f of fields) {
    const value = values[f.key];
    const human = f.name || f.key;
    if (value === undefined || value === null || value === "") {
      if (f.required) bag.add(f.key, `The ${human} field is required.`);
      continue;
    }
    const numeric = f.type === "number";
    const boolean = f.type === "boolean";
    if (numeric && !(typeof value === "number" || (typeof value === "string" && value.trim() !== "" && !Number.isNaN(Number(value))))) {
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
      kept[f.key] = value;
    }
  }
  return kept;
}

export const submission = defineResource({
  name: "submission",
  model: "Submission",
  path: "submissions",
  fields: {
    formId: ref("form", { required: true, nullable: false }),
    userId: ref("user", { required: true, nullable: false }),
    readAt: { type: "datetime", nullable: true, writable: false },
    data: { type: "json", nullable: true },
  },
  spread: "data",
  relations: {
    form: belongsTo("form", "formId"),
    user: belongsTo("user", "userId"),
    comments: morphMany("comment", "comments"),
    statuses: belongsToMany("status", "statusRecords", {
      model: "StatusRecord", parentKey: "submissionId", relatedKey: "statusId", related: "status", as: "record", duplicates: true,
      fields: { text: { type: "text", nullable: true, max: 65535 } }, orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    }),
  },
  includes: ["comments", "comments.*", "form", "form.*", "user", "user.*", "statuses", "statuses.record"],
  hooks: {
    async beforeWrite({ data, existing, tx }) {
      const formId = (data.formId ?? existing?.formId) as number | undefined;
      if (formId == null) return;
      const links = await tx.fieldLink.findMany({ where: { formId }, include: { field: true }, orderBy: [{ order: "asc" }, { id: "asc" }] });
      const bag = new FieldErrorBag();
      const values = (data.data ?? {}) as Record<string, unknown>;
      const fields = links.map((l: { field: Record<string, unknown> }) => l.field).filter((f: Record<string, unknown>) => !f.hidden);
      const kept = checkCustomValues(fields, values, bag);
      bag.throwIfAny();
      data.data = existing ? { ...((existing.data as object) ?? {}), ...kept } : kept;
    },
    async afterCreate({ row, tx }) {
      const form = await tx.form.findUnique({ where: { id: row.formId }, select: { submissionStatusId: true } });
      if (form?.submissionStatusId != null) {
        await tx.statusRecord.create({
          data: { statusId: form.submissionStatusId, submissionId: row.id },
        });
      }
    },
  },
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
  relations: { form: belongsTo("form", "formId"), attachments: morphMany("attachment", "attachments") },
  includes: ["attachments", "form"],
});

