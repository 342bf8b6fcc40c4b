import { belongsToMany, defineResource, json, type RecordWrites, type RowKind } from "./define.ts";
import { anyValue, jsonString, mapOf } from "./json-shapes.ts";
import { sameIncludes } from "./routes.ts";
import type { Context } from "../request/context.ts";
import type { InsertedId } from "../db/writer.ts";

const likeOperations: RowKind[] = ["list", "attach", "detach", "sync"];
/** The users who liked an item may be shown with these. */
const likeIncludes = [
  "assignment_records",
  "assignment_records.*",
  "award_records",
  "award_records.*",
  "combat_records",
  "combat_records.*",
  "position",
  "qualification_records",
  "rank",
  "rank_records",
  "rank_records.*",
  "service_records",
  "service_records.*",
  "specialty",
  "status",
  "unit",
  "unit.*",
];

export const newsfeedItem = defineResource({
  name: "newsfeedItem",
  model: "NewsfeedItem",
  label: "Newsfeed",
  scope: "newsfeed",
  path: "newsfeed",
  param: "newsfeed",
  plural: "newsfeed",
  operations: ["list"],
  fields: {
    logName: { type: "string", writable: false },
    description: { type: "string", writable: false },
    event: { type: "string", nullable: true, writable: false },
    subjectType: { type: "string", nullable: true, writable: false },
    subjectId: { type: "int", nullable: true, writable: false, morphType: "subjectType" },
    causerId: { type: "int", nullable: true, writable: false, references: "user" },
    headline: { type: "string", nullable: true, writable: false },
    text: { type: "text", nullable: true, writable: false },
    properties: json(
      mapOf(anyValue(), {
        properties: {
          headline: { shape: jsonString(), optional: true, nullable: true },
          text: { shape: jsonString(), optional: true, nullable: true },
        },
        description:
          "More about the item, keyed by name: the `headline` and `text` it was made with, and whatever an imported activity log recorded beside them.",
      }),
      { nullable: true, writable: false },
    ),
  },
  relations: {
    likes: belongsToMany({
      target: "user",
      field: "likes",
      pivot: {
        model: "NewsfeedLike",
        parentKey: "newsfeedItemId",
        relatedKey: "userId",
        related: "user",
        as: "pivot",
        fields: {},
        orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      },
    }),
  },
  includes: [],
  orderBy: [{ createdAt: "desc" }, { id: "desc" }],
  nested: [
    {
      path: "likes",
      param: "like",
      relation: "likes",
      operations: likeOperations,
      includes: sameIncludes(likeOperations, likeIncludes),
    },
  ],
});

export interface NewsfeedEntry {
  event: string;
  description: string;
  subjectType: string;
  /** The subject's id; an InsertedId when its INSERT has not answered yet (`Hooks.afterInsert`). */
  subjectId: number | InsertedId;
  headline: string;
  text: string | null;
}

/** Records something that happened in the account on its newsfeed. */
export async function addNewsfeedItem(writes: RecordWrites, ctx: Context, entry: NewsfeedEntry): Promise<void> {
  await writes.create("newsfeedItem", {
    ...entry,
    accountId: ctx.auth!.accountId,
    causerId: ctx.auth!.userId ?? null,
    properties: { headline: entry.headline, text: entry.text },
  });
}
