import type { GraphQLResolveInfo } from "graphql";
import { queryFromInfo } from "@pothos/plugin-prisma";
import type { ResourceDef } from "../../resources/define.ts";
import { ApiError } from "../../core/errors.ts";
import { pascal, pluralWords as plural } from "../../core/names.ts";
import { registerRootField } from "../relation-scopes.ts";
import type { PivotDef } from "../../resources/define.ts";
import { pivotOf as pivotOfOp, type Operation } from "../../resources/operations.ts";
import { linkResourceOf } from "../../resources/index.ts";
import { validationError } from "../../core/errors.ts";
import { capped, findOwned, guard, owned } from "../../data/access.ts";
import { createRow, deleteRows, inTransaction, updateRow } from "../../data/write.ts";
import { updateTracked } from "../../data/tracked.ts";
import * as link from "../../data/links.ts";
import type { StoreReads } from "../../db/store-reads.ts";
import type { StoreTransaction } from "../../db/transaction.ts";
import type { Context } from "../../request/context.ts";
import {
  camelPath,
  childKeys,
  idOf,
  inputArg,
  inputsArg,
  intArg,
  intsArg,
  INTERNAL,
  inputPathsOf,
  publicNames,
  renameFieldErrors,
  renamingErrors,
  rowsDef,
  rowsQuery,
  type Args,
  type FacadeKind,
  type PublicParts,
  type Row,
  parentVerb,
  verbOf,
} from "./shared.ts";

/*
 * The batch kinds: batchCreate, batchUpdate and batchDelete (`/ranks/batch`), one transaction for all the rows,
 * answering them in the order of the request.
 */

/** Batch items report their problems under `resources.<key>.<field>` (REST) and `<inputPath>.<field>` (GraphQL). */
const prefixed = <T>(prefix: string, work: Promise<T>, inputPath = prefix) =>
  renamingErrors(
    work,
    (k) => `${prefix}.${k}`,
    (k) => `${inputPath}.${camelPath(k)}`,
  );

/** The rows with `ids`, in that order. */
async function inOrder(tx: StoreReads, model: string, ids: number[], query: object) {
  const rows: Row[] = await tx.findMany(model, { ...query, where: { id: { in: ids } } });
  const byId = new Map(rows.map((r) => [r.id as number, r]));
  return ids.map((id) => byId.get(id)!);
}

/** What one batch kind does in its transaction, given the parent of a nested route and a many-to-many route's pivot. */
type BatchWork = (
  op: Operation,
  a: Args,
  ctx: Context,
  tx: StoreTransaction,
  parent: Row | null,
  pivot: PivotDef | undefined,
  query: object,
) => Promise<unknown>;

/** Batch create, update and delete: one transaction, all or nothing, results in request order. */
async function resolveBatch(op: Operation, work: BatchWork, a: Args, ctx: Context, query: object) {
  guard(ctx, op.scopes);
  capped(ctx, inputsArg<unknown>(a, "resources"));
  return inTransaction(ctx, async (tx) => {
    const parent = op.parent
      ? await findOwned(ctx, tx, op.parent.def, intArg(a, op.parent.def.param), {}, parentVerb(op))
      : null;
    return work(op, a, ctx, tx, parent, pivotOfOp(op), query);
  });
}

const createBatch: BatchWork = async (op, a, ctx, tx, parent, pivot, query) => {
  const ids: number[] = [];
  for (const [index, item] of inputsArg(a, "resources").entries()) {
    const input = pivot && "input" in item ? (inputArg(item, "input") ?? {}) : item;
    if (!pivot) {
      ids.push(
        (await prefixed(`resources.${index}`, createRow(ctx, tx, op.def, input, parent ? childKeys(op, parent) : {})))
          .id,
      );
      continue;
    }
    const pivotValues = await link.pivotData(ctx, tx, pivot, inputArg(item, "pivot"), `resources.${index}.pivot`);
    const row = await prefixed(`resources.${index}`, createRow(ctx, tx, op.def, input), `resources.${index}.input`);
    ids.push((await link.createLink(ctx, tx, pivot, idOf(parent!), row.id, pivotValues)).id);
  }
  return inOrder(tx, pivot ? pivot.model : op.def.model, ids, query);
};

/**
 * The rows a batch update or delete names (under the parent of a nested route), or 422 naming the missing ones:
 * REST by id, GraphQL by the item's position (`idPath`: the id itself, a delete's list, or an update item's `.id`).
 */
async function batchRows(
  op: Operation,
  ctx: Context,
  tx: StoreTransaction,
  parent: Row | null,
  items: Array<{ id: number }>,
  idPath: string,
  query: object,
) {
  const ids = [...new Set(items.map((i) => i.id))];
  const scope = !parent
    ? {}
    : op.parent!.relation.kind === "belongsTo"
      ? { id: parent[(op.parent!.relation as { foreignKey: string }).foreignKey] ?? -1 }
      : childKeys(op, parent);
  const found: Row[] = await tx.findMany(op.def.model, {
    ...query,
    where: owned(ctx, op.def, { ...scope, id: { in: ids } }, verbOf(op)),
  });
  const known = new Set(found.map((r) => r.id as number));
  const missing = ids.filter((id) => !known.has(id));
  if (missing.length) {
    const where = parent ? ` of this ${op.parent!.def.label.toLowerCase()}` : "";
    const message = (id: number) => [`The ${op.def.label.toLowerCase()} ${id} does not exist${where}.`];
    const error = validationError(Object.fromEntries(missing.map((id) => [`resources.${id}`, message(id)])));
    const at = (id: number) => `resources.${items.findIndex((i) => i.id === id)}${idPath}`;
    inputPathsOf.set(error, Object.fromEntries(missing.map((id) => [at(id), message(id)])));
    throw error;
  }
  return { ids, byId: new Map(found.map((r) => [r.id as number, r])) };
}

const updateBatch: BatchWork = async (op, a, ctx, tx, parent, pivot, query) => {
  if (pivot) return updateLinks(op, a, ctx, tx, parent!, pivot, query);
  const items = inputsArg<{ id: number; input?: Row | null }>(a, "resources");
  const { ids, byId } = await batchRows(op, ctx, tx, parent, items, ".id", query);
  for (const [index, item] of items.entries()) {
    await prefixed(
      `resources.${item.id}`,
      updateRow(ctx, tx, op.def, byId.get(item.id)!, item.input ?? {}),
      `resources.${index}.input`,
    );
  }
  return inOrder(tx, op.def.model, ids, query);
};

const deleteBatch: BatchWork = async (op, a, ctx, tx, parent, pivot, query) => {
  if (pivot) {
    const rows = await link.requireLinks(tx, pivot, idOf(parent!), intsArg(a, "resources"), query);
    await link.removeLinked(ctx, tx, pivot, idOf(parent!), rows);
    return rows;
  }
  const { ids, byId } = await batchRows(
    op,
    ctx,
    tx,
    parent,
    intsArg(a, "resources").map((id) => ({ id })),
    "",
    query,
  );
  await deleteRows(ctx, tx, op.def, ids);
  return ids.map((id) => byId.get(id)!);
};

async function updateLinks(
  op: Operation,
  a: Args,
  ctx: Context,
  tx: StoreTransaction,
  parent: Row,
  pivot: PivotDef,
  query: object,
) {
  const items = inputsArg<{ id: number; input?: Row | null; pivot?: Row | null }>(a, "resources");
  const rows = await link.requireLinks(
    tx,
    pivot,
    idOf(parent),
    items.map((i) => i.id),
  );
  const byRelated = new Map(rows.map((r) => [r[pivot.relatedKey] as number, r]));
  for (const [index, item] of items.entries()) {
    const related = await findOwned(ctx, tx, op.def, item.id, {}, null);
    await prefixed(
      `resources.${item.id}`,
      updateRow(ctx, tx, op.def, related, item.input ?? {}),
      `resources.${index}.input`,
    );
    const pivotValues = await link.pivotData(ctx, tx, pivot, item.pivot, `resources.${item.id}.pivot`);
    if (Object.keys(pivotValues).length)
      await updateTracked(ctx, tx, linkResourceOf(pivot), byRelated.get(item.id)!.id, pivotValues);
  }
  return tx.findMany(pivot.model, {
    ...query,
    where: { id: { in: rows.map((r) => r.id) } },
    orderBy: pivot.orderBy ?? [{ id: "asc" }],
  });
}

/** The rows' field of a batch kind doing `work`: a list of the resource's rows (a many-to-many route's: its link rows). */
const rowsField =
  (work: BatchWork): FacadeKind["field"] =>
  (t, op, p) =>
    t.field({
      ...INTERNAL,
      type: [p.refs.objects.get(rowsDef(op).name)],
      args: p.args,
      description: p.description,
      nullable: true,
      resolve: (_r: unknown, a: Args, ctx: Context, info: GraphQLResolveInfo) =>
        resolveBatch(op, work, a, ctx, rowsQuery(ctx, info)),
    });

// ---- The public graph: `createRanks(inputs:)`, `updateRanks(items:)`, `deleteRanks(rowIds:)` ----

/** `CreateRanksPayload { ranks }`: a batch's rows, in the order of the request. */
const rowsPayload = (p: PublicParts, def: ResourceDef, verb: string, rows: string, doing: string) => {
  const { Plural, node } = publicNames(p, def);
  return p.payload(
    `${verb}${Plural}Payload`,
    (t) => ({
      [def.plural]: t.field({ type: [node], description: `The ${rows}.`, resolve: (r: Row) => r.rows }),
    }),
    `What ${doing} several ${plural(def)} answers.`,
  );
};

/** The rows with these ids, selected as the field at `path` asks, in the ids' order (null for one not in the account). */
async function inRequestOrder(
  ctx: Context,
  info: GraphQLResolveInfo,
  def: ResourceDef,
  path: string,
  ids: number[],
  tx: StoreReads = ctx.store,
) {
  const rows: Row[] = await tx.findMany(def.model, {
    ...queryFromInfo({ context: ctx, info, typeName: pascal(def.name), path: [path] }),
    where: owned(ctx, def, { id: { in: ids } }, null),
  });
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id) ?? null);
}

/** A batch item whose row is not in the account: a validation error on its row id. */
function missingItem(error: unknown, at: string, def: ResourceDef, rowId: number): unknown {
  if (!(error instanceof ApiError) || error.code !== "NOT_FOUND") return error;
  return validationError({ [at]: [`The ${def.label.toLowerCase()} ${rowId} does not exist.`] });
}

/** A batch item's field errors under its input path (`inputs.2.name`). */
const atItem = (error: unknown, at: string): unknown => renameFieldErrors(error, (k) => `${at}.${camelPath(k)}`);

function publicBatchCreate(p: PublicParts, batch: Operation) {
  const def = batch.def;
  if (!p.topLevel(def, "create")) return;
  const { b, Name, Plural } = publicNames(p, def);
  b.mutationField(`create${Plural}`, (t) =>
    t.field({
      type: rowsPayload(p, def, "Create", `new ${plural(def)}, in the order of the inputs`, "creating"),
      nullable: true,
      description: p.withRoute(`Creates several ${plural(def)} in one transaction: all or none.`, batch),
      args: {
        inputs: t.arg({
          type: [`Create${Name}Input`],
          required: true,
          description: `The new ${plural(def)} (at most the server's batch limit).`,
        }),
      },
      resolve: async (_root: unknown, args: Args, ctx: Context, info: GraphQLResolveInfo) => {
        guard(ctx, batch.scopes);
        const ids = await inTransaction(ctx, async (tx) => {
          const made: number[] = [];
          for (const [i, input] of capped(ctx, args.inputs as Row[], "inputs").entries()) {
            made.push(
              (
                await createRow(ctx, tx, def, input).catch((e: unknown) => {
                  throw atItem(e, `inputs.${i}`);
                })
              ).id,
            );
          }
          return made;
        });
        return { rows: await inRequestOrder(ctx, info, def, def.plural, ids) };
      },
    }),
  );
  registerRootField(`create${Plural}`, { scopes: batch.scopes, def });
}

function publicBatchUpdate(p: PublicParts, batchUpdate: Operation) {
  const def = batchUpdate.def;
  if (!p.topLevel(def, "update")) return;
  const { b, Name, Plural, one } = publicNames(p, def);
  const item = b.inputType(`Update${Name}Item`, {
    description: `One ${one} of a batch update: its row id and the attributes to change.`,
    fields: (t) => ({
      rowId: t.int({ required: true, description: `The ${one}'s row id.` }),
      input: t.field({ type: `${Name}Patch`, required: true, description: "The attributes to change." }),
    }),
  });
  b.mutationField(`update${Plural}`, (t) =>
    t.field({
      type: rowsPayload(p, def, "Update", `changed ${plural(def)}, in the order of the items`, "changing"),
      nullable: true,
      description: p.withRoute(`Changes several ${plural(def)} in one transaction: all or none.`, batchUpdate),
      args: {
        items: t.arg({
          type: [item],
          required: true,
          description: `The ${plural(def)} to change (at most the server's batch limit).`,
        }),
      },
      resolve: async (_root: unknown, args: Args, ctx: Context, info: GraphQLResolveInfo) => {
        guard(ctx, batchUpdate.scopes);
        const items = capped(ctx, args.items as Array<{ rowId: number; input: Row }>, "items");
        await inTransaction(ctx, async (tx) => {
          for (const [i, { rowId, input }] of items.entries()) {
            const existing = await findOwned(ctx, tx, def, rowId, {}, "update").catch((e: unknown) => {
              throw missingItem(e, `items.${i}.rowId`, def, rowId);
            });
            await updateRow(ctx, tx, def, existing, input).catch((e: unknown) => {
              throw atItem(e, `items.${i}.input`);
            });
          }
        });
        return {
          rows: await inRequestOrder(
            ctx,
            info,
            def,
            def.plural,
            items.map((i) => i.rowId),
          ),
        };
      },
    }),
  );
  registerRootField(`update${Plural}`, { scopes: batchUpdate.scopes, def });
}

function publicBatchDelete(p: PublicParts, batchDelete: Operation) {
  const def = batchDelete.def;
  if (!p.topLevel(def, "delete")) return;
  const { b, Plural, one } = publicNames(p, def);
  b.mutationField(`delete${Plural}`, (t) =>
    t.field({
      type: rowsPayload(
        p,
        def,
        "Delete",
        `deleted ${plural(def)} (their last state), in the order of the row ids`,
        "deleting",
      ),
      nullable: true,
      description: p.withRoute(`Deletes several ${plural(def)} in one transaction: all or none.`, batchDelete),
      args: {
        rowIds: t.arg.intList({
          required: true,
          description: `Row ids of the ${plural(def)} to delete (at most the server's batch limit).`,
        }),
      },
      resolve: async (_root: unknown, args: Args, ctx: Context, info: GraphQLResolveInfo) => {
        guard(ctx, batchDelete.scopes);
        const rowIds = capped(ctx, [...new Set(args.rowIds as number[])], "rowIds");
        return inTransaction(ctx, async (tx) => {
          const rows = await inRequestOrder(ctx, info, def, def.plural, rowIds, tx);
          const missing = rowIds.filter((_, i) => !rows[i]);
          if (missing.length) {
            throw validationError(
              Object.fromEntries(
                missing.map((id) => [`rowIds.${rowIds.indexOf(id)}`, [`The ${one} ${id} does not exist.`]]),
              ),
            );
          }
          await deleteRows(ctx, tx, def, rowIds);
          return { rows };
        });
      },
    }),
  );
  registerRootField(`delete${Plural}`, { scopes: batchDelete.scopes, def });
}

export const batchKinds = {
  batchCreate: {
    summary: (op, w) =>
      `Creates several ${w.rows}${op.parent ? ` for a ${w.parent}` : ""} in one transaction: all or none.`,
    args: (t, op, made, w) => {
      const pivot = pivotOfOp(op);
      return {
        resources: t.arg({
          type: [made.pivotInput(pivot) ? made.newItemInput(op.def, pivot!) : made.resourceInput(op.def)],
          required: true,
          description: `The ${w.rows} to create, all or none (at most the server's batch limit).`,
        }),
      };
    },
    field: rowsField(createBatch),
    addPublic: publicBatchCreate,
  },
  batchUpdate: {
    summary: (_op, w) => `Changes several ${w.rows}${w.of} in one transaction: all or none.`,
    args: (t, op, made, w) => ({
      resources: t.arg({
        type: [made.batchItemInput(op.def, pivotOfOp(op))],
        required: true,
        description: `The ${w.rows} to update, all or none.`,
      }),
    }),
    field: rowsField(updateBatch),
    addPublic: publicBatchUpdate,
  },
  batchDelete: {
    summary: (_op, w) => `Deletes several ${w.rows}${w.of} in one transaction (all or none) and answers them.`,
    args: (t, _op, _made, w) => ({
      resources: t.arg.intList({ required: true, description: `Ids of the ${w.rows} to delete, all or none.` }),
    }),
    field: rowsField(deleteBatch),
    addPublic: publicBatchDelete,
  },
} satisfies Record<"batchCreate" | "batchUpdate" | "batchDelete", FacadeKind>;
