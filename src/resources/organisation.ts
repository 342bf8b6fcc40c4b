import {
  belongsToMany,
  bool,
  categoryPivot,
  defineResource,
  hasMany,
  int,
  m2mOperations,
  morphOne,
  order,
  string,
  text,
  type ExposedScope,
  type PivotDef,
} from "./define.ts";
import { form, tagPivot, taggedScope } from "./forms.ts";
import { imageRoute, sameIncludes } from "./routes.ts";

const orderedByOrder: Record<string, "asc" | "desc">[] = [{ order: "asc" }, { id: "asc" }];
/** Rows with a `hidden` flag: the `hidden` and `visible` search scopes. */
const visibility: Record<string, ExposedScope> = {
  hidden: { parameters: 0, where: () => ({ hidden: true }) },
  visible: { parameters: 0, where: () => ({ hidden: false }) },
};
/** A group's units, in the group's own order, with the link shown as `pivot`. */
const groupUnits = (parentKey: "groupId" | "unitId"): PivotDef => ({
  model: "GroupUnit",
  parentKey,
  relatedKey: parentKey === "groupId" ? "unitId" : "groupId",
  related: parentKey === "groupId" ? "unit" : "group",
  as: "pivot",
  always: true,
  fields: { order: int() },
  orderBy: [{ order: "asc" }, { id: "asc" }],
});
/** Users and assignment records that point at an organisational entity through `foreignKey`. */
const peopleRelations = (foreignKey: string) => ({
  users: hasMany({ target: "user", field: "users", foreignKey: foreignKey }),
  assignment_records: hasMany({
    target: "assignmentRecord",
    field: "assignmentRecords",
    foreignKey: foreignKey,
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
  }),
});

export const specialty = defineResource({
  name: "specialty",
  model: "Specialty",
  path: "specialties",
  plural: "specialties",
  fields: {
    name: string({ required: true }),
    abbreviation: string({ nullable: true }),
    description: text(),
    order: order(),
  },
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
  fields: {
    name: string({ required: true }),
    description: text(),
    order: order(),
    hidden: bool(),
    icon: string({ nullable: true }),
  },
  relations: {
    ...peopleRelations("unitId"),
    image: morphOne({ target: "image" }),
    groups: belongsToMany({ target: "group", field: "groups", pivot: groupUnits("unitId") }),
  },
  includes: ["assignment_records", "assignment_records.*", "groups", "groups.*", "image", "users", "users.*"],
  orderBy: orderedByOrder,
  nested: [imageRoute()],
  scopes: visibility,
});

/** What the roster embeds whether asked or not (PERSCOM's automatic roster). */
const roster = [
  "image",
  "units",
  "units.image",
  "units.users",
  "units.users.position",
  "units.users.rank",
  "units.users.rank.image",
  "units.users.specialty",
  "units.users.status",
];

export const group = defineResource({
  name: "group",
  model: "Group",
  path: "groups",
  fields: {
    name: string({ required: true }),
    description: text(),
    order: order(),
    hidden: bool(),
    icon: string({ nullable: true }),
  },
  relations: {
    image: morphOne({ target: "image" }),
    units: belongsToMany({ target: "unit", field: "units", pivot: groupUnits("groupId") }),
  },
  includes: ["image", "units", "units.*"],
  orderBy: orderedByOrder,
  nested: [imageRoute(), { path: "units", param: "unit", relation: "units", operations: m2mOperations }],
  views: [
    {
      path: "roster",
      field: "roster",
      description: "The roster: the groups not hidden, with their units and the units' users.",
      operations: ["list", "show"],
      scopes: ["view:group"],
      where: () => ({ hidden: false }),
      includes: ["units.*", ...roster],
      alwaysIncludes: roster,
    },
  ],
  scopes: { ...visibility, forAutomaticRoster: visibility.visible, forManualRoster: visibility.visible },
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
  relations: {
    users: hasMany({ target: "user", field: "users", foreignKey: "statusId" }),
    // Submissions carrying this status, through the status history rows (the same rows as a submission's `statuses`).
    submissions: {
      kind: "belongsToMany",
      target: "submission",
      field: "records",
      filter: { name: "submissionRecords", where: { submissionId: { not: null } } },
      pivot: {
        model: "StatusRecord",
        parentKey: "statusId",
        relatedKey: "submissionId",
        related: "submission",
        as: "record",
        duplicates: true,
        fields: { text: { type: "text", nullable: true, max: 65535 } },
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      },
    },
  },
  includes: ["submissions", "users"],
  orderBy: orderedByOrder,
});

export const qualification = defineResource({
  name: "qualification",
  model: "Qualification",
  path: "qualifications",
  fields: { name: string({ required: true }), description: text(), order: order() },
  relations: { image: morphOne({ target: "image" }) },
  includes: ["image"],
  orderBy: orderedByOrder,
  nested: [imageRoute()],
});

export const award = defineResource({
  name: "award",
  model: "Award",
  path: "awards",
  fields: { name: string({ required: true }), description: text(), order: order() },
  relations: { image: morphOne({ target: "image" }) },
  includes: ["image"],
  orderBy: orderedByOrder,
  nested: [imageRoute()],
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
  relations: {
    author: { kind: "belongsTo", target: "user", field: "author", foreignKey: "authorId" },
    tags: belongsToMany({ target: "tag", field: "tags", pivot: tagPivot("DocumentTag", "documentId") }),
    // PERSCOM's categories/{category}/documents routes offer `include=image`.
    image: morphOne({ target: "image" }),
  },
  includes: ["author"],
  scopes: { tags: taggedScope() },
});

export const category = defineResource({
  name: "category",
  model: "Category",
  path: "categories",
  plural: "categories",
  fields: { name: string({ required: true }), description: text(), resource: string({ required: true }) },
  relations: {
    forms: belongsToMany({ target: "form", field: "forms", pivot: categoryPivot("CategoryForm", "formId", "form") }),
    qualifications: belongsToMany({
      target: "qualification",
      field: "qualifications",
      pivot: categoryPivot("CategoryQualification", "qualificationId", "qualification"),
    }),
    ranks: belongsToMany({ target: "rank", field: "ranks", pivot: categoryPivot("CategoryRank", "rankId", "rank") }),
    awards: belongsToMany({
      target: "award",
      field: "awards",
      pivot: categoryPivot("CategoryAward", "awardId", "award"),
    }),
    documents: belongsToMany({
      target: "document",
      field: "documents",
      pivot: categoryPivot("CategoryDocument", "documentId", "document"),
    }),
  },
  includes: ["awards", "documents", "forms", "qualifications", "ranks"],
  // The link is always shown as `pivot`, so it is not an include of its own.
  nested: Object.entries({
    forms: form.includes,
    qualifications: ["image"],
    ranks: ["image"],
    awards: ["image"],
    documents: ["image"],
  }).map(([relation, includes]) => ({
    path: relation,
    param: relation.slice(0, -1),
    relation,
    operations: m2mOperations,
    includes: sameIncludes(m2mOperations, includes),
  })),
});
