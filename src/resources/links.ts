import {
  belongsTo,
  defineResource,
  type ComputedField,
  type FieldsOf,
  type ModelName,
  type ModelRow,
} from "./define.ts";

/** Link rows of many-to-many relations: reached only through their parents, shown as pivots. */
const link = <M extends ModelName>(
  name: string,
  model: M,
  relations: Record<string, [string, string, string?]>,
  fields: FieldsOf<M> = {},
  computed?: Record<string, ComputedField<M>>,
) =>
  defineResource({
    name,
    model,
    link: true,
    fields,
    computed,
    operations: [],
    relations: Object.fromEntries(
      Object.entries(relations).map(([key, [target, fk, field]]) => [
        key,
        belongsTo({ target: target, foreignKey: fk, field: field ?? key }),
      ]),
    ),
  });

const categoryLink = (related: string, model: "Form" | "Qualification" | "Rank" | "Award" | "Document") =>
  link(
    `category${model}`,
    `Category${model}`,
    { category: ["category", "categoryId"], [related]: [related, `${related}Id`] },
    {
      categoryId: { type: "int", writable: false },
      [`${related}Id`]: { type: "int", writable: false },
      order: { type: "int" },
    },
  );

/** `<Parent>Tag`: a tag on a form, calendar, event or document. */
const tagLink = (parent: string, model: "Form" | "Calendar" | "Event" | "Document") =>
  link(
    `${parent}Tag`,
    `${model}Tag`,
    { [parent]: [parent, `${parent}Id`], tag: ["tag", "tagId"] },
    {
      [`${parent}Id`]: { type: "int", writable: false },
      tagId: { type: "int", writable: false },
    },
  );

const now = () => Date.now();
const taskState = (row: ModelRow<"TaskAssignment">): string => {
  const expired = row.expiresAt != null && new Date(row.expiresAt).getTime() < now();
  const pastDue = row.dueAt != null && new Date(row.dueAt).getTime() < now();
  if (row.completedAt != null) {
    if (row.expiresAt != null && new Date(row.completedAt) > new Date(row.expiresAt)) return "complete_expired";
    if (row.dueAt != null && new Date(row.completedAt) > new Date(row.dueAt)) return "complete_past_due";
    return "complete";
  }
  return expired ? "expired" : pastDue ? "past_due" : "assigned";
};

export const links = [
  categoryLink("form", "Form"),
  categoryLink("qualification", "Qualification"),
  categoryLink("rank", "Rank"),
  categoryLink("award", "Award"),
  categoryLink("document", "Document"),
  link(
    "fieldLink",
    "FieldLink",
    { field: ["field", "fieldId"], form: ["form", "formId"], user: ["user", "userId"] },
    {
      fieldId: { type: "int", writable: false },
      formId: { type: "int", nullable: true, writable: false },
      userId: { type: "int", nullable: true, writable: false },
      order: { type: "int" },
    },
  ),
  link(
    "statusRecord",
    "StatusRecord",
    { status: ["status", "statusId"], user: ["user", "userId"], submission: ["submission", "submissionId"] },
    {
      statusId: { type: "int", writable: false },
      userId: { type: "int", nullable: true, writable: false },
      submissionId: { type: "int", nullable: true, writable: false },
      text: { type: "text", nullable: true },
    },
    {
      modelType: {
        type: "string",
        needs: ["userId"],
        resolve: (r) => (r.userId != null ? "App\\Models\\User" : "App\\Models\\Submission"),
      },
      modelId: {
        type: "string",
        needs: ["userId", "submissionId"],
        resolve: (r) => String(r.userId ?? r.submissionId),
      },
    },
  ),
  link(
    "taskAssignment",
    "TaskAssignment",
    { task: ["task", "taskId"], user: ["user", "userId"], assignedBy: ["user", "assignedById"] },
    {
      taskId: { type: "int", writable: false },
      userId: { type: "int", writable: false },
      assignedById: { type: "int", nullable: true },
      assignedAt: { type: "datetime" },
      dueAt: { type: "datetime", nullable: true },
      completedAt: { type: "datetime", nullable: true },
      expiresAt: { type: "datetime", nullable: true },
    },
    {
      expired: {
        type: "boolean",
        needs: ["expiresAt", "completedAt"],
        resolve: (r) => r.completedAt == null && r.expiresAt != null && new Date(r.expiresAt).getTime() < now(),
      },
      pastDue: {
        type: "boolean",
        needs: ["dueAt", "completedAt"],
        resolve: (r) => r.completedAt == null && r.dueAt != null && new Date(r.dueAt).getTime() < now(),
      },
      status: { type: "string", needs: ["dueAt", "completedAt", "expiresAt"], resolve: taskState },
    },
  ),
  tagLink("form", "Form"),
  tagLink("calendar", "Calendar"),
  tagLink("event", "Event"),
  tagLink("document", "Document"),
  link(
    "groupUnit",
    "GroupUnit",
    { group: ["group", "groupId"], unit: ["unit", "unitId"] },
    {
      groupId: { type: "int", writable: false },
      unitId: { type: "int", writable: false },
      order: { type: "int" },
    },
  ),
  link(
    "userRole",
    "UserRole",
    { user: ["user", "userId"], role: ["role", "roleId"] },
    {
      userId: { type: "int", writable: false },
      roleId: { type: "int", writable: false },
    },
  ),
  link(
    "newsfeedLike",
    "NewsfeedLike",
    { newsfeedItem: ["newsfeedItem", "newsfeedItemId"], user: ["user", "userId"] },
    {
      newsfeedItemId: { type: "int", writable: false },
      userId: { type: "int", writable: false },
    },
  ),
];
