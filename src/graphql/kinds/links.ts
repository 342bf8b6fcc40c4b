import { queryFromInfo } from "@pothos/plugin-prisma";
import type { GraphQLResolveInfo } from "graphql";
import type { PivotDef, RelationDef, ResourceDef } from "../../resources/define.ts";
import { linkResourceOf, resourceNamed } from "../../resources/index.ts";
import { operations, pivotOf, type Operation } from "../../resources/operations.ts";
import { fieldDescription } from "../../resources/descriptions.ts";
import { capped, findOwned, guard } from "../../data/access.ts";
import { inTransaction } from "../../data/write.ts";
import type { StoreTransaction } from "../../db/transaction.ts";
import * as link from "../../data/links.ts";
import {
  dynamic,
  type ArgMap,
  type DynamicFieldBuilder,
  type InputFieldMap,
  type InputRef,
  type OutputRef,
} from "../pothos-dynamic.ts";
import type { Context } from "../../request/context.ts";
import { camel, pascal, pluralWords as plural, withArticle } from "../../core/names.ts";
import type { Builder } from "../builder.ts";
import { enumRef } from "../enums.ts";
import { scalarOf } from "../objects.ts";
import { registerRootField } from "../relation-scopes.ts";
import {
  camelPath,
  flagArg,
  idArg,
  inputArg,
  inputsArg,
  intArg,
  intsArg,
  INTERNAL,
  nestedRowOf,
  renamingErrors,
  type Args,
  type FacadeKind,
  type PublicParts,
  type Row,
  type Words,
  parentVerb,
} from "./shared.ts";

/*
 * The link kinds: attach, detach, sync, toggle and pivot, the operations that change which rows a parent is linked
 * to (a many-to-many relation's link rows, or a polymorphic relation's owner) and answer the related ids they
 * changed. One resolver (`changeLinks`) runs them for both graphs; this file has both graphs' arguments and fields.
 */

export type LinkKind = "attach" | "detach" | "sync" | "toggle" | "pivot";

/** What a link operation is asked, in the same words whichever graph asks it. */
export interface LinkRequest {
  parentId: number;
  /** The list the request works through, capped at the batch limit; `listName` names it in that error. */
  listed?: unknown[];
  listName?: string;
  /** attach, sync, toggle: the related rows to link, with their link columns. */
  items?: link.LinkItem[];
  /** detach: the related ids to unlink. */
  ids?: number[];
  /** pivot: the related row whose link columns change, and the columns. */
  relatedId?: number | null;
  columns?: Row;
  duplicates: boolean;
  detaching: boolean;
}

/** The keys of REST's answer to each link kind (the ids it reports), in order. */
export const changesOf: Record<LinkKind, Array<keyof link.PivotChanges>> = {
  attach: ["attached"],
  detach: ["detached"],
  sync: ["attached", "detached", "updated"],
  toggle: ["attached", "detached"],
  pivot: ["updated"],
};

type OnLinks = (
  ctx: Context,
  tx: StoreTransaction,
  pivot: PivotDef,
  parentId: number,
  req: LinkRequest,
) => Promise<link.PivotChanges>;
/** Each kind on a many-to-many relation's link rows. */
const onLinks: Record<LinkKind, OnLinks> = {
  attach: (ctx, tx, pivot, parentId, req) => link.attach(ctx, tx, pivot, parentId, req.items!, req.duplicates),
  detach: (ctx, tx, pivot, parentId, req) => link.detach(ctx, tx, pivot, parentId, req.ids!),
  sync: (ctx, tx, pivot, parentId, req) => link.sync(ctx, tx, pivot, parentId, req.items!, req.detaching),
  toggle: (ctx, tx, pivot, parentId, req) => link.toggle(ctx, tx, pivot, parentId, req.items!),
  pivot: (ctx, tx, pivot, parentId, req) =>
    link.updatePivot(ctx, tx, pivot, parentId, req.relatedId!, req.columns ?? {}),
};

type OnOwner = (
  op: Operation,
  ctx: Context,
  tx: StoreTransaction,
  parent: Row,
  req: LinkRequest,
) => Promise<link.PivotChanges>;
const owner = (op: Operation, parent: Row) => ({ type: op.parent!.def.morphClass, id: parent.id as number });
const moved =
  (kind: "attach" | "sync" | "toggle"): OnOwner =>
  (op, ctx, tx, parent, req) =>
    link.morphLinkChanges(
      ctx,
      tx,
      op.def,
      owner(op, parent),
      kind,
      req.items!.map((i) => i.id),
      req.detaching,
    );
/** Each kind on a polymorphic relation, which has no link rows: the children's owner changes; a pivot changes nothing. */
const onOwner: Record<LinkKind, OnOwner> = {
  attach: moved("attach"),
  sync: moved("sync"),
  toggle: moved("toggle"),
  detach: (op, ctx, tx, parent, req) =>
    link.morphLinkChanges(ctx, tx, op.def, owner(op, parent), "detach", req.ids!, req.detaching),
  pivot: async (op, ctx, tx, _parent, req) => {
    await nestedRowOf(op, req.parentId, req.relatedId, ctx, tx);
    return { attached: [], detached: [], updated: [req.relatedId!] };
  },
};

/**
 * Runs a link operation in one transaction, for either graph: `parentQuery` is what the parent's lookup selects, and
 * `rename` renames the field errors of the transaction's work (the link layer names its list `resources`).
 */
export async function changeLinks(
  op: Operation,
  ctx: Context,
  req: LinkRequest,
  parentQuery: object = {},
  rename?: (key: string) => string,
): Promise<link.PivotChanges> {
  guard(ctx, op.scopes);
  if (req.listed) capped(ctx, req.listed, req.listName);
  const pivot = pivotOf(op);
  const kind = op.kind as LinkKind;
  const work = inTransaction(ctx, async (tx) => {
    const parent = await findOwned(ctx, tx, op.parent!.def, req.parentId, parentQuery, parentVerb(op));
    return pivot ? onLinks[kind](ctx, tx, pivot, parent.id, req) : onOwner[kind](op, ctx, tx, parent, req);
  });
  return rename ? renamingErrors(work, rename) : work;
}

// ---- The REST facade (`restAttachUserRanks(user: 1, resources: [...])`) ----

/** The inputs the REST facade's link fields take (created by `src/graphql/operations.ts`, once per name). */
export interface LinkInputs {
  linkItemInput(pivot: PivotDef | undefined): InputRef;
  pivotInput(pivot: PivotDef | undefined): InputRef | null;
}

/** The REST facade's arguments of link kind `kind`, after the parent's id (and a pivot's related id). */
export function restLinkArgs(
  t: DynamicFieldBuilder,
  op: Operation,
  made: LinkInputs,
  rows: string,
  kind: LinkKind,
): ArgMap {
  const pivot = pivotOf(op);
  const morph = op.parent?.relation.kind === "morphMany" || op.parent?.relation.kind === "morphOne";
  const items = (description: string) => t.arg({ type: [made.linkItemInput(pivot)], required: true, description });
  const byKind: Record<LinkKind, () => ArgMap> = {
    detach: () => ({ resources: t.arg.intList({ required: true, description: `Ids of the ${rows} to unlink.` }) }),
    attach: () => ({
      resources: items(`The ${rows} to link.`),
      ...(!morph
        ? {
            duplicates: t.arg.boolean({
              description: "Link again rows already linked (default false: they are skipped).",
            }),
          }
        : {}),
    }),
    sync: () => ({
      resources: items(`The ${rows} to be linked afterwards.`),
      detaching: t.arg.boolean({ description: "Unlink the rows not listed (default true)." }),
    }),
    toggle: () => ({ resources: items(`The ${rows} to link if unlinked, or unlink if linked.`) }),
    pivot: () => ({
      pivot: t.arg({
        type: made.pivotInput(pivot) ?? "JSON",
        required: true,
        description: "The link columns to change.",
      }),
    }),
  };
  return byKind[kind]();
}

/** A REST facade field's arguments as a link request (`resources` is the list of whichever kind). */
const restRequest = (op: Operation, a: Args): LinkRequest => ({
  parentId: intArg(a, op.parent!.def.param),
  listed: Array.isArray(a.resources) ? a.resources : undefined,
  items: inputsArg<link.LinkItem>(a, "resources"),
  ids: intsArg(a, "resources"),
  relatedId: idArg(op, a),
  columns: inputArg(a, "pivot") ?? undefined,
  duplicates: flagArg(a, "duplicates") ?? false,
  detaching: flagArg(a, "detaching") ?? true,
});

/** `PivotChanges`, the REST facade's answer to every link kind. */
export function pivotChangesType(builder: Builder) {
  return dynamic(builder)
    .objectRef("PivotChanges")
    .implement({
      description: "Related ids a many-to-many operation attached, detached or updated.",
      fields: (t) => ({
        attached: t.field({
          type: ["Int"],
          description: "Ids of the related rows newly linked.",
          resolve: (c: link.PivotChanges) => c.attached,
        }),
        detached: t.field({
          type: ["Int"],
          description: "Ids of the related rows unlinked.",
          resolve: (c: link.PivotChanges) => c.detached,
        }),
        updated: t.field({
          type: ["Int"],
          description: "Ids of the related rows whose link columns changed.",
          resolve: (c: link.PivotChanges) => c.updated,
        }),
      }),
    });
}

/** The REST facade's root field of a link operation. */
export const restLinkField = (
  t: DynamicFieldBuilder,
  op: Operation,
  args: ArgMap,
  description: string,
  changes: OutputRef,
) =>
  t.field({
    ...INTERNAL,
    type: changes,
    args,
    description,
    nullable: true,
    resolve: (_root: unknown, a: Args, ctx: Context) => changeLinks(op, ctx, restRequest(op, a)),
  });

// ---- The public graph (`attachUserRanks(rowId: 1, items: [...])`, answering a payload) ----

const publicItems = new WeakMap<Builder, Map<string, InputRef>>();

/** `UserRankItem`-like inputs: a related row by row id, with the link's columns. */
function linkItemInput(builder: Builder, pivot: PivotDef, related: ResourceDef) {
  const made = publicItems.get(builder) ?? publicItems.set(builder, new Map()).get(builder)!;
  const name = `${pivot.model}${pascal(related.name)}Item`;
  const known = made.get(name);
  if (known) return known;
  const ref = dynamic(builder).inputType(name, {
    description: `A ${related.label.toLowerCase()} to link, with the columns of its link.`,
    fields: (t) => {
      const fields: InputFieldMap = {
        rowId: t.int({ required: true, description: `The ${related.label.toLowerCase()}'s row id.` }),
      };
      for (const [key, f] of Object.entries(pivot.fields)) {
        fields[key] = t.field({
          type: f.enum ? enumRef(builder, f.enum) : scalarOf(f),
          required: false,
          description: fieldDescription(linkResourceOf(pivot), key, f),
        });
      }
      return fields;
    },
  });
  made.set(name, ref);
  return ref;
}

/** A public item: a related row's id, and the link's columns. */
type PublicItem = Row & { rowId: number };
/** The public items (`{ rowId, ...columns }`) as the link layer's (`{ id, pivot }`). */
const asLinkItems = (items: PublicItem[]) =>
  items.map(({ rowId, ...columns }) => ({ id: rowId, ...(Object.keys(columns).length ? { pivot: columns } : {}) }));

/** Each kind in the public graph: what it does, its arguments after `rowId`, and its request. */
interface PublicKind {
  description(parent: ResourceDef, related: ResourceDef): string;
  args(t: DynamicFieldBuilder, item: InputRef, related: ResourceDef, parent: ResourceDef): ArgMap;
  /** The argument the link layer's `resources` is called in this graph (errors are renamed to it; a pivot's `items`). */
  list: "items" | "rowIds";
  request(args: Args): Omit<LinkRequest, "parentId" | "listName">;
}
const itemsArg = (t: DynamicFieldBuilder, item: InputRef, related: ResourceDef) => ({
  items: t.arg({
    type: [item],
    required: true,
    description: `The ${plural(related)} to link, with the link's columns.`,
  }),
});
const withItems = (args: Args) => {
  const items = inputsArg<PublicItem>(args, "items");
  return {
    listed: items,
    items: asLinkItems(items),
    duplicates: flagArg(args, "duplicates") ?? false,
    detaching: flagArg(args, "detaching") ?? true,
  };
};
const publicKinds: Record<LinkKind, PublicKind> = {
  attach: {
    description: (parent, related) => `Links ${plural(related)} to ${withArticle(parent.label.toLowerCase())}.`,
    args: (t, item, related) => ({
      ...itemsArg(t, item, related),
      duplicates: t.arg.boolean({ description: "Link again rows already linked (default false: they are skipped)." }),
    }),
    list: "items",
    request: withItems,
  },
  detach: {
    description: (parent, related) =>
      `Unlinks ${plural(related)} from ${withArticle(parent.label.toLowerCase())}; they stay.`,
    args: (t, _item, related) => ({
      rowIds: t.arg.intList({ required: true, description: `Row ids of the ${plural(related)} to unlink.` }),
    }),
    list: "rowIds",
    request: (args) => ({
      listed: intsArg(args, "rowIds"),
      ids: intsArg(args, "rowIds"),
      duplicates: false,
      detaching: true,
    }),
  },
  sync: {
    description: (parent, related) =>
      `Makes the ${parent.label.toLowerCase()}'s linked ${plural(related)} exactly the ones given (unless \`detaching\` is false).`,
    args: (t, item, related) => ({
      ...itemsArg(t, item, related),
      detaching: t.arg.boolean({ description: "Unlink the rows not listed (default true)." }),
    }),
    list: "items",
    request: withItems,
  },
  toggle: {
    description: (parent, related) =>
      `Links the given ${plural(related)} the ${parent.label.toLowerCase()} lacks and unlinks those it has.`,
    args: (t, item, related) => itemsArg(t, item, related),
    list: "items",
    request: withItems,
  },
  pivot: {
    description: (parent, related) =>
      `Changes the columns of ${withArticle(parent.label.toLowerCase())}'s link to one ${related.label.toLowerCase()}.`,
    args: (t, item, related) => ({
      item: t.arg({
        type: item,
        required: true,
        description: `The linked ${related.label.toLowerCase()} and the link columns to change.`,
      }),
    }),
    // The list capped is the one item.
    list: "items",
    request: (args) => {
      const { rowId, ...columns } = inputArg(args, "item") as PublicItem;
      return { listed: [args.item], relatedId: rowId, columns, duplicates: false, detaching: true };
    },
  },
};

/** The public graph's link mutations of `def`'s many-to-many relations. */
export function addPublicLinkMutations(p: PublicParts, def: ResourceDef) {
  for (const [key, rel] of Object.entries(def.relations)) {
    if (rel.kind === "belongsToMany") addRelationLinks(p, def, key, rel);
  }
}

/** What a public link mutation answers: the parent, read again, and the ids it changed. */
interface LinksPayload {
  parent: Row | null;
  changes: link.PivotChanges;
}

/** The public graph's link mutations of one many-to-many relation, one payload for all of them. */
function addRelationLinks(
  roots: PublicParts,
  def: ResourceDef,
  relationKey: string,
  rel: Extract<RelationDef, { kind: "belongsToMany" }>,
) {
  const { builder, refs } = roots;
  const b = dynamic(builder);
  const ops = operations.filter((op) => op.parent?.def === def && op.parent.relation === rel && op.kind in publicKinds);
  if (!ops.length) return;
  const pivot = rel.pivot;
  const related = resourceNamed(pivot.related);
  const Parent = pascal(def.name);
  const item = linkItemInput(builder, pivot, related);
  const result = roots.payload(
    `${Parent}${pascal(camel(relationKey))}LinksPayload`,
    (t) => ({
      [def.name]: t.field({
        type: refs.objects.get(def.name),
        nullable: true,
        description: `The ${def.label.toLowerCase()}, with its links as they are now.`,
        resolve: (p: LinksPayload) => p.parent,
      }),
      attachedRowIds: t.field({
        type: ["Int"],
        description: `Row ids of the ${plural(related)} newly linked.`,
        resolve: (p: LinksPayload) => p.changes.attached,
      }),
      detachedRowIds: t.field({
        type: ["Int"],
        description: `Row ids of the ${plural(related)} unlinked.`,
        resolve: (p: LinksPayload) => p.changes.detached,
      }),
      updatedRowIds: t.field({
        type: ["Int"],
        description: `Row ids of the ${plural(related)} whose link columns changed.`,
        resolve: (p: LinksPayload) => p.changes.updated,
      }),
    }),
    `What changing the ${plural(related)} linked to ${withArticle(def.label.toLowerCase())} answers: the changes, and the ${def.label.toLowerCase()} to read its links from.`,
  );
  for (const op of ops) {
    const kind = publicKinds[op.kind as LinkKind];
    const listName = kind.list;
    b.mutationField(op.field, (t) =>
      t.field({
        type: result,
        nullable: true,
        description: roots.withRoute(kind.description(def, related), op),
        args: {
          rowId: t.arg.int({ required: true, description: `The ${def.label.toLowerCase()}'s row id.` }),
          ...kind.args(t, item, related, def),
        },
        resolve: async (_root: unknown, args: Args, ctx: Context, info: GraphQLResolveInfo) => {
          const request: LinkRequest = { parentId: intArg(args, "rowId"), listName, ...kind.request(args) };
          const changes = await changeLinks(op, ctx, request, { select: { id: true } }, (k) =>
            camelPath(k.replace(/^resources\b/, listName)),
          );
          const parent = await ctx.store.findFirst(def.model, {
            ...queryFromInfo({ context: ctx, info, typeName: Parent, path: [def.name] }),
            where: { id: args.rowId },
          });
          return { parent, changes };
        },
      }),
    );
    registerRootField(op.field, { scopes: op.scopes, def });
  }
}

const linkSummaries: Record<LinkKind, (w: Words) => string> = {
  attach: (w) => `Links existing ${w.rows} to a ${w.parent}.`,
  detach: (w) => `Unlinks ${w.rows} from a ${w.parent}; the ${w.rows} stay.`,
  sync: (w) => `Makes the ${w.parent}'s linked ${w.rows} exactly the ones given (unless \`detaching\` is false).`,
  toggle: (w) => `Links the given ${w.rows} a ${w.parent} lacks and unlinks those it has.`,
  pivot: (w) => `Changes the columns of a ${w.parent}'s link to a ${w.one}.`,
};

const linkKind = (kind: LinkKind): FacadeKind => ({
  addressesRow: kind === "pivot",
  summary: (_op, w) => linkSummaries[kind](w),
  args: (t, op, made, w) => restLinkArgs(t, op, made, w.rows, kind),
  field: (t, op, p) => restLinkField(t, op, p.args, p.description, p.types.changes),
});

/** The link kinds in the REST facade. */
export const linkKinds = {
  attach: linkKind("attach"),
  detach: linkKind("detach"),
  sync: linkKind("sync"),
  toggle: linkKind("toggle"),
  pivot: linkKind("pivot"),
} satisfies Record<LinkKind, FacadeKind>;
