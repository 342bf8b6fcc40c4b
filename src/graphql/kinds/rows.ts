import type { GraphQLResolveInfo } from "graphql";
import { queryFromInfo } from "@pothos/plugin-prisma";
import type { ResourceDef } from "../../resources/define.ts";
import { resourceDescription } from "../../resources/descriptions.ts";
import { pascal, withArticle } from "../../core/names.ts";
import { registerRootField } from "../relation-scopes.ts";
import { isOneToOne, pivotOf as pivotOfOp, type Operation } from "../../resources/operations.ts";
import { linkResourceOf } from "../../resources/index.ts";
import { ApiError, notFound, validationError } from "../../core/errors.ts";
import { snake } from "../../core/names.ts";
import { findOwned, findParent, guard, owned } from "../../data/access.ts";
import { createRow, deleteRows, inTransaction, updateRow } from "../../data/write.ts";
import { updateTracked } from "../../data/tracked.ts";
import { writesIndependently } from "../../data/independent-writes.ts";
import * as link from "../../data/links.ts";
import type { StoreReads } from "../../db/store-reads.ts";
import type { Context } from "../../request/context.ts";
import { actionInputType, runAction } from "../actions.ts";
import {
  childKeys,
  idArg,
  idOf,
  inputArg,
  intArg,
  INTERNAL,
  nestedRow,
  rowArg,
  pivotOf,
  rowsDef,
  rowsQuery,
  type Args,
  type FacadeKind,
  type PublicParts,
  publicNames,
  type Row,
  parentVerb,
} from "./shared.ts";

/*
 * The single-row kinds: show, create, update, delete, associate, dissociate (PERSCOM's nested relation routes) and
 * action, each answering one row (a many-to-many route's: its link row).
 */

/** What a single-row kind's resolver is given besides its arguments: how to answer the row it wrote. */
interface Written {
  query: object;
  /** The row with `id`, read again as the selection asks. */
  refetch(tx: StoreReads, id: number): Promise<Row>;
  /** A row just written carries every column; it is read again only for the relations the selection includes. */
  current(tx: StoreReads, row: Row): Row | Promise<Row>;
  independence: { independent: boolean };
}
type RowResolver = (op: Operation, a: Args, ctx: Context, w: Written) => Promise<unknown>;

/** A single-row kind: its resolver in a field answering the row (`rowField`). */
const rowKind = (kind: Omit<FacadeKind, "field">, resolve: RowResolver): FacadeKind => ({
  ...kind,
  field: (t, op, p) =>
    t.field({
      ...INTERNAL,
      type: p.refs.objects.get(rowsDef(op).name),
      args: p.args,
      description: p.description,
      nullable: true,
      resolve: (_r: unknown, a: Args, ctx: Context, info: GraphQLResolveInfo) =>
        resolveOne(op, resolve, a, ctx, rowsQuery(ctx, info)),
    }),
});

/** Whether a person's self-service right to write may stand in for `op`'s scope: one row's own columns, no link's. */
const writesOneRow = (op: Operation) =>
  (op.kind === "create" || op.kind === "update") && op.parent?.relation.kind !== "belongsToMany";

async function resolveOne(op: Operation, resolve: RowResolver, a: Args, ctx: Context, query: object) {
  guard(ctx, op.scopes, writesOneRow(op));
  const rel = op.parent?.relation;
  const model = rel?.kind === "belongsToMany" ? pivotOf(op).model : op.def.model;
  const selected = (query as { select?: Row; include?: Row }).select ?? (query as { include?: Row }).include ?? {};
  const includesRelations = Object.values(selected).some((value) => value !== true && value !== false);
  const refetch = (tx: StoreReads, id: number) => tx.findUniqueOrThrow(model, { ...query, where: { id } });
  const current = (tx: StoreReads, row: Row) => (includesRelations ? refetch(tx, idOf(row)) : row);
  return resolve(op, a, ctx, { query, refetch, current, independence: { independent: writesIndependently(op) } });
}

/** The single row a view's `show` addresses (`/roster/{group}`). */
async function viewRow(op: Operation, a: Args, ctx: Context, query: object) {
  const row = await ctx.store.findFirst(op.def.model, {
    ...query,
    where: owned(ctx, op.def, { ...(op.view!.where?.(ctx) ?? {}), id: idArg(op, a) }),
  });
  if (!row) throw notFound();
  return row;
}

async function absentAsNull<T>(read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof ApiError && error.code === "NOT_FOUND") return null;
    throw error;
  }
}

const show = rowKind(
  {
    addressesRow: true,
    ofView: (w) => `One ${w.one} by id.`,
    summary: (op, w) =>
      op.parent && isOneToOne(op) ? `The ${w.parent}'s ${w.one}. ${w.what}` : `One ${w.one}${w.of} by id. ${w.what}`,
  },
  (op, a, ctx, { query }) =>
    // A missing row, or another account's, is null: the client cannot tell them apart (REST answers 404 for null).
    absentAsNull(async () => {
      if (op.view) return viewRow(op, a, ctx, query);
      return op.parent
        ? (await nestedRow(op, a, ctx, ctx.store, query)).row
        : findOwned(ctx, ctx.store, op.def, idArg(op, a)!, query);
    }),
);

/** `input` (and a many-to-many route's `pivot`) of create and update. */
const inputArgs =
  (create: boolean): FacadeKind["args"] =>
  (t, op, made, w) => {
    const pivot = pivotOfOp(op);
    return {
      input: t.arg({
        type: made.resourceInput(op.def),
        required: create,
        description: create
          ? `The new ${w.one}'s attributes.`
          : "The attributes to change; the others keep their values.",
      }),
      ...(made.pivotInput(pivot)
        ? { pivot: t.arg({ type: made.pivotInput(pivot), description: "Columns of the link to the parent." }) }
        : {}),
    };
  };

const create = rowKind(
  {
    summary: (op, w) =>
      op.parent ? `Creates a ${w.one} for a ${w.parent}. ${w.what}` : `Creates a ${w.one}. ${w.what}`,
    args: inputArgs(true),
  },
  (op, a, ctx, { refetch, current, independence }) =>
    inTransaction(
      ctx,
      async (tx) => {
        if (!op.parent) return current(tx, await createRow(ctx, tx, op.def, rowArg(a, "input")));
        const parentId = a[op.parent.def.param] as number;
        // The parent is looked up beside the body's checks (their statements share a round trip on PostgreSQL); a
        // missing parent is still the answer (404) over an invalid body.
        const parent = findParent(ctx, tx, op.parent.def, parentId);
        if (op.parent.relation.kind === "belongsToMany") {
          await parent;
          const pivot = pivotOf(op);
          const pivotValues = await link.pivotData(ctx, tx, pivot, inputArg(a, "pivot"), "pivot");
          const row = await createRow(ctx, tx, op.def, rowArg(a, "input"));
          return refetch(tx, (await link.createLink(ctx, tx, pivot, parentId, row.id, pivotValues)).id);
        }
        const keys = childKeys(op, { id: parentId });
        if (isOneToOne(op)) {
          await parent;
          if (await tx.count(op.def.model, { where: owned(ctx, op.def, keys) })) throw new ApiError("CONFLICT");
        }
        return current(tx, await createRow(ctx, tx, op.def, rowArg(a, "input"), keys, { alongside: parent }));
      },
      independence,
    ),
);

const update = rowKind(
  {
    addressesRow: true,
    summary: (_op, w) => `Changes a ${w.one}${w.of}: only the attributes given. ${w.what}`,
    args: inputArgs(false),
  },
  (op, a, ctx, { refetch, current, independence }) =>
    inTransaction(
      ctx,
      async (tx) => {
        if (!op.parent) {
          const existing = await findOwned(ctx, tx, op.def, idArg(op, a)!, {}, "update");
          return current(tx, await updateRow(ctx, tx, op.def, existing, inputArg(a, "input") ?? {}));
        }
        const { row } = await nestedRow(op, a, ctx, tx);
        if (op.parent.relation.kind !== "belongsToMany")
          return current(tx, await updateRow(ctx, tx, op.def, row, inputArg(a, "input") ?? {}));
        const pivot = pivotOf(op);
        const related = await findOwned(ctx, tx, op.def, row[pivot.relatedKey] as number, {}, null);
        await updateRow(ctx, tx, op.def, related, inputArg(a, "input") ?? {});
        const pivotValues = await link.pivotData(ctx, tx, pivot, inputArg(a, "pivot"), "pivot");
        if (Object.keys(pivotValues).length) await updateTracked(ctx, tx, linkResourceOf(pivot), row.id, pivotValues);
        return refetch(tx, row.id);
      },
      independence,
    ),
);

const remove = rowKind(
  {
    addressesRow: true,
    summary: (op, w) =>
      op.parent?.relation.kind === "belongsToMany"
        ? `Unlinks a ${w.one} from a ${w.parent} and answers it.`
        : `Deletes a ${w.one}${w.of} and answers it.`,
  },
  (op, a, ctx, { query }) =>
    inTransaction(ctx, async (tx) => {
      if (!op.parent) {
        const row = await findOwned(ctx, tx, op.def, idArg(op, a)!, query, "delete");
        await deleteRows(ctx, tx, op.def, [row.id]);
        return row;
      }
      const { parent, row } = await nestedRow(op, a, ctx, tx, query);
      if (op.parent.relation.kind === "belongsToMany") await link.removeLinked(ctx, tx, pivotOf(op), parent.id, [row]);
      else await deleteRows(ctx, tx, op.def, [row.id]);
      return row;
    }),
);

const associate = rowKind(
  {
    summary: (_op, w) => `Moves an existing ${w.one} under a ${w.parent}.`,
    args: (t, _op, _made, w) => ({
      relatedKey: t.arg.int({ required: true, description: `Id of the ${w.one} to move under the parent.` }),
    }),
  },
  (op, a, ctx, { refetch }) =>
    inTransaction(ctx, async (tx) => {
      const parent = await findOwned(ctx, tx, op.parent!.def, intArg(a, op.parent!.def.param), {}, parentVerb(op));
      const child = await tx.findFirst(op.def.model, {
        where: owned(ctx, op.def, { id: a.relatedKey }, null),
        select: { id: true },
      });
      if (!child)
        throw validationError({
          related_key: [`The selected ${op.def.label.toLowerCase()} ${a.relatedKey} is invalid.`],
        });
      await updateTracked(ctx, tx, op.def, child.id, childKeys(op, parent));
      return refetch(tx, child.id);
    }),
);

const dissociate = rowKind(
  {
    addressesRow: true,
    summary: (_op, w) => `Detaches a ${w.one} from its ${w.parent}, leaving the ${w.one} in place.`,
  },
  (op, a, ctx, { refetch }) =>
    inTransaction(ctx, async (tx) => {
      const { row } = await nestedRow(op, a, ctx, tx);
      const keys = Object.keys(childKeys(op, { id: 0 }));
      const required = keys.filter((k) => op.def.fields[k] && op.def.fields[k].nullable === false);
      if (required.length) {
        const names = required.map(snake);
        throw validationError({
          [names[0]]: [
            `A ${op.def.label.toLowerCase()} cannot exist without its ${op.parent!.def.label.toLowerCase()}: delete it instead.`,
          ],
        });
      }
      await updateTracked(ctx, tx, op.def, row.id, Object.fromEntries(keys.map((k) => [k, null])));
      return refetch(tx, row.id);
    }),
);

/** An action (`POST /users/{user}/...`): its work is `src/events/actions.ts`; it answers the row it names. */
const action = rowKind(
  {
    summary: (op) => op.action!.description,
    args: (t, op, _made, _words, builder) => {
      const input = actionInputType(builder, op);
      return {
        [op.subject!.param]: t.arg.int({
          required: true,
          description: `Id of the ${op.subject!.label.toLowerCase()}.`,
        }),
        ...(input ? { input: t.arg({ type: input, required: true, description: "The action's attributes." }) } : {}),
      };
    },
  },
  async (op, a, ctx, { query }) => {
    const id = await runAction(op, intArg(a, op.subject!.param), inputArg(a, "input"), ctx);
    return ctx.store.findFirst(op.def.model, { ...query, where: owned(ctx, op.def, { id }, null) });
  },
);

// ---- The public graph: `rank(rowId:)`, `createRank(input:)`, `updateRank(rowId:, input:)`, `deleteRank(rowId:)`, actions ----

/** A top-level show's lookup by row id (`rank(rowId:)`); a view's show has none in the public graph. */
function publicShow(p: PublicParts, show: Operation) {
  const def = show.def;
  if (show.view) return;
  const { b, one } = publicNames(p, def);
  b.queryField(def.name, (t) =>
    t.prismaField({
      type: def.model,
      nullable: true,
      description: p.withRoute(
        `One ${one} by its row id; null when there is none in the account. ${resourceDescription(def)}`,
        show,
      ),
      args: { rowId: t.arg.int({ required: true, description: `The ${one}'s row id (\`rowId\`).` }) },
      resolve: (query: object, _root: unknown, args: { rowId: number }, ctx: Context) => {
        guard(ctx, show.scopes);
        return ctx.store.findFirst(def.model, { ...query, where: owned(ctx, def, { id: args.rowId }) });
      },
    }),
  );
  registerRootField(def.name, { scopes: show.scopes, def });
}

/** `CreateRankPayload { rank }`: the row a single-row mutation answers. */
const rowPayload = (p: PublicParts, def: ResourceDef, verb: string) => {
  const { Name, one, node } = publicNames(p, def);
  return p.payload(
    `${verb}${Name}Payload`,
    (t) => ({
      [def.name]: t.field({
        type: node,
        nullable: true,
        description: `The ${one} as it is now${verb === "Delete" ? " gone (its last state)" : ""}.`,
        resolve: (r: { row: Row | null }) => r.row,
      }),
    }),
    `What ${verb.toLowerCase()}${verb.endsWith("e") ? "d" : "ed"} ${withArticle(one)} answers.`,
  );
};
/** The row with `id`, selected as the payload's field asks. */
const reread = (def: ResourceDef, ctx: Context, info: GraphQLResolveInfo, id: number, tx: StoreReads = ctx.store) =>
  tx.findFirst(def.model, {
    ...queryFromInfo({ context: ctx, info, typeName: pascal(def.name), path: [def.name] }),
    where: { id },
  });

function publicCreate(p: PublicParts, create: Operation) {
  const def = create.def;
  const { b, Name, one } = publicNames(p, def);
  const input = b.inputType(`Create${Name}Input`, {
    description: `A new ${one}: its attributes; the required ones are non-null.`,
    fields: (t) => p.inputFields(t, def, true),
  });
  b.mutationField(`create${Name}`, (t) =>
    t.field({
      type: rowPayload(p, def, "Create"),
      nullable: true,
      description: p.withRoute(`Creates ${withArticle(one)}. ${resourceDescription(def)}`, create),
      args: { input: t.arg({ type: input, required: true, description: `The new ${one}'s attributes.` }) },
      resolve: async (_root: unknown, args: { input: Row }, ctx: Context, info: GraphQLResolveInfo) => {
        guard(ctx, create.scopes, true);
        const row = await inTransaction(ctx, (tx) => createRow(ctx, tx, def, args.input));
        return { row: await reread(def, ctx, info, row.id) };
      },
    }),
  );
  registerRootField(`create${Name}`, { scopes: create.scopes, def });
}

function publicUpdate(p: PublicParts, update: Operation) {
  const def = update.def;
  const { b, Name, one } = publicNames(p, def);
  const patch = b.inputType(`${Name}Patch`, {
    description: `Changes to ${withArticle(one)}: only the attributes given change.`,
    fields: (t) => p.inputFields(t, def, false),
  });
  b.mutationField(`update${Name}`, (t) =>
    t.field({
      type: rowPayload(p, def, "Update"),
      nullable: true,
      description: p.withRoute(`Changes ${withArticle(one)}: only the attributes given.`, update),
      args: {
        rowId: t.arg.int({ required: true, description: `The ${one}'s row id.` }),
        input: t.arg({ type: patch, required: true, description: "The attributes to change." }),
      },
      resolve: async (_root: unknown, args: { rowId: number; input: Row }, ctx: Context, info: GraphQLResolveInfo) => {
        guard(ctx, update.scopes, true);
        const row = await inTransaction(ctx, async (tx) =>
          updateRow(ctx, tx, def, await findOwned(ctx, tx, def, args.rowId, {}, "update"), args.input),
        );
        return { row: await reread(def, ctx, info, row.id) };
      },
    }),
  );
  registerRootField(`update${Name}`, { scopes: update.scopes, def });
}

function publicDelete(p: PublicParts, remove: Operation) {
  const def = remove.def;
  const { b, Name, one } = publicNames(p, def);
  b.mutationField(`delete${Name}`, (t) =>
    t.field({
      type: rowPayload(p, def, "Delete"),
      nullable: true,
      description: p.withRoute(`Deletes ${withArticle(one)}.`, remove),
      args: { rowId: t.arg.int({ required: true, description: `The ${one}'s row id.` }) },
      resolve: (_root: unknown, args: { rowId: number }, ctx: Context, info: GraphQLResolveInfo) => {
        guard(ctx, remove.scopes);
        return inTransaction(ctx, async (tx) => {
          const row = await findOwned(
            ctx,
            tx,
            def,
            args.rowId,
            queryFromInfo({ context: ctx, info, typeName: Name, path: [def.name] }),
            "delete",
          );
          await deleteRows(ctx, tx, def, [row.id]);
          return { row };
        });
      },
    }),
  );
  registerRootField(`delete${Name}`, { scopes: remove.scopes, def });
}

function publicAction(p: PublicParts, op: Operation) {
  const { b, one } = publicNames(p, op.subject!);
  const answered = op.def;
  const input = actionInputType(p.builder, op);
  b.mutationField(op.field, (t) =>
    t.field({
      type: p.payload(
        `${pascal(op.field)}Payload`,
        (t) => ({
          [answered.name]: t.field({
            type: p.refs.objects.get(answered.name),
            nullable: true,
            description: `The ${answered.label.toLowerCase()} the action answers.`,
            resolve: (p: { row: Row | null }) => p.row,
          }),
        }),
        `What ${op.field} answers.`,
      ),
      nullable: true,
      description: p.withRoute(op.action!.description, op),
      args: {
        rowId: t.arg.int({ required: true, description: `The ${one}'s row id.` }),
        ...(input ? { input: t.arg({ type: input, required: true, description: "The action's attributes." }) } : {}),
      },
      resolve: async (
        _root: unknown,
        args: { rowId: number; input?: Row | null },
        ctx: Context,
        info: GraphQLResolveInfo,
      ) => {
        const id = await runAction(op, args.rowId, args.input, ctx);
        const query = queryFromInfo({ context: ctx, info, typeName: pascal(answered.name), path: [answered.name] });
        return {
          row: await ctx.store.findFirst(answered.model, { ...query, where: owned(ctx, answered, { id }, null) }),
        };
      },
    }),
  );
  registerRootField(op.field, { scopes: op.scopes, def: answered });
}

export const rowKinds = {
  show: { ...show, addPublic: publicShow },
  create: { ...create, addPublic: publicCreate },
  update: { ...update, addPublic: publicUpdate },
  delete: { ...remove, addPublic: publicDelete },
  associate,
  dissociate,
  action: { ...action, addPublic: publicAction },
} satisfies Record<string, FacadeKind>;
