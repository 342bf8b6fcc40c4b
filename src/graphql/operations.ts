import { queryFromInfo } from "@pothos/plugin-prisma";
import type { GraphQLResolveInfo } from "graphql";
import type { PivotDef, ResourceDef } from "../resources/define.ts";
import { operations, pivotOf as pivotOfOp, type Operation } from "../resources/operations.ts";
import { linkResourceOf } from "../resources/index.ts";
import { notFound, ApiError } from "../errors.ts";
import { delegate, findOwned, findPage, guard, owned, pageArgs } from "../data/access.ts";
import { createRow, deleteRows, inTransaction, updateRow } from "../data/write.ts";
import * as link from "../data/links.ts";
import type { Builder } from "./builder.ts";
import type { Context } from "./context.ts";
import { pageType, scalarOf, type ObjectRefs } from "./objects.ts";
import { pascal } from "./names.ts";

type Args = Record<string, any>;

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
          Object.entries(def.fields).filter(([, f]) => f.required).map(([k]) => k).join(", ") || "none"
        }.`,
        fields: (t: any) => {
          const fields: Record<string, unknown> = {};
          for (const [key, f] of Object.entries(def.fields)) {
            if (f.writable === false) continue;
            fields[key] = t.field({ type: scalarOf(f), required: false });
          }
          fields.createdAt = t.field({ type: "DateTime", required: false });
          fields.updatedAt = t.field({ type: "DateTime", required: false });
          for (const name of Object.keys(def.uploads ?? {})) fields[name] = t.field({ type: "File", required: false });
          return fields;
        },
      }),
    );
  const pivotInput = (pivot: PivotDef) =>
    Object.keys(pivot.fields).length === 0 ? null : once(`${pivot.model}PivotInput`, () =>
      b.inputType(`${pivot.model}PivotInput`, {
        fields: (t: any) => Object.fromEntries(Object.entries(pivot.fields).map(([k, f]) => [k, t.field({ type: scalarOf(f), required: false })])),
      }),
    );
  const linkItemInput = (pivot: PivotDef) =>
    once(`${pivot.model}ItemInput`, () =>
      b.inputType(`${pivot.model}ItemInput`, {
        fields: (t: any) => ({
          id: t.int({ required: true }),
          ...(pivotInput(pivot) ? { pivot: t.field({ type: pivotInput(pivot), required: false }) } : {}),
        }),
      }),
    );
  const batchItemInput = (def: ResourceDef, pivot?: PivotDef) =>
    once(`${pascal(def.name)}${pivot ? pivot.model : ""}BatchItemInput`, () =>
      b.inputType(`${pascal(def.name)}${pivot ? pivot.model : ""}BatchItemInput`, {
        fields: (t: any) => ({
          id: t.int({ required: true }),
          input: t.field({ type: resourceInput(def), required: false }),
          ...(pivot && pivotInput(pivot) ? { pivot: t.field({ type: pivotInput(pivot), required: false }) } : {}),
        }),
      }),
    );
  return { resourceInput, pivotInput, linkItemInput, batchItemInput };
}

/** Adds one Query or Mutation field per operation of the registry. */
export function addOperations(builder: Builder, refs: ObjectRefs): void {
  const b = builder as any;
  const { resourceInput, pivotInput, linkItemInput, batchItemInput } = inputs(builder);
  const changes = b.objectRef("PivotChanges").implement({
    description: "Related ids a many-to-many operation attached, detached or updated.",
    fields: (t: any) => ({
      attached: t.field({ type: ["Int"], resolve: (c: link.PivotChanges) => c.attached }),
      detached: t.field({ type: ["Int"], resolve: (c: link.PivotChanges) => c.detached }),
      updated: t.field({ type: ["Int"], resolve: (c: link.PivotChanges) => c.updated }),
    }),
  });

  b.queryType({});
  b.mutationType({});
  for (const op of operations) {
    const add = op.root === "query" ? b.queryField.bind(b) : b.mutationField.bind(b);
    add(op.field, (t: any) => fieldFor(t, op));
  }

  function argsFor(t: any, op: Operation) {
    const args: Record<string, unknown> = {};
    const pivot = pivotOfOp(op);
    if (op.parent) args[op.parent.def.param] = t.arg.int({ required: true });
    const idParam = op.parent ? op.parent.route.param : op.def.param;
    const needsId = ["show", "update", "delete", "pivot"].includes(op.kind);
    if (needsId) {
      const optional = op.parent?.relation.kind === "belongsTo" || op.parent?.relation.kind === "morphOne";
      args[op.parent ? op.parent.route.param : idParam] = t.arg.int({ required: !optional });
    }
    if (op.kind === "list") Object.assign(args, { page: t.arg.int(), limit: t.arg.int() });
    if (op.kind === "create" || op.kind === "update") args.input = t.arg({ type: resourceInput(op.def), required: op.kind === "create" });
    if (pivot && (op.kind === "create" || op.kind === "update") && pivotInput(pivot)) args.pivot = t.arg({ type: pivotInput(pivot) });
    if (pivot && op.kind === "pivot") args.pivot = t.arg({ type: pivotInput(pivot) ?? "JSON", required: true });
    if (pivot && ["attach", "sync", "toggle"].includes(op.kind)) args.resources = t.arg({ type: [linkItemInput(pivot)], required: true });
    if (op.kind === "attach") args.duplicates = t.arg.boolean();
    if (op.kind === "sync") args.detaching = t.arg.boolean();
    if (op.kind === "detach" || op.kind === "batchDelete") args.resources = t.arg.intList({ required: true });
    if (op.kind === "batchUpdate") args.resources = t.arg({ type: [batchItemInput(op.def, pivot)], required: true });
    return args;
  }

  function fieldFor(t: any, op: Operation) {
    const args = argsFor(t, op);
    const description = `${op.method} /{version}${op.path} — scopes: ${op.scopes.join(", ")}`;
    const target = op.returns === "link" || op.returns === "links" || op.returns === "linkPage"
      ? linkDef(op)
      : op.def;
    switch (op.returns) {
      case "page":
      case "linkPage":
        return t.field({
          type: pageType(builder, refs, target), args, description,
          resolve: (_root: unknown, a: Args, ctx: Context, info: GraphQLResolveInfo) =>
            resolvePage(op, a, ctx, queryFromInfo({ context: ctx, info, path: ["nodes"] })),
        });
      case "changes":
        return t.field({ type: changes, args, description, resolve: (_root: unknown, a: Args, ctx: Context) => resolveChanges(op, a, ctx) });
      case "links":
        return t.prismaField({ type: [target.model], args, description, resolve: (query: object, _r: unknown, a: Args, ctx: Context) => resolveLinks(op, a, ctx, query) });
      default:
        return t.prismaField({ type: target.model, args, description, resolve: (query: object, _r: unknown, a: Args, ctx: Context) => resolveOne(op, a, ctx, query) });
    }
  }
}

const linkDef = (op: Operation) => linkResourceOf(pivotOf(op));
/** The pivot of an operation known to be many-to-many. */
const pivotOf = (op: Operation) => pivotOfOp(op)!;
const idArg = (op: Operation, a: Args) => a[op.parent ? op.parent.route.param : op.def.param] as number | null | undefined;

async function resolvePage(op: Operation, a: Args, ctx: Context, query: object) {
  guard(ctx, op.scopes);
  const page = pageArgs(ctx, a.page, a.limit);
  if (!op.parent) return findPage(ctx, op.def.model, owned(ctx, op.def), op.def.orderBy, page, query);
  const parent = await findOwned(ctx, ctx.prisma, op.parent.def, a[op.parent.def.param], { select: { id: true } });
  const rel = op.parent.relation;
  if (rel.kind === "hasMany") return findPage(ctx, op.def.model, owned(ctx, op.def, { [rel.foreignKey]: parent.id }), rel.orderBy ?? op.def.orderBy, page, query);
  const pivot = pivotOf(op);
  return findPage(ctx, pivot.model, { [pivot.parentKey]: parent.id }, pivot.orderBy ?? [], page, query);
}

/** The one related row a nested single-row route addresses, or 404. */
async function nestedRow(op: Operation, a: Args, ctx: Context, tx: any, query: object = {}) {
  const { def, relation } = op.parent!;
  const parent = await findOwned(ctx, tx, def, a[def.param]);
  const id = idArg(op, a);
  switch (relation.kind) {
    case "hasMany": {
      const row = await delegate(tx, op.def.model).findFirst({ ...query, where: owned(ctx, op.def, { id, [relation.foreignKey]: parent.id }) });
      if (!row) throw notFound();
      return { parent, row };
    }
    case "belongsTo": {
      const current = parent[relation.foreignKey] as number | null;
      if (current == null || (id != null && id !== current)) throw notFound();
      return { parent, row: await findOwned(ctx, tx, op.def, current, query) };
    }
    case "morphOne": {
      const row = await delegate(tx, op.def.model).findFirst({
        ...query, where: owned(ctx, op.def, { modelType: def.morphClass, modelId: parent.id }), orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      });
      if (!row || (id != null && id !== row.id)) throw notFound();
      return { parent, row };
    }
    default: {
      if (id == null) throw notFound();
      return { parent, row: await link.findLink(tx, pivotOf(op), parent.id, id, query) };
    }
  }
}

async function resolveOne(op: Operation, a: Args, ctx: Context, query: object) {
  guard(ctx, op.scopes);
  const rel = op.parent?.relation;
  const model = rel?.kind === "belongsToMany" ? pivotOf(op).model : op.def.model;
  const refetch = (tx: any, id: number) => delegate(tx, model).findUniqueOrThrow({ ...query, where: { id } });
  switch (op.kind) {
    case "show":
      return op.parent ? (await nestedRow(op, a, ctx, ctx.prisma, query)).row : findOwned(ctx, ctx.prisma, op.def, idArg(op, a)!, query);
    case "create":
      return inTransaction(ctx, async (tx) => {
        if (!op.parent) return refetch(tx, (await createRow(ctx, tx, op.def, a.input)).id);
        const parent = await findOwned(ctx, tx, op.parent.def, a[op.parent.def.param]);
        if (rel!.kind === "hasMany") return refetch(tx, (await createRow(ctx, tx, op.def, a.input, { [rel!.foreignKey]: parent.id })).id);
        if (rel!.kind === "morphOne") {
          const existing = await delegate(tx, op.def.model).count({ where: owned(ctx, op.def, { modelType: op.parent.def.morphClass, modelId: parent.id }) });
          if (existing) throw new ApiError("CONFLICT");
          return refetch(tx, (await createRow(ctx, tx, op.def, a.input, { modelType: op.parent.def.morphClass, modelId: parent.id })).id);
        }
        const pivot = pivotOf(op);
        const pivotValues = await link.pivotData(ctx, tx, pivot, a.pivot, "pivot");
        const row = await createRow(ctx, tx, op.def, a.input);
        return refetch(tx, (await link.createLink(ctx, tx, pivot, parent.id, row.id, pivotValues)).id);
      });
    case "update":
      return inTransaction(ctx, async (tx) => {
        if (!op.parent) {
          const existing = await findOwned(ctx, tx, op.def, idArg(op, a)!);
          return refetch(tx, (await updateRow(ctx, tx, op.def, existing, a.input ?? {})).id);
        }
        const { row } = await nestedRow(op, a, ctx, tx);
        if (rel!.kind !== "belongsToMany") return refetch(tx, (await updateRow(ctx, tx, op.def, row, a.input ?? {})).id);
        const pivot = pivotOf(op);
        const related = await findOwned(ctx, tx, op.def, row[pivot.relatedKey]);
        await updateRow(ctx, tx, op.def, related, a.input ?? {});
        const pivotValues = await link.pivotData(ctx, tx, pivot, a.pivot, "pivot");
        if (Object.keys(pivotValues).length) await delegate(tx, pivot.model).update({ where: { id: row.id }, data: pivotValues });
        return refetch(tx, row.id);
      });
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
    default:
      throw new Error(`No single-row resolver for ${op.kind}`);
  }
}

async function resolveLinks(op: Operation, a: Args, ctx: Context, query: object) {
  guard(ctx, op.scopes);
  const pivot = pivotOf(op);
  return inTransaction(ctx, async (tx) => {
    const parent = await findOwned(ctx, tx, op.parent!.def, a[op.parent!.def.param]);
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
      await updateRow(ctx, tx, op.def, related, item.input ?? {}).catch((e) => {
        throw prefixErrors(e, `resources.${item.id}`);
      });
      const pivotValues = await link.pivotData(ctx, tx, pivot, item.pivot, `resources.${index}.pivot`);
      if (Object.keys(pivotValues).length) await delegate(tx, pivot.model).update({ where: { id: byRelated.get(item.id)!.id }, data: pivotValues });
    }
    return delegate(tx, pivot.model).findMany({ ...query, where: { id: { in: rows.map((r) => r.id) } }, orderBy: pivot.orderBy ?? [{ id: "asc" }] });
  });
}

/** Batch items report their problems under `resources.<id>.<field>`. */
function prefixErrors(error: unknown, prefix: string): unknown {
  if (!(error instanceof ApiError) || !error.fieldErrors) return error;
  const errors = Object.fromEntries(Object.entries(error.fieldErrors).map(([k, v]) => [`${prefix}.${k}`, v]));
  return new ApiError(error.code, error.message, errors);
}

async function resolveChanges(op: Operation, a: Args, ctx: Context) {
  guard(ctx, op.scopes);
  const pivot = pivotOf(op);
  return inTransaction(ctx, async (tx) => {
    const parent = await findOwned(ctx, tx, op.parent!.def, a[op.parent!.def.param]);
    switch (op.kind) {
      case "attach":
        return link.attach(ctx, tx, pivot, parent.id, a.resources, a.duplicates ?? false);
      case "detach":
        return link.detach(ctx, tx, pivot, parent.id, a.resources);
      case "sync":
        return link.sync(ctx, tx, pivot, parent.id, a.resources, a.detaching ?? true);
      case "toggle":
        return link.toggle(ctx, tx, pivot, parent.id, a.resources);
      default:
        return link.updatePivot(ctx, tx, pivot, parent.id, idArg(op, a)!, a.pivot ?? {});
    }
  });
}
