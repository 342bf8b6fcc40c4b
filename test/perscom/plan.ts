import { CATEGORY_LINKS, IMAGE_OWNERS, RECORDS, SetupError, type Organisation } from "./organisation.ts";
import type { JsonSchema, RefOp } from "./reference.ts";

/** The request that exercises one operation, and what to undo afterwards so other operations see the organisation unchanged. */
export interface Plan {
  method: string;
  url: string;
  body?: unknown;
  cleanup?: () => Promise<void>;
}

interface Relation {
  kind: "hasMany" | "m2m" | "belongsTo" | "hasOne";
  /** Collection of the related rows. */
  related: string;
  /** Foreign key naming the parent (has-many) or the related row (belongs-to). */
  fk?: string;
  /** Pivot values for the link (PERSCOM's pivotFillable), when the relation has any. */
  pivot?: (n: number) => Record<string, unknown>;
}

const order = (n: number) => ({ order: n });
const entry = (n: number) => ({ text: `Entry ${n}` });
const assignment = () => ({ due_at: "2031-06-01T00:00:00.000000Z" });

/** Nested routes of the reference, by `<parent collection>/<relation segment>`. */
export const RELATIONS: Record<string, Relation> = {
  ...Object.fromEntries(
    RECORDS.map((r) => [`users/${r}`, { kind: "hasMany", related: r, fk: "user_id" } satisfies Relation]),
  ),
  "forms/submissions": { kind: "hasMany", related: "submissions", fk: "form_id" },
  "events/image": { kind: "hasMany", related: "images" },
  ...Object.fromEntries(
    IMAGE_OWNERS.filter((o) => o !== "events").map((o) => [
      `${o}/image`,
      { kind: "hasOne", related: "images" } satisfies Relation,
    ]),
  ),
  "users/position": { kind: "belongsTo", related: "positions", fk: "position_id" },
  "users/rank": { kind: "belongsTo", related: "ranks", fk: "rank_id" },
  "users/specialty": { kind: "belongsTo", related: "specialties", fk: "specialty_id" },
  "users/unit": { kind: "belongsTo", related: "units", fk: "unit_id" },
  "users/status": { kind: "belongsTo", related: "statuses", fk: "status_id" },
  "users/attachments": { kind: "m2m", related: "attachments" },
  "users/fields": { kind: "m2m", related: "fields", pivot: order },
  "users/status-records": { kind: "m2m", related: "statuses", pivot: entry },
  "users/tasks": { kind: "m2m", related: "tasks", pivot: assignment },
  ...Object.fromEntries(
    CATEGORY_LINKS.map((r) => [`categories/${r}`, { kind: "m2m", related: r, pivot: order } satisfies Relation]),
  ),
  "submissions/statuses": { kind: "m2m", related: "statuses", pivot: entry },
  "newsfeed/likes": { kind: "m2m", related: "users" },
};

/** Words a `search.value` finds in the seeded rows, by searched collection. */
const SEARCH_TERMS: Record<string, string> = { announcements: "announcement", images: "image" };

const itemsOf = (schema: JsonSchema | undefined): JsonSchema => {
  const items = schema?.properties?.resources?.items;
  if (!items) throw new SetupError("the request schema has no resources.items to build batch items from");
  return items;
};
const valuesOf = (schema: JsonSchema | undefined): JsonSchema => {
  const values = schema?.properties?.resources?.additionalProperties;
  if (typeof values !== "object")
    throw new SetupError("the request schema has no keyed resources to build a batch update from");
  return values;
};
const must = (schema: JsonSchema | undefined): JsonSchema => {
  if (!schema) throw new SetupError("the operation documents no request body schema");
  return schema;
};

function searchBody(schema: JsonSchema | undefined, collection: string): Record<string, unknown> {
  const props = must(schema).properties ?? {};
  const body: Record<string, unknown> = {};
  if (props.scopes)
    body.scopes = [{ name: props.scopes.items?.properties?.name?.enum?.[0] ?? "enabled", parameters: [] }];
  if (props.filters) body.filters = [{ type: "and", field: "id", operator: ">=", value: "1" }];
  if (props.search) body.search = { value: SEARCH_TERMS[collection] ?? "a", case_sensitive: false };
  if (props.sort) body.sort = [{ field: "id", direction: "desc" }];
  return body;
}

/**
 * Plans the request for one reference operation: ids from the seeded organisation for reads and
 * edits, rows created just for it for anything destructive (delete, detach, sync, toggle, dissociate,
 * batch delete), so that no operation depends on another having run before or after it.
 */
export async function planOperation(
  op: RefOp,
  o: Organisation,
  schema: JsonSchema | undefined,
  include?: string,
): Promise<Plan> {
  const q = include ? `?include=${encodeURIComponent(include)}` : "";
  const segments = op.path.split("/").slice(2);
  const action = op.notes.app.orionAction;
  const [collection] = segments as [string, ...string[]];

  switch (collection) {
    case "me":
    case "settings":
      return { method: "GET", url: `/v2/${collection}${q}` };
    case "cache":
      return { method: "POST", url: `/v2/cache${q}` };
    case "roster":
      return { method: "GET", url: segments.length === 1 ? `/v2/roster${q}` : `/v2/roster/${o.need("groups")}${q}` };
    case "newsfeed":
      if (segments.length === 1) return { method: "GET", url: `/v2/newsfeed${q}` };
  }

  const nested = segments.length >= 3 && segments[1].startsWith("{");
  if (!nested) {
    const base = `/v2/${collection}`;
    switch (action) {
      case "index":
        return { method: "GET", url: `${base}${q}` };
      case "store":
        return { method: "POST", url: `${base}${q}`, body: o.body(must(schema)) };
      case "search":
        return { method: "POST", url: `${base}/search${q}`, body: searchBody(schema, collection) };
      case "show":
        return { method: "GET", url: `${base}/${o.need(collection)}${q}` };
      case "update":
        return { method: "PATCH", url: `${base}/${o.need(collection)}${q}`, body: o.body(must(schema)) };
      case "destroy":
        return { method: "DELETE", url: `${base}/${await o.create(collection)}${q}` };
      case "batchStore":
        return {
          method: "POST",
          url: `${base}/batch${q}`,
          body: { resources: [o.body(itemsOf(schema)), o.body(itemsOf(schema))] },
        };
      case "batchUpdate":
        return {
          method: "PATCH",
          url: `${base}/batch${q}`,
          body: { resources: { [o.need(collection)]: o.body(valuesOf(schema)) } },
        };
      case "batchDestroy":
        return { method: "DELETE", url: `${base}/batch${q}`, body: { resources: [await o.create(collection)] } };
    }
    throw new Error(`${op.key}: no plan for top-level action ${action}`);
  }

  const relationName = segments[2];
  const key = `${collection}/${relationName}`;
  const rel = RELATIONS[key];
  if (!rel) throw new Error(`${op.key}: unknown nested route ${key}`);
  const base = (parent: number) => `/v2/${collection}/${parent}/${relationName}`;
  const seededParent = () => o.need(collection === "newsfeed" ? "newsfeed" : collection);
  const freshParent = () => o.create(collection);
  const seededChild = () => (rel.kind === "belongsTo" ? o.need(rel.related) : o.link(key));
  /** Values that tie a body to its parent: the has-many foreign key, the link's pivot. */
  const ties = (parent: number): Record<string, unknown> => ({
    ...(rel.kind === "hasMany" && rel.fk ? { [rel.fk]: parent } : {}),
    ...(rel.kind === "m2m" && rel.pivot ? { pivot: rel.pivot(o.next()) } : {}),
  });
  /** A related row not linked to `parent` (for has-many: one belonging to another parent). */
  const unlinked = async (): Promise<number> => {
    if (rel.kind === "hasMany") {
      if (rel.related === "images") return o.create("images");
      if (rel.related === "submissions") return o.create("submissions", { form_id: o.need("scratchForm") });
      return o.create(rel.related, { user_id: o.need("other") });
    }
    return o.create(rel.related);
  };
  const resources = (ids: number[]) =>
    rel.pivot ? Object.fromEntries(ids.map((id) => [id, rel.pivot!(o.next())])) : ids;
  /** A related row newly linked to `parent`. */
  const linked = async (parent: number): Promise<number> => {
    if (rel.kind === "hasMany") {
      if (rel.related === "images") return o.createImage(collection, parent);
      return o.create(rel.related, { [rel.fk!]: parent });
    }
    if (key === "users/attachments") {
      return o.okId("POST", `/v2/users/${parent}/attachments`, o.body(o.createSchemaOf("attachments")));
    }
    const id = await unlinked();
    await o.attach(collection, parent, relationName, resources([id]));
    return id;
  };
  /** A fresh parent and its one-to-one related row. */
  const freshPair = async (): Promise<[number, number]> => {
    if (rel.kind === "belongsTo") {
      const child = await o.create(rel.related);
      return [await o.create(collection, { [rel.fk!]: child }), child];
    }
    const parent = await freshParent();
    return [parent, await o.createImage(collection, parent)];
  };

  switch (action) {
    case "index":
      return { method: "GET", url: `${base(seededParent())}${q}` };
    case "search":
      return { method: "POST", url: `${base(seededParent())}/search${q}`, body: searchBody(schema, rel.related) };
    case "store": {
      const parent = rel.kind === "hasOne" ? await freshParent() : seededParent();
      return { method: "POST", url: `${base(parent)}${q}`, body: o.body(must(schema), ties(parent)) };
    }
    case "show":
      return { method: "GET", url: `${base(seededParent())}/${seededChild()}${q}` };
    case "update": {
      const parent = seededParent();
      return { method: "PATCH", url: `${base(parent)}/${seededChild()}${q}`, body: o.body(must(schema), ties(parent)) };
    }
    case "destroy": {
      if (rel.kind === "belongsTo" || rel.kind === "hasOne") {
        const [parent, child] = await freshPair();
        return { method: "DELETE", url: `${base(parent)}/${child}${q}` };
      }
      const parent = seededParent();
      return { method: "DELETE", url: `${base(parent)}/${await linked(parent)}${q}` };
    }
    case "batchStore": {
      const parent = seededParent();
      const items = itemsOf(schema);
      return {
        method: "POST",
        url: `${base(parent)}/batch${q}`,
        body: { resources: [o.body(items, ties(parent)), o.body(items, ties(parent))] },
      };
    }
    case "batchUpdate": {
      const parent = seededParent();
      return {
        method: "PATCH",
        url: `${base(parent)}/batch${q}`,
        body: { resources: { [seededChild()]: o.body(valuesOf(schema), ties(parent)) } },
      };
    }
    case "batchDestroy": {
      if (rel.kind === "belongsTo") {
        const [parent, child] = await freshPair();
        return { method: "DELETE", url: `${base(parent)}/batch${q}`, body: { resources: [child] } };
      }
      const parent = seededParent();
      return { method: "DELETE", url: `${base(parent)}/batch${q}`, body: { resources: [await linked(parent)] } };
    }
    case "attach": {
      const parent = await freshParent();
      return { method: "POST", url: `${base(parent)}/attach${q}`, body: { resources: resources([await unlinked()]) } };
    }
    case "detach": {
      const parent = await freshParent();
      return { method: "DELETE", url: `${base(parent)}/detach${q}`, body: { resources: [await linked(parent)] } };
    }
    case "sync": {
      const parent = await freshParent();
      const kept = await linked(parent);
      return {
        method: "PATCH",
        url: `${base(parent)}/sync${q}`,
        body: { resources: resources([kept, await unlinked()]) },
      };
    }
    case "toggle": {
      const parent = await freshParent();
      const dropped = await linked(parent);
      return { method: "PATCH", url: `${base(parent)}/toggle${q}`, body: { resources: [dropped, await unlinked()] } };
    }
    case "updatePivot":
      return {
        method: "PATCH",
        url: `${base(seededParent())}/${seededChild()}/pivot${q}`,
        body: { pivot: rel.pivot ? rel.pivot(o.next()) : { order: o.next() } },
      };
    case "associate":
      return { method: "POST", url: `${base(seededParent())}/associate${q}`, body: { related_key: await unlinked() } };
    case "dissociate": {
      const parent = seededParent();
      const child = await linked(parent);
      // The dissociated row has lost its parent: remove it so the top-level lists keep only complete rows.
      return {
        method: "DELETE",
        url: `${base(parent)}/${child}/dissociate${q}`,
        cleanup: async () => void (await o.ok("DELETE", `/v2/${rel.related}/${child}`)),
      };
    }
  }
  throw new Error(`${op.key}: no plan for nested action ${action}`);
}
