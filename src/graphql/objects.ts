import type { Page } from "../data/access.ts";
import { relationField, type FieldDef, type ResourceDef } from "../resources/define.ts";
import { linkResourceOf, resourceNamed, resources } from "../resources/index.ts";
import type { Builder } from "./builder.ts";
import { loadMorphChildren, loadMorphOwner, TYPE } from "./loaders.ts";
import { pascal } from "./names.ts";
import { sizedElsewhere } from "./cost.ts";
import { labelOf } from "./attributes.ts";
import { computedDescription, fieldDescription, relationDescription, resourceDescription } from "../resources/descriptions.ts";

export const scalarOf = (f: Pick<FieldDef, "type">) =>
  (({ string: "String", text: "String", int: "Int", boolean: "Boolean", datetime: "DateTime", json: "JSON" }) as const)[f.type];

export interface ObjectRefs {
  objects: Map<string, any>;
  unions: Map<string, any>;
  pages: Map<string, any>;
}

/** Resources that can own a polymorphic child of `target` (e.g. everything with comments). */
export const morphOwnersOf = (target: string) =>
  resources.filter((r) => Object.values(r.relations).some((rel) => (rel.kind === "morphOne" || rel.kind === "morphMany") && rel.target === target));

/** One GraphQL object type per resource, with its columns, `label`, computed fields and relations. */
export function addObjectTypes(builder: Builder): ObjectRefs {
  const b = builder as any;
  const objects = new Map<string, any>();
  const unions = new Map<string, any>();
  const pages = new Map<string, any>();
  for (const def of resources) objects.set(def.name, b.prismaObject(def.model, { name: pascal(def.name), description: resourceDescription(def), fields: (t: any) => fieldsOf(t, def) }));

  function unionFor(target: string) {
    if (!unions.has(target)) {
      const owners = morphOwnersOf(target);
      unions.set(target, b.unionType(`${pascal(target)}Owner`, {
        description: `Any record that can own a ${target}.`,
        types: owners.map((o) => objects.get(o.name)),
        resolveType: (value: any) => value[TYPE],
      }));
    }
    return unions.get(target);
  }

  function fieldsOf(t: any, def: ResourceDef) {
    const fields: Record<string, unknown> = {
      id: t.exposeInt("id", { description: `The ${def.label.toLowerCase()}'s id, unique within the account.` }),
      ...(def.link ? {} : {
        label: t.string({ description: `A readable name of the row: "${def.label}: 12".`, resolve: (row: any) => labelOf(def, row) }),
      }),
    };
    for (const [key, f] of Object.entries(def.fields)) {
      if (f.hidden) continue;
      fields[key] = t.expose(key, { type: scalarOf(f), nullable: !!f.nullable || f.type === "json", description: fieldDescription(def, key, f) });
    }
    fields.createdAt = t.expose("createdAt", { type: "DateTime", description: "When the row was created (UTC)." });
    fields.updatedAt = t.expose("updatedAt", { type: "DateTime", description: "When the row last changed (UTC)." });
    for (const [key, c] of Object.entries(def.computed ?? {})) {
      fields[key] = t.field({
        type: ({ json: "JSON", boolean: "Boolean", datetime: "DateTime", string: "String" } as const)[c.type],
        nullable: !!c.nullable,
        description: computedDescription(def, key, c),
        resolve: (row: any, _args: unknown, ctx: any) => c.resolve(row, ctx),
      });
    }
    for (const rel of Object.values(def.relations)) {
      const description = relationDescription(def, rel);
      switch (rel.kind) {
        case "belongsTo":
          fields[rel.field] = t.relation(rel.field, { nullable: true, description });
          break;
        case "hasMany":
        case "belongsToMany": {
          const orderBy = rel.kind === "hasMany" ? rel.orderBy : rel.pivot.orderBy;
          const query = orderBy ? { query: { orderBy } } : {};
          if (!rel.filter) {
            fields[rel.field] = t.relation(rel.field, { ...query, description });
            break;
          }
          // A filtered subset loads the same relation with the same arguments (so Pothos merges the two
          // into one query) and filters the rows here; different `where`s would force a query per row.
          const { where } = rel.filter;
          const target = rel.kind === "hasMany" ? rel.target : linkResourceOf(rel.pivot).name;
          fields[relationField(rel)] = t.field({
            type: [objects.get(target)],
            description,
            select: (_args: unknown, _ctx: unknown, nested: (q: object) => unknown) => ({ [rel.field]: nested(orderBy ? { orderBy } : {}) }),
            resolve: (row: any) => (row[rel.field] as Array<Record<string, unknown>>).filter((r) => matches(r, where)),
          });
          break;
        }
        case "morphOne":
        case "morphMany": {
          const target = resourceNamed(rel.target);
          const one = rel.kind === "morphOne";
          fields[rel.field] = t.field({
            type: one ? objects.get(target.name) : [objects.get(target.name)],
            nullable: one,
            description,
            resolve: (row: any, _args: unknown, ctx: any, info: any) => loadMorphChildren(ctx, def, target, one, row.id, info),
          });
          break;
        }
        case "morphTo":
          fields[rel.field] = t.field({
            type: unionFor(rel.morphRelation),
            nullable: true,
            description,
            resolve: (row: any, _args: unknown, ctx: any, info: any) => loadMorphOwner(ctx, rel.field, row.modelType, row.modelId, info),
          });
          break;
      }
    }
    return fields;
  }

  return { objects, unions, pages };
}

/** Whether a row satisfies a relation filter: column equality, or `{ not: value }`. */
function matches(row: Record<string, unknown>, where: Record<string, unknown>): boolean {
  return Object.entries(where).every(([key, wanted]) =>
    wanted !== null && typeof wanted === "object" && "not" in wanted ? row[key] !== (wanted as { not: unknown }).not : row[key] === wanted,
  );
}

/** `<Type>Page`: one page of a list, with what REST needs for `links` and `meta`. */
export function pageType(builder: Builder, refs: ObjectRefs, def: ResourceDef) {
  if (!refs.pages.has(def.name)) {
    const b = builder as any;
    const rows = `${def.label.toLowerCase()}s`;
    refs.pages.set(def.name, b.objectType(b.objectRef(`${pascal(def.name)}Page`), {
      description: `One page of ${rows}, with the counts to page through the rest.`,
      fields: (t: any) => ({
        nodes: t.field({ type: [refs.objects.get(def.name)], complexity: sizedElsewhere, description: `The ${rows} of this page, in order.`, resolve: (p: any) => p.nodes }),
        totalCount: t.int({ description: `How many ${rows} match, over all pages.`, resolve: (p: Page) => p.totalCount() }),
        page: t.exposeInt("page", { description: "This page's number, from 1." }),
        perPage: t.exposeInt("perPage", { description: "The most rows a page holds (`limit`)." }),
        lastPage: t.int({ description: "The number of the last page (at least 1).", resolve: async (p: Page) => Math.max(1, Math.ceil((await p.totalCount()) / p.perPage)) }),
      }),
    }));
  }
  return refs.pages.get(def.name);
}
