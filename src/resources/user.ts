import {
  belongsTo,
  belongsToMany,
  belongsToOperations,
  bool,
  datetime,
  defineResource,
  hasMany,
  hasManyOperations,
  m2mOperations,
  morphMany,
  ref,
  string,
  text,
  type NestedRoute,
} from "./define.ts";
import { latestRecordsOf } from "./user-latest-records.ts";
import { fileUrl, urlOf } from "./polymorphic.ts";
import {
  assignmentRecord,
  awardRecord,
  combatRecord,
  qualificationRecord,
  serviceRecord,
  trainingRecord,
  withoutUser,
} from "./records.ts";
import rankRecord from "./rank-record.ts";
import { sameIncludes } from "./routes.ts";
import { taskAssignmentPivot } from "./forms.ts";
import { giveDefaultRoles } from "./role.ts";
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "../core/password-rules.ts";

const recordIncludes = (name: string) => [name, `${name}.*`];
const newestFirst: Record<string, "asc" | "desc">[] = [{ createdAt: "desc" }, { id: "desc" }];

/** `/users/{user}/<path>`: one of the user's record collections, with the record's includes but its user. */
const recordsRoute = (path: string, param: string, relation: string, includes: string[]): NestedRoute => ({
  path,
  param,
  relation,
  operations: hasManyOperations,
  includes: sameIncludes(hasManyOperations, withoutUser(includes)),
});
/** `/users/{user}/<relation>`: the user's position, rank, specialty, unit or status. */
const currentRoute = (relation: string, includes: string[] = []): NestedRoute => ({
  path: relation,
  param: relation,
  relation,
  operations: belongsToOperations,
  includes: sameIncludes(belongsToOperations, includes),
});

const isAsciiAlphanumeric = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/**
 * PERSCOM's stand-in picture: the first character (code point) of each word of the name, URL-encoded and joined by
 * `+`, on the default colours. Every user without a photo shows one, so a letter or digit is used as it is rather than
 * through encodeURIComponent: a third of the time of the generic split, spread and encode.
 */
const avatarUrl = (name: string) => {
  let initials = "";
  for (const word of name.split(" ")) {
    if (word === "") continue;
    const first = String.fromCodePoint(word.codePointAt(0)!);
    const initial = isAsciiAlphanumeric(word.charCodeAt(0)) ? first : encodeURIComponent(first);
    initials = initials === "" ? initial : `${initials}+${initial}`;
  }
  return `https://ui-avatars.com/api/?name=${initials}&color=2563eb&background=eff6ff`;
};

export default defineResource({
  name: "user",
  model: "User",
  path: "users",
  fields: {
    name: string({ required: true }),
    email: string({ private: true, required: true, unique: true, pattern: /^[^\s@]+@[^\s@]+\.[^\s@]+$/ }),
    emailVerifiedAt: datetime({ private: true }),
    positionId: ref("position"),
    rankId: ref("rank"),
    specialtyId: ref("specialty"),
    statusId: ref("status"),
    unitId: ref("unit"),
    approved: bool(),
    notes: text({ private: true }),
    notesUpdatedAt: datetime({ private: true, writable: false }),
    profilePhoto: string({ nullable: true, writable: false }),
    coverPhoto: string({ nullable: true, writable: false }),
    lastSeenAt: datetime({ private: true }),
    discordUserId: string({ private: true, nullable: true }),
    facebookUserId: string({ private: true, nullable: true }),
    githubUserId: string({ private: true, nullable: true }),
    googleUserId: string({ private: true, nullable: true }),
  },
  computed: {
    displayName: { type: "string", needs: ["name"], resolve: (row) => row.name },
    online: { type: "boolean", needs: [], resolve: () => false },
    profilePhotoUrl: {
      type: "string",
      needs: ["profilePhoto", "name"],
      resolve: (row, ctx) => fileUrl(ctx, row.profilePhoto) ?? avatarUrl(row.name ?? ""),
    },
    coverPhotoUrl: urlOf<"User">("coverPhoto"),
    lastAssignmentChangeDate: {
      type: "datetime",
      nullable: true,
      needs: ["id"],
      readsOtherRows: true,
      resolve: (row, ctx) => latestRecordsOf(ctx, row.id).then((d) => d.assignment),
    },
    lastRankChangeDate: {
      type: "datetime",
      nullable: true,
      needs: ["id"],
      readsOtherRows: true,
      resolve: (row, ctx) => latestRecordsOf(ctx, row.id).then((d) => d.rank),
    },
  },
  uploads: {
    profilePhoto: { column: "profilePhoto", dir: "profile-photos", image: true },
    coverPhoto: { column: "coverPhoto", dir: "cover-photos", image: true },
  },
  relations: {
    position: belongsTo({ target: "position", foreignKey: "positionId" }),
    rank: belongsTo({ target: "rank", foreignKey: "rankId" }),
    specialty: belongsTo({ target: "specialty", foreignKey: "specialtyId" }),
    status: belongsTo({ target: "status", foreignKey: "statusId" }),
    unit: belongsTo({ target: "unit", foreignKey: "unitId" }),
    rank_records: hasMany({ target: "rankRecord", field: "rankRecords", foreignKey: "userId", orderBy: newestFirst }),
    assignment_records: hasMany({
      target: "assignmentRecord",
      field: "assignmentRecords",
      foreignKey: "userId",
      orderBy: newestFirst,
    }),
    primary_assignment_records: hasMany({
      target: "assignmentRecord",
      field: "assignmentRecords",
      foreignKey: "userId",
      orderBy: newestFirst,
      filter: {
        name: "primaryAssignmentRecords",
        where: { type: "primary" },
      },
    }),
    secondary_assignment_records: hasMany({
      target: "assignmentRecord",
      field: "assignmentRecords",
      foreignKey: "userId",
      orderBy: newestFirst,
      filter: {
        name: "secondaryAssignmentRecords",
        where: { type: "secondary" },
      },
    }),
    award_records: hasMany({
      target: "awardRecord",
      field: "awardRecords",
      foreignKey: "userId",
      orderBy: newestFirst,
    }),
    combat_records: hasMany({
      target: "combatRecord",
      field: "combatRecords",
      foreignKey: "userId",
      orderBy: newestFirst,
    }),
    qualification_records: hasMany({
      target: "qualificationRecord",
      field: "qualificationRecords",
      foreignKey: "userId",
      orderBy: newestFirst,
    }),
    service_records: hasMany({
      target: "serviceRecord",
      field: "serviceRecords",
      foreignKey: "userId",
      orderBy: newestFirst,
    }),
    training_records: hasMany({
      target: "trainingRecord",
      field: "trainingRecords",
      foreignKey: "userId",
      orderBy: newestFirst,
    }),
    attachments: morphMany({ target: "attachment", field: "attachments" }),
    fields: belongsToMany({
      target: "field",
      field: "fieldLinks",
      pivot: {
        model: "FieldLink",
        parentKey: "userId",
        relatedKey: "fieldId",
        related: "field",
        as: "fields",
        fields: { order: { type: "int" } },
        orderBy: [{ order: "asc" }, { id: "asc" }],
      },
    }),
    status_records: belongsToMany({
      target: "status",
      field: "statusRecords",
      pivot: {
        model: "StatusRecord",
        parentKey: "userId",
        relatedKey: "statusId",
        related: "status",
        as: "record",
        duplicates: true,
        fields: { text: { type: "text", nullable: true, max: 65535 } },
        orderBy: newestFirst,
      },
    }),
    tasks: belongsToMany({ target: "task", field: "taskAssignments", pivot: taskAssignmentPivot("userId") }),
    roles: belongsToMany({
      target: "role",
      field: "roleLinks",
      pivot: {
        model: "UserRole",
        parentKey: "userId",
        relatedKey: "roleId",
        related: "role",
        as: "link",
        fields: {},
        description: "The person holds the role.",
      },
    }),
  },
  includes: [
    ...recordIncludes("assignment_records"),
    "attachments",
    ...recordIncludes("award_records"),
    "award_records.award.*",
    ...recordIncludes("combat_records"),
    "fields",
    "position",
    ...recordIncludes("primary_assignment_records"),
    ...recordIncludes("qualification_records"),
    "rank",
    "rank.*",
    ...recordIncludes("secondary_assignment_records"),
    ...recordIncludes("rank_records"),
    "roles",
    ...recordIncludes("service_records"),
    "specialty",
    "status",
    ...recordIncludes("training_records"),
    "unit",
    "unit.*",
  ],
  hooks: {
    beforeWrite({ data, existing }) {
      if ("notes" in data && data.notes !== existing?.notes) data.notesUpdatedAt = new Date();
    },
    afterCreate: giveDefaultRoles,
  },
  actions: [
    {
      path: "password",
      field: "setUserPassword",
      ability: "update",
      summary: "Set a user's password",
      description:
        "Sets (or replaces) the person's password, with which they sign in; answers the user. The password is stored only as a scrypt hash and never shown.",
      input: {
        password: string({
          required: true,
          max: PASSWORD_MAX_LENGTH,
          description: `The new password: ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters.`,
        }),
      },
    },
    {
      path: "invitation",
      field: "createUserInvitation",
      ability: "update",
      summary: "Invite a user to choose a password",
      description:
        "Makes a one-time link with which the person chooses their password, usable once for 7 days, and answers it with its `url`, shown this once. Earlier unused invitations of the person stop working.",
      returns: "signInLink",
    },
  ],
  views: [
    {
      path: "me",
      field: "me",
      description: "The user the API key acts for (a page of one, or none).",
      operations: ["list"],
      scopes: [],
      where: (ctx) => ({ id: ctx.auth?.userId ?? -1 }),
    },
  ],
  nested: [
    recordsRoute("assignment-records", "assignment_record", "assignment_records", assignmentRecord.includes),
    recordsRoute("award-records", "award_record", "award_records", awardRecord.includes),
    recordsRoute("combat-records", "combat_record", "combat_records", combatRecord.includes),
    recordsRoute(
      "qualification-records",
      "qualification_record",
      "qualification_records",
      qualificationRecord.includes,
    ),
    recordsRoute("rank-records", "rank_record", "rank_records", rankRecord.includes),
    recordsRoute("service-records", "service_record", "service_records", serviceRecord.includes),
    recordsRoute("training-records", "training_record", "training_records", trainingRecord.includes),
    currentRoute("position"),
    currentRoute("rank", ["image"]),
    currentRoute("specialty"),
    currentRoute("unit", ["image"]),
    currentRoute("status"),
    {
      path: "fields",
      param: "field",
      relation: "fields",
      operations: m2mOperations,
      includes: { batchUpdate: [], pivot: [] },
    },
    {
      path: "status-records",
      param: "status_record",
      relation: "status_records",
      operations: m2mOperations,
      includes: sameIncludes(m2mOperations, ["record"]),
    },
    {
      path: "tasks",
      param: "task",
      relation: "tasks",
      operations: m2mOperations,
      includes: sameIncludes(m2mOperations, ["assignment", "attachments"]),
    },
    {
      path: "roles",
      param: "role",
      relation: "roles",
      operations: ["list", "show", "attach", "detach", "sync", "toggle"],
      includes: sameIncludes(["list", "show", "attach", "detach", "sync", "toggle"], []),
    },
    // The relation is a morphMany; attach/detach/sync/toggle set or clear the attachment's owner.
    {
      path: "attachments",
      param: "attachment",
      relation: "attachments",
      operations: m2mOperations,
      includes: sameIncludes(m2mOperations, []),
    },
  ],
});
