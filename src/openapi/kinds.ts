import type { OperationKind } from "../resources/define.ts";
import { isOneToOne, type Operation, type Returns } from "../resources/operations.ts";
import { feedParameters } from "./changes.ts";
import type { Schema } from "./schema.ts";

/*
 * The operation kinds in the OpenAPI document, two tables: each kind's summary, the error statuses and query
 * parameters it adds, and whether its body is required; each answer's (`Returns`) success body and its description.
 * The body schemas of the kinds are `Bodies.byKind` (src/openapi/bodies.ts), made with the document's components.
 */

export interface Words {
  /** The singular with its article: "a rank". */
  one: string;
  many: string;
  parent: string;
}

export interface OpenApiKind {
  /** The operation's summary, from the resource's words. */
  summary(w: Words): string;
  /** Error statuses beyond those of every operation, a path id's 404 and a body's 413 and 422. */
  errors?(op: Operation): number[];
  /** Query parameters after the path's and `include`. */
  parameters?(): Schema[];
  /** Whether the body is required, where it takes one (default yes); `fixed` are the columns the route sets. */
  bodyRequired?(op: Operation, fixed: string[]): boolean;
  /** Takes a multipart body too, where the resource stores uploads. */
  uploads?: boolean;
  /** A tag of its own (after a view's), instead of its resource's or route's. */
  tag?(op: Operation): { name: string; description: string };
}

/** The public routes' own tag: they need no credential. */
function publicTag() {
  return {
    name: "public",
    description:
      "Public pages: routes anyone may call without any credential (and alike with any), `/public/{account}/...`, the account named by its slug.",
  };
}

const pages = () => [{ $ref: "#/components/parameters/Page" }, { $ref: "#/components/parameters/Limit" }];

export const openapiKinds: Record<OperationKind, OpenApiKind> = {
  list: {
    summary: (w) => `List ${w.many}${w.parent}`,
    errors: () => [422],
    parameters: pages,
  },
  show: {
    summary: (w) => `Show ${w.one}${w.parent}`,
  },
  create: {
    summary: (w) => `Create ${w.one}${w.parent}`,
    errors: (op) => (isOneToOne(op) ? [409] : []),
    uploads: true,
    bodyRequired: (op, fixed) =>
      Object.entries(op.def.fields).some(([k, f]) => f.required && !fixed.includes(k)) ||
      Object.values(op.def.uploads ?? {}).some((u) => u.required),
  },
  update: {
    summary: (w) => `Update ${w.one}${w.parent}`,
    uploads: true,
    bodyRequired: () => false,
  },
  delete: {
    summary: (w) => `Delete ${w.one}${w.parent}`,
  },
  search: {
    summary: (w) => `Search ${w.many}${w.parent}`,
    errors: () => [422],
    parameters: pages,
    bodyRequired: () => false,
  },
  batchCreate: {
    summary: (w) => `Create several ${w.many}${w.parent}`,
  },
  batchUpdate: {
    summary: (w) => `Update several ${w.many}${w.parent}`,
    errors: () => [404],
  },
  batchDelete: {
    summary: (w) => `Delete several ${w.many}${w.parent}`,
    errors: () => [404],
  },
  associate: {
    summary: (w) => `Associate ${w.one}${w.parent}`,
    errors: () => [404],
  },
  dissociate: {
    summary: (w) => `Dissociate ${w.one}${w.parent}`,
  },
  attach: {
    summary: (w) => `Attach ${w.many}${w.parent}`,
  },
  detach: {
    summary: (w) => `Detach ${w.many}${w.parent}`,
  },
  sync: {
    summary: (w) => `Sync the ${w.many}${w.parent}`,
  },
  toggle: {
    summary: (w) => `Toggle ${w.many}${w.parent}`,
  },
  pivot: {
    summary: (w) => `Update the link columns of ${w.one}${w.parent}`,
  },
  command: {
    summary: () => "Run an account command",
  },
  feed: {
    summary: () => "List the account's changes",
    tag: (op) => ({
      name: op.def.plural,
      description: `The change feed: the account's ${op.def.label.toLowerCase()}s in order, \`${op.path}\`.`,
    }),
    errors: () => [422, 410],
    parameters: feedParameters,
  },
  action: {
    summary: (w) => `Act on ${w.one}`,
  },
  publicShow: {
    summary: () => "Show a public form",
    tag: publicTag,
  },
  publicSubmit: {
    summary: () => "Submit a public form",
    tag: publicTag,
    errors: () => [422],
  },
};

/** The success body of an answer: a row, rows or a page of them in `{data}`, or the answer's own shape. */
export type SuccessBody =
  | "item"
  | "list"
  | "page"
  | "status"
  | "result"
  | "changes"
  | "feed"
  | "publicForm"
  | "publicSubmission";

/** Each answer's success body and its response's description. */
export const answers: Record<Returns, { body: SuccessBody; description: string }> = {
  object: { body: "item", description: "The row." },
  link: { body: "item", description: "The row." },
  objects: { body: "list", description: "The rows." },
  links: { body: "list", description: "The rows." },
  page: { body: "page", description: "One page of rows." },
  linkPage: { body: "page", description: "One page of rows." },
  status: { body: "status", description: "The command ran." },
  result: { body: "result", description: "The command ran; its answer, shown only here." },
  changes: { body: "changes", description: "The related ids the operation changed." },
  feed: { body: "feed", description: "One page of the change feed." },
  publicForm: { body: "publicForm", description: "The public form and the fields to fill in." },
  publicSubmission: { body: "publicSubmission", description: "The submission was stored." },
};
