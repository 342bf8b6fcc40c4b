import { belongsTo, defineResource, morphMany, ref, text, type RelationDef } from "./define.ts";

/** Relations every service record type shares. */
export const recordRelations = (): Record<string, RelationDef> => ({
  user: belongsTo("user", "userId"),
  author: belongsTo("user", "authorId", "author"),
  document: belongsTo("document", "documentId"),
  attachments: morphMany("attachment", "attachments"),
  comments: morphMany("comment", "comments"),
});

export const recordIncludes = ["attachments", "author", "author.*", "comments", "comments.*", "document", "user", "user.*"];
export const recordOrder: Record<string, "asc" | "desc">[] = [{ createdAt: "desc" }, { id: "desc" }];
export const recordFields = () => ({
  userId: ref("user", { required: true, nullable: false }),
  documentId: ref("document"),
  authorId: ref("user", { defaultsToCaller: true }),
  text: text(),
});

export const assignmentRecord = defineResource({
  name: "assignmentRecord",
  model: "AssignmentRecord",
  path: "assignment-records",
  fields: {
    ...recordFields(),
    statusId: ref("status"),
    unitId: ref("unit"),
    positionId: ref("position"),
    specialtyId: ref("specialty"),
    type: { type: "string", oneOf: ["primary", "secondary"], required: true },
  },
  relations: {
    ...recordRelations(),
    position: belongsTo("position", "positionId"),
    specialty: belongsTo("specialty", "specialtyId"),
    status: belongsTo("status", "statusId"),
    unit: belongsTo("unit", "unitId"),
  },
  includes: [...recordIncludes, "position", "specialty", "status", "unit", "unit.*"],
  orderBy: recordOrder,
  hooks: {
    async afterCreate({ row, tx }) {
      if (row.type !== "primary") return;
      const data: Record<string, number> = {};
      for (const key of ["positionId", "specialtyId", "unitId", "statusId"]) if (row[key] != null) data[key] = row[key];
      if (Object.keys(data).length) await tx.user.update({ where: { id: row.userId }, data });
    },
  },
});
