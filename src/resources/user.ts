import { belongsTo, belongsToMany, bool, datetime, defineResource, hasMany, m2mOperations, morphMany, ref, string, text } from "./define.ts";

const recordIncludes = (name: string) => [name, `${name}.*`];

export default defineResource({
  name: "user",
  model: "User",
  path: "users",
  fields: {
    name: string({ required: true }),
    email: string({ required: true, unique: true, pattern: /^[^\s@]+@[^\s@]+\.[^\s@]+$/ }),
    emailVerifiedAt: datetime(),
    positionId: ref("position"),
    rankId: ref("rank"),
    specialtyId: ref("specialty"),
    statusId: ref("status"),
    unitId: ref("unit"),
    approved: bool(),
    notes: text(),
    notesUpdatedAt: datetime({ writable: false }),
    lastSeenAt: datetime(),
    discordUserId: string({ nullable: true }),
  },
  relations: {
    position: belongsTo("position", "positionId"),
    rank: belongsTo("rank", "rankId"),
    specialty: belongsTo("specialty", "specialtyId"),
    status: belongsTo("status", "statusId"),
    unit: belongsTo("unit", "unitId"),
    rank_records: hasMany("rankRecord", "rankRecords", "userId", [{ createdAt: "desc" }, { id: "desc" }]),
    assignment_records: hasMany("assignmentRecord", "assignmentRecords", "userId", [{ createdAt: "desc" }, { id: "desc" }]),
    attachments: morphMany("attachment", "attachments"),
    fields: belongsToMany("field", "fieldLinks", {
      model: "FieldLink", parentKey: "userId", relatedKey: "fieldId", related: "field", as: "fields",
      fields: { order: { type: "int", nullable: true } }, orderBy: [{ order: "asc" }, { id: "asc" }],
    }),
    status_records: belongsToMany("status", "statusRecords", {
      model: "StatusRecord", parentKey: "userId", relatedKey: "statusId", related: "status", as: "record", duplicates: true,
      fields: { text: { type: "text", nullable: true, max: 65535 } }, orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    }),
    tasks: belongsToMany("task", "taskAssignments", {
      model: "TaskAssignment", parentKey: "userId", relatedKey: "taskId", related: "task", as: "assignment",
      fields: {
        assignedById: { type: "int", nullable: true, references: "user", defaultsToCaller: true },
        assignedAt: { type: "datetime", nullable: true },
        dueAt: { type: "datetime", nullable: true },
        completedAt: { type: "datetime", nullable: true },
        expiresAt: { type: "datetime", nullable: true },
      },
      orderBy: [{ assignedAt: "desc" }, { id: "desc" }],
    }),
  },
  includes: [
    ...recordIncludes("assignment_records"), "attachments", "fields", "position", "rank", "rank.*",
    ...recordIncludes("rank_records"), "specialty", "status", "unit", "unit.*",
  ],
  hooks: {
    beforeWrite({ data, existing }) {
      if ("notes" in data && data.notes !== existing?.notes) data.notesUpdatedAt = new Date();
    },
  },
  nested: [
    { path: "rank-records", param: "rank_record", relation: "rank_records", operations: ["list", "show", "create", "update", "delete"] },
    {
      path: "rank", param: "rank", relation: "rank", operations: ["show", "update", "delete"],
      includes: { show: ["image"], update: ["image"], delete: ["image"] },
    },
    {
      path: "fields", param: "field", relation: "fields",
      operations: m2mOperations,
      includes: { batchUpdate: [], pivot: [] },
    },
    {
      path: "status-records", param: "status_record", relation: "status_records",
      operations: m2mOperations,
      includes: { list: ["record"], show: ["record"], create: ["record"], update: ["record"], delete: ["record"], batchUpdate: ["record"], batchDelete: ["record"] },
    },
    {
      path: "tasks", param: "task", relation: "tasks",
      operations: m2mOperations,
      includes: Object.fromEntries(
        (["list", "show", "create", "update", "delete", "batchUpdate", "batchDelete"] as const).map((op) => [op, ["assignment", "attachments", "form"]]),
      ),
    },
  ],
});
