import {
  belongsTo,
  defineResource,
  ref,
  string,
  text,
  type ColumnOf,
  type ComputedField,
  type ModelName,
} from "./define.ts";
import type { Context } from "../request/context.ts";

/** Absolute URL of a stored file, from the configured public URL or the request's own origin. */
export const fileUrl = (ctx: Context, storedPath: string | null | undefined): string | null =>
  storedPath ? `${ctx.baseUrl}/files/${storedPath.split("/").map(encodeURIComponent).join("/")}` : null;

/** The URL of the file whose stored path is in `column` (a string column of `M`). */
export const urlOf = <M extends ModelName>(column: ColumnOf<M>): ComputedField<M> => ({
  type: "string",
  nullable: true,
  needs: [column],
  resolve: (row, ctx) => {
    const path = row[column];
    return fileUrl(ctx, typeof path === "string" ? path : null);
  },
});

const morphFields = () => ({
  modelType: string({ nullable: true }),
  modelId: { type: "int" as const, nullable: true },
});

export const comment = defineResource({
  name: "comment",
  model: "Comment",
  path: "comments",
  fields: {
    authorId: ref("user", { defaultsToCaller: true }),
    ...morphFields(),
    comment: text({ required: true, nullable: false }),
  },
  relations: {
    author: belongsTo({ target: "user", foreignKey: "authorId", field: "author" }),
    commentable: { kind: "morphTo", field: "commentable", morphRelation: "comment" },
  },
  includes: ["author", "commentable"],
});

export const image = defineResource({
  name: "image",
  model: "Image",
  path: "images",
  fields: {
    name: string({ required: true }),
    description: text(),
    filename: string({ nullable: true, writable: false }),
    path: string({ nullable: true, writable: false }),
    ...morphFields(),
  },
  computed: { imageUrl: urlOf<"Image">("path") },
  uploads: { image: { column: "path", filenameColumn: "filename", dir: "images", image: true, required: true } },
  relations: { model: { kind: "morphTo", field: "model", morphRelation: "image" } },
  includes: ["model"],
});

export const attachment = defineResource({
  name: "attachment",
  model: "Attachment",
  path: "attachments",
  fields: {
    name: string({ required: true }),
    filename: string({ nullable: true, writable: false }),
    path: string({ nullable: true, writable: false }),
    ...morphFields(),
  },
  computed: { attachmentUrl: urlOf<"Attachment">("path") },
  uploads: { file: { column: "path", filenameColumn: "filename", dir: "attachments", image: false, required: true } },
  relations: { model: { kind: "morphTo", field: "model", morphRelation: "attachment" } },
  includes: ["model"],
});
