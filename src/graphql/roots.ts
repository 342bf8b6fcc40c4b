import { brandWithType } from "@pothos/core";
import { decodeGlobalID } from "@pothos/plugin-relay";
import type { GraphQLResolveInfo } from "graphql";
import { queryFromInfo } from "@pothos/plugin-prisma";
import type { ResourceDef } from "../resources/define.ts";
import { resources, resourceNamed } from "../resources/index.ts";
import { operations, type Operation } from "../resources/operations.ts";
import { validationError } from "../core/errors.ts";
import { guard, holds, owned } from "../data/access.ts";
import { fieldDescription } from "../resources/descriptions.ts";
import type { Builder } from "./builder.ts";
import {
  dynamic,
  type DynamicFieldBuilder,
  type DynamicInputFieldBuilder,
  type FieldMap,
  type InputFieldMap,
  type Row,
} from "./pothos-dynamic.ts";
import type { Context } from "../request/context.ts";
import { enumRef } from "./enums.ts";
import { jsonInputType } from "./json-shapes.ts";
import { scalarOf, type ObjectRefs } from "./objects.ts";
import { pascal } from "../core/names.ts";
import { registerRootField } from "./relation-scopes.ts";
import { CHANGE_EVENT, changeEventNode } from "./changes.ts";
import { addPublicLinkMutations } from "./kinds/links.ts";
import type { PublicParts } from "./kinds/shared.ts";
import { facadeKinds } from "./kinds/index.ts";

/*
 * The public graph's root fields, generated from the registry: `node`/`nodes`, `me` here; one connection and one
 * lookup per resource, the views, and payload mutations (create, update, delete, batches, actions, commands, and the
 * link operations of many-to-many relations), each made by its operation's kind (`addPublic`, src/graphql/kinds/),
 * run by the same resolvers as the REST facade's internal fields where the two take the same arguments (the link
 * kinds).
 */

/**
 * A root field's description: what it does, then the REST route that does the same (and `also`, the other routes that
 * run it) and the scopes both need.
 */
const withRoute = (text: string, op: Operation | undefined, also = "") =>
  op ? `${text}\n\nREST: ${op.method} /{version}${op.path}${also} — scopes: ${op.scopes.join(", ") || "none"}` : text;

/** The top-level operation of `kind` on `def` (its scopes are the public field's). */
const topLevel = (def: ResourceDef, kind: Operation["kind"]) =>
  operations.find((op) => op.def === def && op.kind === kind && !op.parent && !op.view);

export function addRootFields(builder: Builder, refs: ObjectRefs): void {
  const b = dynamic(builder);
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
      const show =
        topLevel(def, "show") ?? topLevel(def, "list") ?? operations.find((op) => op.def === def && op.kind === "list");
      // A key that may not view the type learns nothing of the row: null, as for a row that does not exist. (A selection
      // on the type itself, `... on User`, is refused before execution by the relation scopes, with FORBIDDEN.)
      if (show && show.scopes.some((s) => !holds(ctx.auth!, s))) continue;
      wanted.set(typename, [...(wanted.get(typename) ?? []), rowId]);
    }
    const found = new Map<string, Row>();
    await Promise.all(
      [...wanted].map(async ([typename, rowIds]) => {
        const def = nodeTypes.get(typename)!;
        const query = queryFromInfo({ context: ctx, info, typeName: typename });
        const rows: Row[] = await ctx.store.findMany(def.model, {
          ...query,
          where: owned(ctx, def, { id: { in: rowIds } }),
        });
        for (const row of rows) {
          brandWithType(row, typename as never);
          found.set(`${typename}:${String(row.id)}`, row);
        }
      }),
    );
    // Change events are no resource's rows: each is read from the outbox, shown if the key may see it.
    return Promise.all(
      ids.map(async ({ typename, id }) =>
        typename === CHANGE_EVENT ? changeEventNode(ctx, Number(id)) : (found.get(`${typename}:${Number(id)}`) ?? null),
      ),
    );
  }
  const parseId = (global: string) => {
    try {
      return decodeGlobalID(global);
    } catch {
      return { typename: "", id: "" };
    }
  };

  const queryRef = b.queryType({
    description:
      "Reads: every resource as a connection and by row id, any row by its global id, and the key's own user.",
  });
  b.mutationType({
    description:
      "Writes: create, update and delete every resource, batches, and the links of many-to-many relations; each answers a payload.",
  });

  b.queryField("node", (t) =>
    t.field({
      type: b.nodeInterfaceRef(),
      nullable: true,
      description:
        "The row with this global id, of any type; null when it does not exist or belongs to another account.",
      args: { id: t.arg.id({ required: true, description: "A global id (any row's `id`)." }) },
      resolve: async (_root: unknown, args: { id: string }, ctx: Context, info: GraphQLResolveInfo) =>
        (await loadNodes(ctx, [parseId(String(args.id))], info))[0],
    }),
  );
  b.queryField("nodes", (t) =>
    t.field({
      type: [b.nodeInterfaceRef()],
      nullable: { list: false, items: true },
      description:
        "The rows with these global ids, in the same order; null for each that does not exist or belongs to another account.",
      args: { ids: t.arg.idList({ required: true, description: `Global ids: at most the page maximum.` }) },
      resolve: (_root: unknown, args: { ids: string[] }, ctx: Context, info: GraphQLResolveInfo) => {
        if (args.ids.length > ctx.config.maxPageSize)
          throw validationError({ ids: [`ids must not have more than ${ctx.config.maxPageSize} items.`] });
        return loadNodes(
          ctx,
          args.ids.map((id) => parseId(String(id))),
          info,
        );
      },
    }),
  );
  registerRootField("node", { scopes: [], anyType: true });
  registerRootField("nodes", { scopes: [], anyType: true });

  const user = resourceNamed("user");
  b.queryField("me", (t) =>
    t.field({
      type: refs.objects.get("user"),
      nullable: true,
      description: "The user the API key acts for; null when the key acts for no user.",
      resolve: async (_root: unknown, _args: unknown, ctx: Context, info: GraphQLResolveInfo) => {
        guard(ctx, []);
        if (ctx.auth!.userId == null) return null;
        return ctx.store.findFirst(user.model, {
          ...queryFromInfo({ context: ctx, info }),
          where: owned(ctx, user, { id: ctx.auth!.userId }),
        });
      },
    }),
  );
  registerRootField("me", { scopes: [], def: user });

  for (const def of resources) if (!def.link) addOperations(def);

  function payload(name: string, fields: (t: DynamicFieldBuilder) => FieldMap, description: string) {
    return b.objectRef(name).implement({
      description,
      fields: (t) => ({
        ...fields(t),
        query: t.field({
          type: queryRef,
          description: "The query root, to read anything else after the change in the same response.",
          resolve: () => ({}),
        }),
      }),
    });
  }

  function inputFields(t: DynamicInputFieldBuilder, def: ResourceDef, create: boolean) {
    const fields: InputFieldMap = {};
    for (const [key, f] of Object.entries(def.fields)) {
      if (f.writable === false || f.hidden) continue;
      const required = create && !!f.required && !f.defaultsToCaller && !f.autoOrder;
      const type = f.enum ? enumRef(builder, f.enum) : f.type === "json" ? jsonInputType(builder, f) : scalarOf(f);
      fields[key] = t.field({ type, required, description: fieldDescription(def, key, f) });
    }
    for (const [name, upload] of Object.entries(def.uploads ?? {})) {
      fields[name] = t.field({
        type: "File",
        required: create && !!upload.required,
        description: `The ${upload.image ? "image" : "file"} to upload (GraphQL multipart request).`,
      });
    }
    return fields;
  }

  /**
   * A resource's root fields, each top-level operation's (an action's on its subject, a view's on its resource) by its
   * kind: the reads first, then the mutations, and its links'.
   */
  function addOperations(def: ResourceDef) {
    const parts: PublicParts = { builder, refs, payload, withRoute, inputFields, topLevel };
    const own = operations.filter((op) => !op.parent && (op.subject ?? op.def) === def);
    for (const op of own) if (op.root === "query") facadeKinds[op.kind].addPublic?.(parts, op);
    for (const op of own) if (op.root === "mutation") facadeKinds[op.kind].addPublic?.(parts, op);
    addPublicLinkMutations(parts, def);
  }
}
