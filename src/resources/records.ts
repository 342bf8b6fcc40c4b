import {
  belongsTo,
  defineResource,
  morphMany,
  oneOf,
  ref,
  text,
  type Hooks,
  type InsertedRow,
  type InsertValues,
  type ModelRow,
  type RecordWrites,
  type RelationDef,
} from "./define.ts";
import { assignmentType } from "./enums.ts";
import { addNewsfeedItem } from "./newsfeed.ts";
import { rememberedName } from "../db/transaction-names.ts";
import type { StoreTransaction } from "../db/transaction.ts";

/** Relations every service record type shares. */
export const recordRelations = (): Record<string, RelationDef> => ({
  user: belongsTo({ target: "user", foreignKey: "userId" }),
  author: belongsTo({ target: "user", foreignKey: "authorId", field: "author" }),
  document: belongsTo({ target: "document", foreignKey: "documentId" }),
  attachments: morphMany({ target: "attachment", field: "attachments" }),
  comments: morphMany({ target: "comment", field: "comments" }),
});

export const recordIncludes = [
  "attachments",
  "author",
  "author.*",
  "comments",
  "comments.*",
  "document",
  "user",
  "user.*",
];
export const recordOrder: Record<string, "asc" | "desc">[] = [{ createdAt: "desc" }, { id: "desc" }];
export const recordFields = () => ({
  userId: ref("user", { required: true }),
  documentId: ref("document"),
  authorId: ref("user", { defaultsToCaller: true }),
  text: text(),
});

/** A record's includes under `/users/{user}/...`: everything but the user it belongs to. */
export const withoutUser = (includes: readonly string[]) =>
  includes.filter((i) => i !== "user" && !i.startsWith("user."));

type Tx = StoreTransaction;
/** The models of service records: each belongs to a user and has a text. */
type RecordModel =
  | "AssignmentRecord"
  | "AwardRecord"
  | "CombatRecord"
  | "QualificationRecord"
  | "RankRecord"
  | "ServiceRecord"
  | "TrainingRecord";

/**
 * Hooks of a record type: `effect` (a change the record makes to its user), then an item on the account's newsfeed
 * whose headline `headline` words from the user's name and the row, written right behind the record (`afterInsert`:
 * in the same round trip where statements pipeline). The effect is written before the record itself:
 * the update locks the user's row, so records of one user written side by side (PostgreSQL) get their ids in the order
 * their effects apply, and the user ends with the effect of the latest record.
 */
export function recordHooks<M extends RecordModel>(
  model: M,
  headline: (user: string, row: InsertedRow<M>, tx: Tx) => Promise<string> | string,
  effect?: (row: InsertValues<M>, writes: RecordWrites) => Promise<void>,
): Hooks<M> {
  return {
    independent: true,
    beforeInsert: effect && (({ row, writes }) => effect(row, writes)),
    async afterInsert({ row, ctx, tx, writes }) {
      // The columns every record model has (M is one of them; the compiler does not resolve RowOf<M> for a generic M).
      const record = row as ModelRow<RecordModel>;
      const user = await nameOf(tx, "User", record.userId);
      await addNewsfeedItem(writes, ctx, {
        event: "created",
        subjectType: `App\\Models\\${model}`,
        subjectId: row.id,
        description: "created",
        headline: await headline(user ?? "A user", row, tx),
        text: record.text ?? null,
      });
    },
  };
}

/** Name of the row `id` of `model` (`Rank`), or null; a name the transaction has read already is reused. */
export const nameOf = async (
  tx: Tx,
  model: "Award" | "Qualification" | "Rank" | "Unit" | "User",
  id: number | null | undefined,
): Promise<string | null> =>
  id == null
    ? null
    : (rememberedName(tx, model, id) ??
      ((await tx.findUnique(model, { where: { id }, select: { name: true } }))?.name as string | undefined) ??
      null);

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
    type: oneOf(assignmentType, { required: true }),
  },
  relations: {
    ...recordRelations(),
    position: belongsTo({ target: "position", foreignKey: "positionId" }),
    specialty: belongsTo({ target: "specialty", foreignKey: "specialtyId" }),
    status: belongsTo({ target: "status", foreignKey: "statusId" }),
    unit: belongsTo({ target: "unit", foreignKey: "unitId" }),
  },
  includes: [...recordIncludes, "position", "specialty", "status", "unit", "unit.*"],
  orderBy: recordOrder,
  hooks: recordHooks(
    "AssignmentRecord",
    async (user, row, tx) => {
      const unit = await nameOf(tx, "Unit", row.unitId);
      return `${user} received a new ${row.type} assignment${unit ? ` to ${unit}` : ""}`;
    },
    async (row, writes) => {
      if (row.type !== "primary") return;
      const data: Record<string, number> = {};
      for (const key of ["positionId", "specialtyId", "unitId", "statusId"] as const) {
        const value = row[key];
        if (value != null) data[key] = value;
      }
      // userId is required on create: always set here.
      if (Object.keys(data).length && row.userId != null) await writes.update("user", row.userId, data);
    },
  ),
});

export const awardRecord = defineResource({
  name: "awardRecord",
  model: "AwardRecord",
  path: "award-records",
  fields: { ...recordFields(), awardId: ref("award", { required: true }) },
  relations: { ...recordRelations(), award: belongsTo({ target: "award", foreignKey: "awardId" }) },
  includes: [...recordIncludes, "award", "award.image"],
  orderBy: recordOrder,
  hooks: recordHooks("AwardRecord", async (user, row, tx) => {
    const award = await nameOf(tx, "Award", row.awardId);
    return `${user} was awarded ${award ? `the ${award}` : "an award"}`;
  }),
});

/** A record that is its text: combat and service records. */
const narrativeRecord = (name: string, model: "CombatRecord" | "ServiceRecord", path: string, kind: string) =>
  defineResource({
    name,
    model,
    path,
    fields: { ...recordFields(), text: text({ required: true, nullable: false }) },
    relations: recordRelations(),
    includes: recordIncludes,
    orderBy: recordOrder,
    hooks: recordHooks(model, (user) => `${user} received a new ${kind} record`),
  });

export const combatRecord = narrativeRecord("combatRecord", "CombatRecord", "combat-records", "combat");

export const qualificationRecord = defineResource({
  name: "qualificationRecord",
  model: "QualificationRecord",
  path: "qualification-records",
  fields: { ...recordFields(), qualificationId: ref("qualification", { required: true }) },
  relations: {
    ...recordRelations(),
    qualification: belongsTo({ target: "qualification", foreignKey: "qualificationId" }),
  },
  includes: [...recordIncludes, "qualification", "qualification.image"],
  orderBy: recordOrder,
  hooks: recordHooks("QualificationRecord", async (user, row, tx) => {
    const qualification = await nameOf(tx, "Qualification", row.qualificationId);
    return qualification ? `${user} earned the ${qualification} qualification` : `${user} earned a qualification`;
  }),
});

export const serviceRecord = narrativeRecord("serviceRecord", "ServiceRecord", "service-records", "service");

export const trainingRecord = defineResource({
  name: "trainingRecord",
  model: "TrainingRecord",
  path: "training-records",
  fields: { ...recordFields(), instructorId: ref("user", { required: true }) },
  relations: {
    ...recordRelations(),
    instructor: belongsTo({ target: "user", foreignKey: "instructorId", field: "instructor" }),
  },
  includes: [...recordIncludes, "instructor", "instructor.*"],
  orderBy: recordOrder,
  hooks: recordHooks("TrainingRecord", async (user, row, tx) => {
    const instructor = await nameOf(tx, "User", row.instructorId);
    return `${user} completed training${instructor ? ` with ${instructor}` : ""}`;
  }),
});
