import { belongsToMany, bool, categoryPivot, defineResource, hasMany, m2mOperations, morphOne, order, string, text } from "./define.ts";

const orderedByOrder: Record<string, "asc" | "desc">[] = [{ order: "asc" }, { id: "asc" }];
/** Users and assignment records that point at an organisational entity through `foreignKey`. */
const peopleRelations = (foreignKey: string) => ({
  users: hasMany("user", "users", foreignKey),
  assignment_records: hasMany("assignmentRecord", "assignmentRecords", foreignKey, [{ createdAt: "desc" }, { id: "desc" }]),
});

export const specialty = defineResource({
  name: "specialty",
  model: "Specialty",
  path: "specialties",
  plural: "specialties",
  fields: { name: string({ required: true }), abbreviation: string({ nullable: true }), description: text(), order: order() },
  relations: peopleRelations("specialtyId"),
  includes: ["assignment_records", "assignment_records.*", "users"],
  orderBy: orderedByOrder,
});

export const position = defineResource({
  name: "position",
  model: "Position",
  path: "positions",
  fields: { name: string({ required: true }), description: text(), order: order() },
  relations: peopleRelations("positionId"),
  includes: ["assignment_records", "assignment_records.*", "users"],
  orderBy: orderedByOrder,
});

export const unit = defineResource({
  name: "unit",
  model: "Unit",
  path: "units",
  fields: { name: string({ required: true }), description: text(), order: order(), hidden: bool(), icon: string({ nullable: true }) },
  relations: { ...peopleRelations("unitId"), image: morphOne("image") },
  includes: ["assignment_records", "assignment_records.*", "image", "users", "users.*"],
  orderBy: orderedByOrder,
});

export const status = defineResource({
  name: "status",
  model: "Status",
  path: "statuses",
  plural: "statuses",
  fields: {
    name: string({ required: true }),
    color: string({ required: true, pattern: /^#([A-Fa-f0-9]{6}|[A-Fa-f0-9]{3})$/ }),
    icon: string({ nullable: true, writable: false }),
    order: order(),
  },
  relations: { users: hasMany("user", "users", "statusId") },
  includes: ["users"],
  orderBy: orderedByOrder,
});

export const qualification = defineResource({
  name: "qualification",
  model: "Qualification",
  path: "qualifications",
  fields: { name: string({ required: true }), description: text(), order: order() },
  relations: { image: morphOne("image") },
  includes: ["image"],
  orderBy: orderedByOrder,
  nested: [{ path: "image", param: "image", relation: "image", operations: ["create", "show", "update", "delete"], includes: {} }],
});

export const award = defineResource({
  name: "award",
  model: "Award",
  path: "awards",
  fields: { name: string({ required: true }), description: text(), order: order() },
  relations: { image: morphOne("image") },
  includes: ["image"],
  orderBy: orderedByOrder,
});

export const document = defineResource({
  name: "document",
  model: "Document",
  path: "documents",
  fields: {
    name: string({ required: true }),
    description: text(),
    content: text({ required: true, nullable: false }),
    authorId: { type: "int", nullable: true, references: "user", defaultsToCaller: true },
  },
  relations: { author: { kind: "belongsTo", target: "user", field: "author", foreignKey: "authorId" } },
  includes: ["author"],
});

export const category = defineResource({
  name: "category",
  model: "Category",
  path: "categories",
  plural: "categories",
  fields: { name: string({ required: true }), description: text(), resource: string({ required: true }) },
  relations: {
    forms: belongsToMany("form", "forms", categoryPivot("CategoryForm", "formId", "form")),
    qualifications: belongsToMany("qualification", "qualifications", categoryPivot("CategoryQualification", "qualificationId", "qualification")),
    ranks: belongsToMany("rank", "ranks", categoryPivot("CategoryRank", "rankId", "rank")),
    awards: belongsToMany("award", "awards", categoryPivot("CategoryAward", "awardId", "award")),
    documents: belongsToMany("document", "documents", categoryPivot("CategoryDocument", "documentId", "document")),
  },
  includes: ["awards", "documents", "forms", "qualifications", "ranks"],
  nested: (["forms", "qualifications", "ranks", "awards", "documents"] as const).map((relation) => ({
    path: relation, param: relation.slice(0, -1), relation, operations: m2mOperations,
  })),
});
