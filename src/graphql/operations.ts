import { queryFromInfo } from "@pothos/plugin-prisma";
import type { GraphQLResolveInfo } from "graphql";
import type { PivotDef, ResourceDef } from "../resources/define.ts";
import { isOneToOne, operations, pivotOf as pivotOfOp, type Operation } from "../resources/operations.ts";
import { linkResourceOf } from "../resources/index.ts";
import { notFound, ApiError, validationError } from "../core/errors.ts";
import { capped, findOwned, findPage, findParent, guard, owned, pageArgs } from "../data/access.ts";
import { createRow, deleteRows, inTransaction, updateRow } from "../data/write.ts";
import type { StoreReads, StoreTransaction } from "../db/store.ts";
import { updateTracked } from "../data/tracked.ts";
import { searchQuery } from "../data/search.ts";
import { restFeedField } from "./changes.ts";
import { hasForeignKey, writesIndependently } from "../data/independent-writes.ts";
import * as link from "../data/links.ts";
import type { Builder } from "./builder.ts";
import type { Context } from "../request/context.ts";
import { pageType, scalarOf, type ObjectRefs } from "./objects.ts";
import { pascal, restRootField, snake } from "../core/names.ts";
import { fieldDescription, resourceDescription, viewDescription } from "../resources/descriptions.ts";
import { actionInputType, runAction } from "./actions.ts";
import { fixedPlan } from "./fixed-plans.ts";
import { camelPath, childKeys, idArg, INTERNAL, inputPathsOf, nestedRow, pivotOf, renamingErrors, type Args, type Row } from "./kinds/shared.ts";
import { pivotChangesType, restLinkArgs, restLinkField } from "./kinds/links.ts";

/** Input types generated from the registry, created once per name. */
function inputs(builder: Builder) {
  const b = builder as any;
  const made = new Map<string, any>();
  const once = (name: string, make: () => any) => {
    if (!made.has(name)) made.set(name, make());
    return made.get(name);
  };
  const resourceInput = (def: ResourceDef) =>
    once(`${pascal(def.name)}Input`, () =>
      b.inputType(`${pascal(def.name)}Input`, {
        description: `Writable attributes of a ${def.label.toLowerCase()}. Required on create: ${
          [...Object.entries(def.fields).filter(([, f]) => f.required).map(([k]) => k), ...Object.entries(def.uploads ?? {}).filter(([, u]) => u.required).map(([k]) => k)].join(", ") || "none"
        }.`,
        fields: (t: any) => {
          const fields: Record<string, unknown> = {};
          for (const [key, f] of Object.entries(def.fields)) {
            if (f.writable === false) continue;
            fields[key] = t.field({ type: scalarOf(f), required: false, description: fieldDescription(def, key, f) });
          }
          fields.createdAt = t.field({ type: "DateTime", required: false, description: "When the row was created; now when omitted." });
          fields.updatedAt = t.field({ type: "DateTime", required: false, description: "When the row last changed; now when omitted." });
          for (const [name, upload] of Object.entries(def.uploads ?? {})) {
            fields[name] = t.field({
              type: "File", required: false,
              description: `The ${upload.image ? "image" : "file"} to upload (GraphQL multipart request); stored in \`${upload.column}\`.`,
            });
          }
          return fields;
        },
      }),
    );
  const pivotInput = (pivot: PivotDef | undefined) =>
    !pivot || Object.keys(pivot.fields).length === 0 ? null : once(`${pivot.model}PivotInput`, () =>
      b.inputType(`${pivot.model}PivotInput`, {
        description: `The link columns of a ${linkResourceOf(pivot).label.toLowerCase()} row.`,
        fields: (t: any) => Object.fromEntries(Object.entries(pivot.fields).map(([k, f]) => [
          k, t.field({ type: scalarOf(f), required: false, description: fieldDescription(linkResourceOf(pivot), k, f) }),
        ])),
      }),
    );
  const linkItemInput = (pivot: PivotDef | undefined) =>
    once(`${pivotInput(pivot) ? pivot!.model : "Related"}ItemInput`, () =>
      b.inputType(`${pivotInput(pivot) ? pivot!.model : "Related"}ItemInput`, {
        description: "A related row to link, by id, with the link's columns where the link has any.",
        fields: (t: any) => ({
          id: t.int({ required: true, description: "Id of the related row." }),
          ...(pivotInput(pivot) ? { pivot: t.field({ type: pivotInput(pivot), required: false, description: "Columns of the link row." }) } : {}),
        }),
      }),
    );
  const batchItemInput = (def: ResourceDef, pivot?: PivotDef) =>
    once(`${pascal(def.name)}${pivotInput(pivot) ? pivot!.model : ""}BatchItemInput`, () =>
      b.inputType(`${pascal(def.name)}${pivotInput(pivot) ? pivot!.model : ""}BatchItemInput`, {
        description: `One ${def.label.toLowerCase()} of a batch update: its id and the attributes to change.`,
        fields: (t: any) => ({
          id: t.int({ required: true, description: `Id of the ${def.label.toLowerCase()} to update.` }),
          input: t.field({ type: resourceInput(def), required: false, description: "The attributes to change; the others keep their values." }),
          ...(pivotInput(pivot) ? { pivot: t.field({ type: pivotInput(pivot), required: false, description: "Link columns to change." }) } : {}),
        }),
      }),
    );
  const newItemInput = (def: ResourceDef, pivot: PivotDef) =>
    once(`${pascal(def.name)}${pivot.model}NewItemInput`, () =>
      b.inputType(`${pascal(def.name)}${pivot.model}NewItemInput`, {
        description: `One new ${def.label.toLowerCase()} of a batch create, with the columns of its link to the parent.`,
        fields: (t: any) => ({
          input: t.field({ type: resourceInput(def), required: true, description: `The new ${def.label.toLowerCase()}'s attributes.` }),
          pivot: t.field({ type: pivotInput(pivot), required: false, description: "Columns of the link to the parent." }),
        }),
      }),
    );
  const filterInput = once("FilterInput", () => {
    const ref = b.inputRef("FilterInput");
    ref.implement({
      description: "A search condition (`field` `operator` `value`), or a group of conditions under `nested` (one level).",
      fields: (t: any) => ({
        field: t.string({ description: "A column (`name`), a to-one relation's column (`rank.name`) or a link column (`pivot.order`)." }),
        operator: t.string({ description: "< <= > >= = != like, not like, ilike, not ilike, in, not in, all in, any in. Default =." }),
        value: t.field({ type: "JSON", description: "The value to compare with: a list for in, not in, all in and any in; `%` wildcards for like." }),
        type: t.string({ description: "and (default) or or: how this condition joins the ones before it." }),
        nested: t.field({ type: [ref], required: false, description: "Conditions grouped in parentheses instead of field, operator and value." }),
      }),
    });
    return ref;
  });
  const sortInput = once("SortInput", () =>
    b.inputType("SortInput", {
      description: "One sort key; earlier keys sort first, the resource's default order breaks ties.",
      fields: (t: any) => ({
        field: t.string({ required: true, description: "A column (`name`) or a to-one relation's column (`rank.order`)." }),
        direction: t.string({ description: "asc (default) or desc" }),
      }),
    }),
  );
  const scopeInput = once("ScopeInput", () =>
    b.inputType("ScopeInput", {
      description: "A named filter the resource offers (PERSCOM's search scopes), such as `visible`.",
      fields: (t: any) => ({
        name: t.string({ required: true, description: "The scope's name." }),
        parameters: t.field({ type: ["JSON"], required: false, description: "The scope's parameters, in order." }),
      }),
    }),
  );
  const searchInput = once("SearchInput", () =>
    b.inputType("SearchInput", {
      description: "Full-text search over the resource's searchable columns.",
      fields: (t: any) => ({
        value: t.string({ description: "The text to look for; rows containing it in any searchable column match." }),
        caseSensitive: t.boolean({ description: "Default false." }),
      }),
    }),
  );
  return { resourceInput, pivotInput, linkItemInput, batchItemInput, newItemInput, filterInput, sortInput, scopeInput, searchInput };
}

/** Adds one Query or Mutation field per operation of the registry (a search shares its list's field). */
export function addOperations(builder: Builder, refs: ObjectRefs): void {
  const b = builder as any;
  const made = inputs(builder);
  const changes = pivotChangesType(builder);

  const commandStatus = b.objectRef("CommandStatus").implement({
    description: "The outcome of an account command.",
    fields: (t: any) => ({ status: t.exposeString("status", { description: "What the command did, such as `okay`." }) }),
  });

  const added = new Set<string>();
  for (const op of operations) {
    if (added.has(op.field)) continue;
    added.add(op.field);
    const add = op.root === "query" ? b.queryField.bind(b) : b.mutationField.bind(b);
    add(restRootField(op.field), (t: any) => fieldFor(t, op));
  }

  function argsFor(t: any, op: Operation) {
    const args: Record<string, unknown> = {};
    const pivot = pivotOfOp(op);
    const rows = `${op.def.label.toLowerCase()}s`;
    const one = op.def.label.toLowerCase();
    if (op.parent) args[op.parent.def.param] = t.arg.int({ required: true, description: `Id of the parent ${op.parent.def.label.toLowerCase()}.` });
    if (op.subject) {
      args[op.subject.param] = t.arg.int({ required: true, description: `Id of the ${op.subject.label.toLowerCase()}.` });
      const input = actionInputType(builder, op);
      if (input) args.input = t.arg({ type: input, required: true, description: "The action's attributes." });
    }
    if (["show", "update", "delete", "pivot", "dissociate"].includes(op.kind)) {
      args[op.parent ? op.parent.route.param : op.def.param] = t.arg.int({
        required: !isOneToOne(op),
        description: isOneToOne(op) ? `Id of the ${one}; optional, since the parent has at most one (a different id is not found).` : `Id of the ${one}.`,
      });
    }
    switch (op.kind) {
      case "list":
      case "search":
        Object.assign(args, {
          page: t.arg.int({ description: "The page to read, from 1 (default 1)." }),
          limit: t.arg.int({ description: "Rows per page: the server's default page size when omitted, never more than its maximum." }),
        });
        if (!op.view) {
          Object.assign(args, {
            filters: t.arg({ type: [made.filterInput], description: `Conditions the ${rows} must meet (PERSCOM's search filters).` }),
            sort: t.arg({ type: [made.sortInput], description: "Sort keys, before the default order." }),
            scopes: t.arg({ type: [made.scopeInput], description: "Named filters to apply, all of them." }),
            search: t.arg({ type: made.searchInput, description: "Text to look for in the searchable columns." }),
          });
        }
        break;
      case "create":
      case "update":
        args.input = t.arg({
          type: made.resourceInput(op.def), required: op.kind === "create",
          description: op.kind === "create" ? `The new ${one}'s attributes.` : "The attributes to change; the others keep their values.",
        });
        if (made.pivotInput(pivot)) args.pivot = t.arg({ type: made.pivotInput(pivot), description: "Columns of the link to the parent." });
        break;
      case "batchCreate":
        args.resources = t.arg({
          type: [made.pivotInput(pivot) ? made.newItemInput(op.def, pivot!) : made.resourceInput(op.def)], required: true,
          description: `The ${rows} to create, all or none (at most the server's batch limit).`,
        });
        break;
      case "batchUpdate":
        args.resources = t.arg({ type: [made.batchItemInput(op.def, pivot)], required: true, description: `The ${rows} to update, all or none.` });
        break;
      case "batchDelete":
        args.resources = t.arg.intList({ required: true, description: `Ids of the ${rows} to delete, all or none.` });
        break;
      case "detach":
      case "attach":
      case "sync":
      case "toggle":
      case "pivot":
        Object.assign(args, restLinkArgs(t, op, made, rows));
        break;
      case "associate":
        args.relatedKey = t.arg.int({ required: true, description: `Id of the ${one} to move under the parent.` });
        break;
    }
    return args;
  }

  function fieldFor(t: any, op: Operation) {
    const args = argsFor(t, op);
    const rest = `REST: ${op.method} /{version}${op.path}${op.kind === "list" && !op.view ? ` (and POST ${op.path}/search)` : ""} — scopes: ${
      op.scopes.join(", ") || "none"
    }`;
    const description = `${summaryOf(op)}\n\n${rest}`;
    const target = op.returns === "link" || op.returns === "links" || op.returns === "linkPage" ? linkDef(op) : op.def;
    switch (op.returns) {
      case "page":
      case "linkPage":
        return t.field({
          ...INTERNAL,
          type: pageType(builder, refs, target), args, description, nullable: true,
          resolve: (_root: unknown, a: Args, ctx: Context, info: GraphQLResolveInfo) =>
            resolvePage(op, a, ctx, rowsQuery(ctx, info, "nodes")),
        });
      case "status":
        return t.field({
          ...INTERNAL,
          type: commandStatus, args, description: `${op.command!.description}\n\n${rest}`, nullable: true,
          resolve: async (_root: unknown, _a: Args, ctx: Context) => (guard(ctx, op.scopes), { status: await op.command!.run(ctx) }),
        });
      case "changes":
        return restLinkField(t, op, args, description, changes);
      case "feed":
        return restFeedField(builder, t, op);
      case "links":
      case "objects":
        return t.field({
          ...INTERNAL,
          type: [refs.objects.get(target.name)], args, description, nullable: true,
          resolve: (_r: unknown, a: Args, ctx: Context, info: GraphQLResolveInfo) => resolveBatch(op, a, ctx, rowsQuery(ctx, info)),
        });
      default:
        return t.field({
          ...INTERNAL,
          type: refs.objects.get(target.name), args, description, nullable: true,
          resolve: (_r: unknown, a: Args, ctx: Context, info: GraphQLResolveInfo) => resolveOne(op, a, ctx, rowsQuery(ctx, info)),
        });
    }
  }
}

/**
 * The query of the rows a root field returns (under `under`, a page's `nodes`), as `t.prismaField` plans it: once per
 * REST document (fixed-plans.ts).
 */
const rowsQuery = (ctx: Context, info: GraphQLResolveInfo, under?: string): object =>
  fixedPlan(info, under ?? "rows", () => queryFromInfo({ context: ctx, info, path: under ? [under] : [] }));

/** What an operation does, in a sentence or two: the first words of its root field's description. */
function summaryOf(op: Operation): string {
  const one = op.def.label.toLowerCase();
  const rows = `${one}s`;
  const parent = op.parent ? op.parent.def.label.toLowerCase() : "";
  const of = op.parent ? ` of a ${parent}` : "";
  if (op.view) return op.kind === "list" ? `${viewDescription(op.def, op.view)} A page at a time.` : `${viewDescription(op.def, op.view)} One ${one} by id.`;
  const what = `${resourceDescription(op.def)}`;
  switch (op.kind) {
    case "list":
    case "search":
      return `The ${rows}${of}, a page at a time; \`filters\`, \`sort\`, \`scopes\` and \`search\` narrow and order them. ${what}`;
    case "show":
      return op.parent && isOneToOne(op) ? `The ${parent}'s ${one}. ${what}` : `One ${one}${of} by id. ${what}`;
    case "create":
      return op.parent ? `Creates a ${one} for a ${parent}. ${what}` : `Creates a ${one}. ${what}`;
    case "update":
      return `Changes a ${one}${of}: only the attributes given. ${what}`;
    case "delete":
      return op.parent?.relation.kind === "belongsToMany" ? `Unlinks a ${one} from a ${parent} and answers it.` : `Deletes a ${one}${of} and answers it.`;
    case "batchCreate":
      return `Creates several ${rows}${op.parent ? ` for a ${parent}` : ""} in one transaction: all or none.`;
    case "batchUpdate":
      return `Changes several ${rows}${of} in one transaction: all or none.`;
    case "batchDelete":
      return `Deletes several ${rows}${of} in one transaction (all or none) and answers them.`;
    case "associate":
      return `Moves an existing ${one} under a ${parent}.`;
    case "dissociate":
      return `Detaches a ${one} from its ${parent}, leaving the ${one} in place.`;
    case "attach":
      return `Links existing ${rows} to a ${parent}.`;
    case "detach":
      return `Unlinks ${rows} from a ${parent}; the ${rows} stay.`;
    case "sync":
      return `Makes the ${parent}'s linked ${rows} exactly the ones given (unless \`detaching\` is false).`;
    case "toggle":
      return `Links the given ${rows} a ${parent} lacks and unlinks those it has.`;
    case "pivot":
      return `Changes the columns of a ${parent}'s link to a ${one}.`;
    case "action":
      return op.action!.description;
    default:
      return what;
  }
}

const linkDef = (op: Operation) => linkResourceOf(pivotOf(op));

/**
 * The rows a list operation reads before search conditions: model, base filter and default order. Under a parent,
 * `parentUnread` is set when the parent was not read: a child with a foreign key to its parent exists only under a
 * parent of its own account, so a page with rows shows the parent is there, and the caller reads the parent (a 404
 * when it is not the caller's) only when the page comes back empty. One statement fewer for every page that has rows.
 */
async function listScope(op: Operation, a: Args, ctx: Context): Promise<{ model: string; where: Row; orderBy: any; parentUnread?: () => Promise<unknown> }> {
  if (op.view) return { model: op.def.model, where: owned(ctx, op.def, op.view.where?.(ctx) ?? {}), orderBy: op.def.orderBy };
  if (!op.parent) return { model: op.def.model, where: owned(ctx, op.def), orderBy: op.def.orderBy };
  const parentId = a[op.parent.def.param];
  const readParent = () => findOwned(ctx, ctx.store, op.parent!.def, parentId, { select: { id: true } });
  const rel = op.parent.relation;
  const filter = "filter" in rel ? rel.filter?.where : undefined;
  const unread = rel.kind === "hasMany" && Number.isSafeInteger(parentId) && parentId > 0 && hasForeignKey(op.def.model, rel.foreignKey, op.parent.def.model);
  const parent = unread ? { id: parentId } : await readParent();
  if (rel.kind === "belongsToMany") return { model: rel.pivot.model, where: { ...filter, [rel.pivot.parentKey]: parent.id }, orderBy: rel.pivot.orderBy ?? [] };
  const orderBy = rel.kind === "hasMany" ? (rel.orderBy ?? op.def.orderBy) : op.def.orderBy;
  return { model: op.def.model, where: owned(ctx, op.def, { ...filter, ...childKeys(op, parent) }), orderBy, ...(unread ? { parentUnread: readParent } : {}) };
}

async function resolvePage(op: Operation, a: Args, ctx: Context, query: object) {
  guard(ctx, op.scopes);
  const page = pageArgs(ctx, a.page, a.limit);
  const search = await searchQuery(ctx, op.def, a, pivotOfOp(op));
  const { model, where, orderBy, parentUnread } = await listScope(op, a, ctx);
  const found = await findPage(ctx, model, search.where ? { AND: [where, search.where] } : where, [...search.orderBy, ...orderBy], page, query);
  if (parentUnread && found.nodes.length === 0) await parentUnread();
  return found;
}

/** The single row a view's `show` addresses (`/roster/{group}`). */
async function viewRow(op: Operation, a: Args, ctx: Context, query: object) {
  const row = await ctx.store.findFirst(op.def.model, { ...query, where: owned(ctx, op.def, { ...(op.view!.where?.(ctx) ?? {}), id: idArg(op, a) }) });
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

async function resolveOne(op: Operation, a: Args, ctx: Context, query: object) {
  guard(ctx, op.scopes);
  const rel = op.parent?.relation;
  const model = rel?.kind === "belongsToMany" ? pivotOf(op).model : op.def.model;
  // A row just written carries every column; it is read again only for the relations the selection includes.
  const selected = (query as { select?: Row; include?: Row }).select ?? (query as { include?: Row }).include ?? {};
  const includesRelations = Object.values(selected).some((value) => value !== true && value !== false);
  const refetch = (tx: StoreReads, id: number) => tx.findUniqueOrThrow(model, { ...query, where: { id } });
  const current = (tx: StoreReads, row: Row) => (includesRelations ? refetch(tx, row.id) : row);
  const independence = { independent: writesIndependently(op) };
  switch (op.kind) {
    case "show":
      // A missing row, or another account's, is null: the client cannot tell them apart (REST answers 404 for null).
      return absentAsNull(async () => {
        if (op.view) return viewRow(op, a, ctx, query);
        return op.parent ? (await nestedRow(op, a, ctx, ctx.store, query)).row : findOwned(ctx, ctx.store, op.def, idArg(op, a)!, query);
      });
    case "action": {
      const id = await runAction(op, a[op.subject!.param], a.input, ctx);
      return ctx.store.findFirst(op.def.model, { ...query, where: owned(ctx, op.def, { id }) });
    }
    case "create":
      return inTransaction(ctx, async (tx) => {
        if (!op.parent) return current(tx, await createRow(ctx, tx, op.def, a.input));
        const parentId = a[op.parent.def.param] as number;
        // The parent is looked up beside the body's checks (their statements share a round trip on PostgreSQL); a
        // missing parent is still the answer (404) over an invalid body.
        const parent = findParent(ctx, tx, op.parent.def, parentId);
        if (rel!.kind === "belongsToMany") {
          await parent;
          const pivot = pivotOf(op);
          const pivotValues = await link.pivotData(ctx, tx, pivot, a.pivot, "pivot");
          const row = await createRow(ctx, tx, op.def, a.input);
          return refetch(tx, (await link.createLink(ctx, tx, pivot, parentId, row.id, pivotValues)).id);
        }
        const keys = childKeys(op, { id: parentId });
        if (isOneToOne(op)) {
          await parent;
          if (await tx.count(op.def.model, { where: owned(ctx, op.def, keys) })) throw new ApiError("CONFLICT");
        }
        return current(tx, await createRow(ctx, tx, op.def, a.input, keys, { alongside: parent }));
      }, independence);
    case "update":
      return inTransaction(ctx, async (tx) => {
        if (!op.parent) {
          const existing = await findOwned(ctx, tx, op.def, idArg(op, a)!);
          return current(tx, await updateRow(ctx, tx, op.def, existing, a.input ?? {}));
        }
        const { row } = await nestedRow(op, a, ctx, tx);
        if (rel!.kind !== "belongsToMany") return current(tx, await updateRow(ctx, tx, op.def, row, a.input ?? {}));
        const pivot = pivotOf(op);
        const related = await findOwned(ctx, tx, op.def, row[pivot.relatedKey]);
        await updateRow(ctx, tx, op.def, related, a.input ?? {});
        const pivotValues = await link.pivotData(ctx, tx, pivot, a.pivot, "pivot");
        if (Object.keys(pivotValues).length) await updateTracked(ctx, tx, linkResourceOf(pivot), row.id, pivotValues);
        return refetch(tx, row.id);
      }, independence);
    case "delete":
      return inTransaction(ctx, async (tx) => {
        if (!op.parent) {
          const row = await findOwned(ctx, tx, op.def, idArg(op, a)!, query);
          await deleteRows(ctx, tx, op.def, [row.id]);
          return row;
        }
        const { parent, row } = await nestedRow(op, a, ctx, tx, query);
        if (rel!.kind === "belongsToMany") await link.removeLinked(ctx, tx, pivotOf(op), parent.id, [row]);
        else await deleteRows(ctx, tx, op.def, [row.id]);
        return row;
      });
    case "associate":
      return inTransaction(ctx, async (tx) => {
        const parent = await findOwned(ctx, tx, op.parent!.def, a[op.parent!.def.param]);
        const child = await tx.findFirst(op.def.model, { where: owned(ctx, op.def, { id: a.relatedKey }), select: { id: true } });
        if (!child) throw validationError({ related_key: [`The selected ${op.def.label.toLowerCase()} ${a.relatedKey} is invalid.`] });
        await updateTracked(ctx, tx, op.def, child.id, childKeys(op, parent));
        return refetch(tx, child.id);
      });
    case "dissociate":
      return inTransaction(ctx, async (tx) => {
        const { row } = await nestedRow(op, a, ctx, tx);
        const keys = Object.keys(childKeys(op, { id: 0 }));
        const required = keys.filter((k) => op.def.fields[k] && op.def.fields[k]!.nullable === false);
        if (required.length) {
          const names = required.map(snake);
          throw validationError({ [names[0]!]: [`A ${op.def.label.toLowerCase()} cannot exist without its ${op.parent!.def.label.toLowerCase()}: delete it instead.`] });
        }
        await updateTracked(ctx, tx, op.def, row.id, Object.fromEntries(keys.map((k) => [k, null])));
        return refetch(tx, row.id);
      });
    default:
      throw new Error(`No single-row resolver for ${op.kind}`);
  }
}

/** Batch items report their problems under `resources.<key>.<field>` (REST) and `<inputPath>.<field>` (GraphQL). */
const prefixed = <T>(prefix: string, work: Promise<T>, inputPath = prefix) =>
  renamingErrors(work, (k) => `${prefix}.${k}`, (k) => `${inputPath}.${camelPath(k)}`);

/** The rows with `ids`, in that order. */
async function inOrder(tx: StoreReads, model: string, ids: number[], query: object) {
  const rows: Row[] = await tx.findMany(model, { ...query, where: { id: { in: ids } } });
  const byId = new Map(rows.map((r) => [r.id as number, r]));
  return ids.map((id) => byId.get(id)!);
}

/** Batch create, update and delete: one transaction, all or nothing, results in request order. */
async function resolveBatch(op: Operation, a: Args, ctx: Context, query: object) {
  guard(ctx, op.scopes);
  capped(ctx, a.resources as unknown[]);
  return inTransaction(ctx, async (tx) => {
    const parent = op.parent ? await findOwned(ctx, tx, op.parent.def, a[op.parent.def.param]) : null;
    const pivot = pivotOfOp(op);
    if (op.kind === "batchCreate") {
      const ids: number[] = [];
      for (const [index, item] of (a.resources as Args[]).entries()) {
        const input = pivot && "input" in item ? item.input : item;
        if (!pivot) {
          ids.push((await prefixed(`resources.${index}`, createRow(ctx, tx, op.def, input, parent ? childKeys(op, parent) : {}))).id);
          continue;
        }
        const pivotValues = await link.pivotData(ctx, tx, pivot, item.pivot, `resources.${index}.pivot`);
        const row = await prefixed(`resources.${index}`, createRow(ctx, tx, op.def, input), `resources.${index}.input`);
        ids.push((await link.createLink(ctx, tx, pivot, parent!.id, row.id, pivotValues)).id);
      }
      return inOrder(tx, pivot ? pivot.model : op.def.model, ids, query);
    }
    if (pivot) return batchOnLinks(op, a, ctx, tx, parent!, pivot, query);
    const items: Array<{ id: number; input?: Args }> = op.kind === "batchDelete" ? (a.resources as number[]).map((id) => ({ id })) : a.resources;
    const ids = [...new Set(items.map((i) => i.id))];
    const scope = !parent ? {} : op.parent!.relation.kind === "belongsTo"
      ? { id: parent[(op.parent!.relation as { foreignKey: string }).foreignKey] ?? -1 }
      : childKeys(op, parent);
    const found: Row[] = await tx.findMany(op.def.model, { ...query, where: owned(ctx, op.def, { ...scope, id: { in: ids } }) });
    const known = new Set(found.map((r) => r.id as number));
    const missing = ids.filter((id) => !known.has(id));
    if (missing.length) {
      const where = parent ? ` of this ${op.parent!.def.label.toLowerCase()}` : "";
      const message = (id: number) => [`The ${op.def.label.toLowerCase()} ${id} does not exist${where}.`];
      const error = validationError(Object.fromEntries(missing.map((id) => [`resources.${id}`, message(id)])));
      // GraphQL names the item by its position: the id itself (a delete's list) or its `id` (an update's item).
      const at = (id: number) => `resources.${items.findIndex((i) => i.id === id)}${op.kind === "batchDelete" ? "" : ".id"}`;
      inputPathsOf.set(error, Object.fromEntries(missing.map((id) => [at(id), message(id)])));
      throw error;
    }
    if (op.kind === "batchDelete") {
      await deleteRows(ctx, tx, op.def, ids);
      const byId = new Map(found.map((r) => [r.id as number, r]));
      return ids.map((id) => byId.get(id)!);
    }
    const byId = new Map(found.map((r) => [r.id as number, r]));
    for (const [index, item] of items.entries()) {
      await prefixed(`resources.${item.id}`, updateRow(ctx, tx, op.def, byId.get(item.id)!, item.input ?? {}), `resources.${index}.input`);
    }
    return inOrder(tx, op.def.model, ids, query);
  });
}

async function batchOnLinks(op: Operation, a: Args, ctx: Context, tx: StoreTransaction, parent: Row, pivot: PivotDef, query: object) {
  if (op.kind === "batchDelete") {
    const rows = await link.requireLinks(tx, pivot, parent.id, a.resources, query);
    await link.removeLinked(ctx, tx, pivot, parent.id, rows);
    return rows;
  }
  const items = a.resources as Array<{ id: number; input?: Args; pivot?: Args }>;
  const rows = await link.requireLinks(tx, pivot, parent.id, items.map((i) => i.id));
  const byRelated = new Map(rows.map((r) => [r[pivot.relatedKey] as number, r]));
  for (const [index, item] of items.entries()) {
    const related = await findOwned(ctx, tx, op.def, item.id);
    await prefixed(`resources.${item.id}`, updateRow(ctx, tx, op.def, related, item.input ?? {}), `resources.${index}.input`);
    const pivotValues = await link.pivotData(ctx, tx, pivot, item.pivot, `resources.${item.id}.pivot`);
    if (Object.keys(pivotValues).length) await updateTracked(ctx, tx, linkResourceOf(pivot), byRelated.get(item.id)!.id, pivotValues);
  }
  return tx.findMany(pivot.model, { ...query, where: { id: { in: rows.map((r) => r.id) } }, orderBy: pivot.orderBy ?? [{ id: "asc" }] });
}
