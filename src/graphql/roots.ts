import { brandWithType } from "@pothos/core";
import { decodeGlobalID } from "@pothos/plugin-relay";
import type { GraphQLResolveInfo } from "graphql";
import { queryFromInfo } from "@pothos/plugin-prisma";
import type { ResourceDef } from "../resources/define.ts";
import { resources, resourceNamed } from "../resources/index.ts";
import { operations, type Operation } from "../resources/operations.ts";
import { ApiError, validationError } from "../core/errors.ts";
import { capped, findOwned, guard, owned } from "../data/access.ts";
import { createRow, deleteRows, inTransaction, updateRow } from "../data/write.ts";
import type { StoreReads } from "../db/store.ts";
import { fieldDescription, resourceDescription } from "../resources/descriptions.ts";
import type { Builder } from "./builder.ts";
import type { Context } from "../request/context.ts";
import { enumRef } from "./enums.ts";
import { jsonInputType } from "./json-shapes.ts";
import { baseOrder, columnOf, scalarOf, type ObjectRefs } from "./objects.ts";
import { CONNECTION_PATHS, connectionArgs, connectionOf, cursorSelection, planPage, selectedNames, type ConnectionArgs } from "./connections.ts";
import { pascal, pluralWords, withArticle } from "../core/names.ts";
import { registerRootField } from "./relation-scopes.ts";
import { CHANGE_EVENT, changeEventNode } from "./changes.ts";
import { actionInputType, runAction } from "./actions.ts";
import { addPublicLinkMutations } from "./kinds/links.ts";
import { camelPath, renameFieldErrors } from "./kinds/shared.ts";

/*
 * The public graph's root fields, generated from the registry: `node`/`nodes`, `me`, one connection and one lookup
 * per resource, the views, and payload mutations (create, update, delete, batch create, and the link operations of
 * many-to-many relations). They run the same data layer as the REST facade's internal fields.
 */

type Row = Record<string, any>;
type Args = Record<string, any>;
const plural = pluralWords;

/** A root field's description: what it does, then the REST route that does the same and the scopes both need. */
const withRoute = (text: string, op: Operation | undefined) =>
  op ? `${text}\n\nREST: ${op.method} /{version}${op.path}${op.kind === "list" ? ` (and POST ${op.path}/search)` : ""} — scopes: ${op.scopes.join(", ") || "none"}` : text;

/** The top-level operation of `kind` on `def` (its scopes are the public field's). */
const topLevel = (def: ResourceDef, kind: Operation["kind"]) => operations.find((op) => op.def === def && op.kind === kind && !op.parent && !op.view);

export function addRootFields(builder: Builder, refs: ObjectRefs): void {
  const b = builder as any;
  const nodeTypes = new Map(resources.filter((d) => !d.link).map((d) => [pascal(d.name), d]));

  /**
   * The nodes of the caller's account, in the order asked, with one statement per type: a foreign id, a malformed one
   * and a type the key may not view are all null.
   */
  async function loadNodes(ctx: Context, ids: Array<{ typename: string; id: string }>, info: GraphQLResolveInfo) {
    guard(ctx, []);
    const wanted = new Map<string, number[]>();
    for (const { typename, id } of ids) {
      const def = nodeTypes.get(typename);
      const rowId = Number(id);
      if (!def || !Number.isSafeInteger(rowId)) continue;
      // A type read only under its parent (webhook deliveries) is viewed with its nested list's scopes.
      const show = topLevel(def, "show") ?? topLevel(def, "list") ?? operations.find((op) => op.def === def && op.kind === "list");
      // A key that may not view the type learns nothing of the row: null, as for a row that does not exist. (A selection
      // on the type itself, `... on User`, is refused before execution by the relation scopes, with FORBIDDEN.)
      if (show && !ctx.auth!.scopes.has("*") && show.scopes.some((s) => !ctx.auth!.scopes.has(s))) continue;
      wanted.set(typename, [...(wanted.get(typename) ?? []), rowId]);
    }
    const found = new Map<string, Row>();
    await Promise.all([...wanted].map(async ([typename, rowIds]) => {
      const def = nodeTypes.get(typename)!;
      const query = queryFromInfo({ context: ctx, info, typeName: typename });
      const rows: Row[] = await ctx.store.findMany(def.model, { ...query, where: owned(ctx, def, { id: { in: rowIds } }) });
      for (const row of rows) {
        brandWithType(row, typename as never);
        found.set(`${typename}:${row.id}`, row);
      }
    }));
    // Change events are no resource's rows: each is read from the outbox, shown if the key may see it.
    return Promise.all(ids.map(({ typename, id }) => (typename === CHANGE_EVENT ? changeEventNode(ctx, Number(id)) : found.get(`${typename}:${Number(id)}`) ?? null)));
  }
  const parseId = (global: string) => {
    try {
      return decodeGlobalID(global);
    } catch {
      return { typename: "", id: "" };
    }
  };

  const queryRef = b.queryType({ description: "Reads: every resource as a connection and by row id, any row by its global id, and the key's own user." });
  b.mutationType({ description: "Writes: create, update and delete every resource, batches, and the links of many-to-many relations; each answers a payload." });

  b.queryField("node", (t: any) => t.field({
    type: b.nodeInterfaceRef(), nullable: true,
    description: "The row with this global id, of any type; null when it does not exist or belongs to another account.",
    args: { id: t.arg.id({ required: true, description: "A global id (any row's `id`)." }) },
    resolve: async (_root: unknown, args: Args, ctx: Context, info: GraphQLResolveInfo) => (await loadNodes(ctx, [parseId(String(args.id))], info))[0],
  }));
  b.queryField("nodes", (t: any) => t.field({
    type: [b.nodeInterfaceRef()], nullable: { list: false, items: true },
    description: "The rows with these global ids, in the same order; null for each that does not exist or belongs to another account.",
    args: { ids: t.arg.idList({ required: true, description: `Global ids: at most the page maximum.` }) },
    resolve: (_root: unknown, args: Args, ctx: Context, info: GraphQLResolveInfo) => {
      if (args.ids.length > ctx.config.maxPageSize) throw validationError({ ids: [`ids must not have more than ${ctx.config.maxPageSize} items.`] });
      return loadNodes(ctx, (args.ids as string[]).map((id) => parseId(String(id))), info);
    },
  }));
  registerRootField("node", { scopes: [], anyType: true });
  registerRootField("nodes", { scopes: [], anyType: true });

  const user = resourceNamed("user");
  b.queryField("me", (t: any) => t.field({
    type: refs.objects.get("user"), nullable: true,
    description: "The user the API key acts for; null when the key acts for no user.",
    resolve: async (_root: unknown, _args: Args, ctx: Context, info: GraphQLResolveInfo) => {
      guard(ctx, []);
      if (ctx.auth!.userId == null) return null;
      return ctx.store.findFirst(user.model, { ...queryFromInfo({ context: ctx, info }), where: owned(ctx, user, { id: ctx.auth!.userId }) });
    },
  }));
  registerRootField("me", { scopes: [], def: user });

  for (const def of resources) {
    if (def.link) continue;
    const list = topLevel(def, "list");
    const show = topLevel(def, "show");
    if (list) addList(def.plural, def, list.scopes, () => ({}), withRoute(`The ${plural(def)} of the account, a page at a time (a connection). ${resourceDescription(def)}`, list));
    if (show) {
      b.queryField(def.name, (t: any) => t.prismaField({
        type: def.model, nullable: true,
        description: withRoute(`One ${def.label.toLowerCase()} by its row id; null when there is none in the account. ${resourceDescription(def)}`, show),
        args: { rowId: t.arg.int({ required: true, description: `The ${def.label.toLowerCase()}'s row id (\`rowId\`).` }) },
        resolve: (query: object, _root: unknown, args: Args, ctx: Context) => {
          guard(ctx, show.scopes);
          return ctx.store.findFirst(def.model, { ...query, where: owned(ctx, def, { id: args.rowId }) });
        },
      }));
      registerRootField(def.name, { scopes: show.scopes, def });
    }
    for (const view of def.views ?? []) {
      if (!view.operations.includes("list") || view.field === "me") continue;
      const viewList = operations.find((op) => op.view === view && op.kind === "list");
      addList(view.field, def, view.scopes, (ctx) => view.where?.(ctx) ?? {}, withRoute(view.description ?? resourceDescription(def), viewList));
    }
    addMutations(def);
  }

  function addList(name: string, def: ResourceDef, scopes: string[], fixed: (ctx: Context) => Row, description: string) {
    const base = baseOrder(def.orderBy, columnOf(def));
    b.queryField(name, (t: any) => t.field({
      // Nullable: a list that fails (a bad argument, a missing scope) leaves the other root fields' data standing.
      type: refs.connectionOf(def), nullable: true,
      args: connectionArgs(t, refs.filters, def, plural(def)),
      description,
      resolve: async (_root: unknown, args: ConnectionArgs, ctx: Context, info: GraphQLResolveInfo) => {
        guard(ctx, scopes);
        const plan = planPage(ctx, def, args, base);
        const own = owned(ctx, def, fixed(ctx));
        const query = queryFromInfo({ context: ctx, info, typeName: pascal(def.name), paths: CONNECTION_PATHS, select: cursorSelection(plan, selectedNames(info)) as never }) as Row;
        const rows = await ctx.store.findMany(def.model, { ...query, where: { AND: [own, ...plan.where] }, orderBy: plan.orderBy, take: plan.take, skip: plan.skip || undefined });
        let counted: Promise<number> | null = null;
        return connectionOf(rows, plan, () => (counted ??= ctx.store.count(def.model, { where: { AND: [own, ...plan.filter] } })));
      },
    }));
    registerRootField(name, { scopes, def });
  }

  function payload(name: string, fields: (t: any) => Record<string, unknown>, description: string) {
    return b.objectRef(name).implement({
      description,
      fields: (t: any) => ({
        ...fields(t),
        query: t.field({ type: queryRef, description: "The query root, to read anything else after the change in the same response.", resolve: () => ({}) }),
      }),
    });
  }

  function inputFields(t: any, def: ResourceDef, create: boolean) {
    const fields: Record<string, unknown> = {};
    for (const [key, f] of Object.entries(def.fields)) {
      if (f.writable === false || f.hidden) continue;
      const required = create && !!f.required && !f.defaultsToCaller && !f.autoOrder;
      const type = f.enum ? enumRef(builder, f.enum) : f.type === "json" ? jsonInputType(builder, f) : scalarOf(f);
      fields[key] = t.field({ type, required, description: fieldDescription(def, key, f) });
    }
    for (const [name, upload] of Object.entries(def.uploads ?? {})) {
      fields[name] = t.field({
        type: "File", required: create && !!upload.required,
        description: `The ${upload.image ? "image" : "file"} to upload (GraphQL multipart request).`,
      });
    }
    return fields;
  }

  function addMutations(def: ResourceDef) {
    const Name = pascal(def.name);
    const one = def.label.toLowerCase();
    const node = refs.objects.get(def.name);
    const create = topLevel(def, "create");
    const update = topLevel(def, "update");
    const remove = topLevel(def, "delete");
    const batch = topLevel(def, "batchCreate");
    const rowPayload = (verb: string) => payload(`${verb}${Name}Payload`, (t: any) => ({
      [def.name]: t.field({ type: node, nullable: true, description: `The ${one} as it is now${verb === "Delete" ? " gone (its last state)" : ""}.`, resolve: (p: Row) => p.row }),
    }), `What ${verb.toLowerCase()}${verb.endsWith("e") ? "d" : "ed"} ${withArticle(one)} answers.`);
    const reread = (ctx: Context, info: GraphQLResolveInfo, id: number, tx: StoreReads = ctx.store) =>
      tx.findFirst(def.model, { ...queryFromInfo({ context: ctx, info, typeName: Name, path: [def.name] }), where: { id } });

    if (create) {
      const input = b.inputType(`Create${Name}Input`, { description: `A new ${one}: its attributes; the required ones are non-null.`, fields: (t: any) => inputFields(t, def, true) });
      b.mutationField(`create${Name}`, (t: any) => t.field({
        type: rowPayload("Create"), nullable: true,
        description: withRoute(`Creates ${withArticle(one)}. ${resourceDescription(def)}`, create),
        args: { input: t.arg({ type: input, required: true, description: `The new ${one}'s attributes.` }) },
        resolve: async (_root: unknown, args: Args, ctx: Context, info: GraphQLResolveInfo) => {
          guard(ctx, create.scopes);
          const row = await inTransaction(ctx, (tx) => createRow(ctx, tx, def, args.input));
          return { row: await reread(ctx, info, row.id) };
        },
      }));
      registerRootField(`create${Name}`, { scopes: create.scopes, def });
    }
    if (update) {
      const patch = b.inputType(`${Name}Patch`, { description: `Changes to ${withArticle(one)}: only the attributes given change.`, fields: (t: any) => inputFields(t, def, false) });
      b.mutationField(`update${Name}`, (t: any) => t.field({
        type: rowPayload("Update"), nullable: true,
        description: withRoute(`Changes ${withArticle(one)}: only the attributes given.`, update),
        args: {
          rowId: t.arg.int({ required: true, description: `The ${one}'s row id.` }),
          input: t.arg({ type: patch, required: true, description: "The attributes to change." }),
        },
        resolve: async (_root: unknown, args: Args, ctx: Context, info: GraphQLResolveInfo) => {
          guard(ctx, update.scopes);
          const row = await inTransaction(ctx, async (tx) => updateRow(ctx, tx, def, await findOwned(ctx, tx, def, args.rowId), args.input));
          return { row: await reread(ctx, info, row.id) };
        },
      }));
      registerRootField(`update${Name}`, { scopes: update.scopes, def });
    }
    if (remove) {
      b.mutationField(`delete${Name}`, (t: any) => t.field({
        type: rowPayload("Delete"), nullable: true,
        description: withRoute(`Deletes ${withArticle(one)}.`, remove),
        args: { rowId: t.arg.int({ required: true, description: `The ${one}'s row id.` }) },
        resolve: (_root: unknown, args: Args, ctx: Context, info: GraphQLResolveInfo) => {
          guard(ctx, remove.scopes);
          return inTransaction(ctx, async (tx) => {
            const row = await findOwned(ctx, tx, def, args.rowId, queryFromInfo({ context: ctx, info, typeName: Name, path: [def.name] }));
            await deleteRows(ctx, tx, def, [row.id]);
            return { row };
          });
        },
      }));
      registerRootField(`delete${Name}`, { scopes: remove.scopes, def });
    }
    const Plural = pascal(def.plural);
    /** `CreateRanksPayload { ranks }`: a batch's rows, in the order of the request. */
    const rowsPayload = (verb: string, rows: string, doing: string) => payload(`${verb}${Plural}Payload`, (t: any) => ({
      [def.plural]: t.field({ type: [node], description: `The ${rows}.`, resolve: (p: Row) => p.rows }),
    }), `What ${doing} several ${plural(def)} answers.`);
    if (batch && create) {
      b.mutationField(`create${Plural}`, (t: any) => t.field({
        type: rowsPayload("Create", `new ${plural(def)}, in the order of the inputs`, "creating"),
        nullable: true,
        description: withRoute(`Creates several ${plural(def)} in one transaction: all or none.`, batch),
        args: { inputs: t.arg({ type: [`Create${Name}Input`], required: true, description: `The new ${plural(def)} (at most the server's batch limit).` }) },
        resolve: async (_root: unknown, args: Args, ctx: Context, info: GraphQLResolveInfo) => {
          guard(ctx, batch.scopes);
          const ids = await inTransaction(ctx, async (tx) => {
            const made: number[] = [];
            for (const [i, input] of capped(ctx, args.inputs as Row[], "inputs").entries()) {
              made.push((await createRow(ctx, tx, def, input).catch((e) => Promise.reject(atItem(e, `inputs.${i}`)))).id);
            }
            return made;
          });
          return { rows: await inRequestOrder(ctx, info, def, def.plural, ids) };
        },
      }));
      registerRootField(`create${Plural}`, { scopes: batch.scopes, def });
    }
    const batchUpdate = topLevel(def, "batchUpdate");
    const batchDelete = topLevel(def, "batchDelete");
    if (batchUpdate && update) {
      const item = b.inputType(`Update${Name}Item`, {
        description: `One ${one} of a batch update: its row id and the attributes to change.`,
        fields: (t: any) => ({
          rowId: t.int({ required: true, description: `The ${one}'s row id.` }),
          input: t.field({ type: `${Name}Patch`, required: true, description: "The attributes to change." }),
        }),
      });
      b.mutationField(`update${Plural}`, (t: any) => t.field({
        type: rowsPayload("Update", `changed ${plural(def)}, in the order of the items`, "changing"),
        nullable: true,
        description: withRoute(`Changes several ${plural(def)} in one transaction: all or none.`, batchUpdate),
        args: { items: t.arg({ type: [item], required: true, description: `The ${plural(def)} to change (at most the server's batch limit).` }) },
        resolve: async (_root: unknown, args: Args, ctx: Context, info: GraphQLResolveInfo) => {
          guard(ctx, batchUpdate.scopes);
          const items = capped(ctx, args.items as Array<{ rowId: number; input: Row }>, "items");
          await inTransaction(ctx, async (tx) => {
            for (const [i, { rowId, input }] of items.entries()) {
              const existing = await findOwned(ctx, tx, def, rowId).catch((e) => Promise.reject(missingItem(e, `items.${i}.rowId`, def, rowId)));
              await updateRow(ctx, tx, def, existing, input).catch((e) => Promise.reject(atItem(e, `items.${i}.input`)));
            }
          });
          return { rows: await inRequestOrder(ctx, info, def, def.plural, items.map((i) => i.rowId)) };
        },
      }));
      registerRootField(`update${Plural}`, { scopes: batchUpdate.scopes, def });
    }
    if (batchDelete && remove) {
      b.mutationField(`delete${Plural}`, (t: any) => t.field({
        type: rowsPayload("Delete", `deleted ${plural(def)} (their last state), in the order of the row ids`, "deleting"),
        nullable: true,
        description: withRoute(`Deletes several ${plural(def)} in one transaction: all or none.`, batchDelete),
        args: { rowIds: t.arg.intList({ required: true, description: `Row ids of the ${plural(def)} to delete (at most the server's batch limit).` }) },
        resolve: async (_root: unknown, args: Args, ctx: Context, info: GraphQLResolveInfo) => {
          guard(ctx, batchDelete.scopes);
          const rowIds = capped(ctx, [...new Set(args.rowIds as number[])], "rowIds");
          return inTransaction(ctx, async (tx) => {
            const rows = await inRequestOrder(ctx, info, def, def.plural, rowIds, tx);
            const missing = rowIds.filter((_, i) => !rows[i]);
            if (missing.length) {
              throw validationError(Object.fromEntries(missing.map((id) => [`rowIds.${rowIds.indexOf(id)}`, [`The ${one} ${id} does not exist.`]])));
            }
            await deleteRows(ctx, tx, def, rowIds);
            return { rows };
          });
        },
      }));
      registerRootField(`delete${Plural}`, { scopes: batchDelete.scopes, def });
    }
    for (const op of operations.filter((o) => o.def === def && o.kind === "command")) {
      b.mutationField(op.field, (t: any) => t.field({
        type: payload(`${pascal(op.field)}Payload`, (t: any) => ({
          status: t.string({ description: "What the command did, such as `okay`.", resolve: (p: Row) => p.status }),
        }), `What the ${op.field} command answers.`),
        nullable: true,
        description: withRoute(op.command!.description, op),
        resolve: async (_root: unknown, _args: Args, ctx: Context) => (guard(ctx, op.scopes), { status: await op.command!.run(ctx) }),
      }));
      registerRootField(op.field, { scopes: op.scopes });
    }
    for (const op of operations.filter((o) => o.subject === def && o.kind === "action")) {
      const answered = op.def;
      const input = actionInputType(builder, op);
      b.mutationField(op.field, (t: any) => t.field({
        type: payload(`${pascal(op.field)}Payload`, (t: any) => ({
          [answered.name]: t.field({
            type: refs.objects.get(answered.name), nullable: true, description: `The ${answered.label.toLowerCase()} the action answers.`, resolve: (p: Row) => p.row,
          }),
        }), `What ${op.field} answers.`),
        nullable: true,
        description: withRoute(op.action!.description, op),
        args: {
          rowId: t.arg.int({ required: true, description: `The ${one}'s row id.` }),
          ...(input ? { input: t.arg({ type: input, required: true, description: "The action's attributes." }) } : {}),
        },
        resolve: async (_root: unknown, args: Args, ctx: Context, info: GraphQLResolveInfo) => {
          const id = await runAction(op, args.rowId, args.input, ctx);
          const query = queryFromInfo({ context: ctx, info, typeName: pascal(answered.name), path: [answered.name] });
          return { row: await ctx.store.findFirst(answered.model, { ...query, where: owned(ctx, answered, { id }) }) };
        },
      }));
      registerRootField(op.field, { scopes: op.scopes, def: answered });
    }
    for (const [key, rel] of Object.entries(def.relations)) {
      if (rel.kind === "belongsToMany") addPublicLinkMutations(builder, refs, { payload, withRoute }, def, key, rel);
    }
  }

  /** The rows with these ids, selected as the field at `path` asks, in the ids' order (null for one not in the account). */
  async function inRequestOrder(ctx: Context, info: GraphQLResolveInfo, def: ResourceDef, path: string, ids: number[], tx: StoreReads = ctx.store) {
    const rows: Row[] = await tx.findMany(def.model, {
      ...queryFromInfo({ context: ctx, info, typeName: pascal(def.name), path: [path] }), where: owned(ctx, def, { id: { in: ids } }),
    });
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => byId.get(id) ?? null);
  }
}

/** A batch item whose row is not in the account: a validation error on its row id. */
function missingItem(error: unknown, at: string, def: ResourceDef, rowId: number): unknown {
  if (!(error instanceof ApiError) || error.code !== "NOT_FOUND") return error;
  return validationError({ [at]: [`The ${def.label.toLowerCase()} ${rowId} does not exist.`] });
}

/** A batch item's field errors under its input path (`inputs.2.name`). */
const atItem = (error: unknown, at: string): unknown => renameFieldErrors(error, (k) => `${at}.${camelPath(k)}`);
