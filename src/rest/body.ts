import { isPrototypeName, type FieldDef, type PivotDef, type ResourceDef } from "../resources/define.ts";
import type { Operation } from "../resources/operations.ts";
import { ApiError, FieldErrorBag, validationError } from "../core/errors.ts";
import { camel, snake } from "../core/names.ts";
import { fileFromDataUri, isFile } from "../files/storage.ts";

export type Body = Record<string, unknown>;

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Laravel accepts "5" for integers and "1"/"true" for booleans; so do we. Anything else goes to GraphQL as sent. */
export function coerce(f: Pick<FieldDef, "type">, value: unknown): unknown {
  if (f.type === "int" && typeof value === "string" && /^-?\d+$/.test(value.trim())) return Number(value);
  if (f.type === "boolean") {
    if (value === "1" || value === "true" || value === 1) return true;
    if (value === "0" || value === "false" || value === 0) return false;
  }
  if (f.type === "json" && typeof value === "string") {
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  }
  return value;
}

/** Known attribute names of a resource that a client may echo back: ignored, never an error. */
const knownKeys = (def: ResourceDef) =>
  new Set([
    "id",
    "label",
    "created_at",
    "updated_at",
    "pivot",
    ...Object.keys(def.fields).map(snake),
    ...Object.keys(def.computed ?? {}).map(snake),
    ...Object.keys(def.relations),
  ]);

/**
 * Keys of `value` that are names every JavaScript object answers to, with their errors, under `at`: such a key is no
 * attribute of anything, and a client sending one means something the API cannot do. Other unknown keys are
 * attributes a client echoes back, and ignored.
 */
export const prototypeNamesIn = (value: Body, at: string): Array<[string, string[]]> =>
  Object.keys(value)
    .filter(isPrototypeName)
    .map((key) => [at ? `${at}.${key}` : key, [`The ${key} field is not an attribute of this resource.`]]);

export function refusePrototypeNames(value: Body, at: string, bag: FieldErrorBag): void {
  for (const [key, [message]] of prototypeNamesIn(value, at)) bag.add(key, message);
}

/** The writable attributes of a body, named as GraphQL names them; everything else is dropped. */
export function inputOf(def: ResourceDef, body: Body): Body {
  const input: Body = {};
  for (const [name, f] of Object.entries(def.fields)) {
    if (f.writable === false || name === def.spread) continue;
    const key = snake(name);
    if (Object.hasOwn(body, key)) input[name] = coerce(f, body[key]);
  }
  for (const key of ["created_at", "updated_at"]) if (Object.hasOwn(body, key)) input[camel(key)] = body[key];
  for (const name of Object.keys(def.uploads ?? {})) {
    const key = snake(name);
    const value = Object.hasOwn(body, key) ? body[key] : undefined;
    if (isFile(value) || value === null) input[name] = value;
    else if (typeof value === "string" && value !== "") {
      const file = fileFromDataUri(value, key);
      if (!file) throw validationError({ [key]: [`The ${key} field must be a file.`] });
      input[name] = file;
    }
  }
  if (def.spread) {
    const known = knownKeys(def);
    const custom = Object.fromEntries(Object.entries(body).filter(([k]) => !known.has(k) && k !== "_method"));
    if (Object.keys(custom).length) input[def.spread] = custom;
  }
  return input;
}

/** Keys of a link row a client may echo back from a read beside its columns: ignored. */
const echoedLinkKeys = (pivot: PivotDef) =>
  new Set(["id", "created_at", "updated_at", snake(pivot.parentKey), snake(pivot.relatedKey)]);

/**
 * The link columns of a pivot object, named as GraphQL names them. A pivot object holds link columns only: any other
 * key (but those echoed from a read) is reported in `bag` under `at.<key>`.
 */
export function pivotValues(pivot: PivotDef, value: unknown, at: string, bag: FieldErrorBag): Body | undefined {
  if (!isObject(value)) return undefined;
  const columns = new Map(Object.entries(pivot.fields).map(([name, f]) => [snake(name), { name, f }]));
  const echoed = echoedLinkKeys(pivot);
  const out: Body = {};
  for (const [key, v] of Object.entries(value)) {
    const column = columns.get(key);
    if (column) out[column.name] = coerce(column.f, v);
    else if (!echoed.has(key))
      bag.add(
        `${at}.${key}`,
        `The ${key} field is not a link column. Link columns: ${[...columns.keys()].join(", ") || "none"}.`,
      );
  }
  return out;
}

/** `pivotValues` of one pivot object, refused at once when it holds anything else. */
export function pivotObject(pivot: PivotDef, value: unknown, at: string): Body | undefined {
  const bag = new FieldErrorBag();
  const values = pivotValues(pivot, value, at, bag);
  bag.throwIfAny();
  return values;
}

export function idOf(value: unknown): number | null {
  const n = typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value) : value;
  return typeof n === "number" && Number.isInteger(n) && n > 0 && n <= 2147483647 ? n : null;
}

function requireResources(body: Body): unknown {
  if (!Object.hasOwn(body, "resources") || body.resources === null)
    throw validationError({ resources: ["The resources field is required."] });
  return body.resources;
}

/**
 * `resources` as PERSCOM clients send it: a list of ids, a list of `{id, ...pivot}` objects, an
 * object keyed by id whose values are pivot objects (or `[]`), or a single id.
 */
export function linkItems(pivot: PivotDef | undefined, body: Body): Array<{ id: number; pivot?: Body }> {
  const raw = requireResources(body);
  const bag = new FieldErrorBag();
  const keyed = isObject(raw);
  // Each entry: the id, its pivot object, and where that object sits in the body.
  const entries: Array<[unknown, unknown, string]> = Array.isArray(raw)
    ? raw.map((v, index) =>
        isObject(v)
          ? isObject(v.pivot)
            ? [v.id, v.pivot, `resources.${index}.pivot`]
            : [v.id, v, `resources.${index}`]
          : [v, undefined, ""],
      )
    : keyed
      ? Object.entries(raw).map(([key, v]) => [key, v, `resources.${key}`])
      : [[raw, undefined, ""]];
  const items = entries.flatMap(([key, value, at], index) => {
    const id = idOf(key);
    if (id === null) {
      bag.add(`resources.${keyed ? key : index}`, "The resource id must be a positive integer.");
      return [];
    }
    const values = pivot ? pivotValues(pivot, value, at, bag) : undefined;
    return [pivot && Object.keys(pivot.fields).length ? { id, pivot: values } : { id }];
  });
  bag.throwIfAny();
  return items;
}

export function idList(body: Body): number[] {
  const raw = requireResources(body);
  const keyed = isObject(raw);
  const keys = Array.isArray(raw) ? raw : keyed ? Object.keys(raw) : [raw];
  const bag = new FieldErrorBag();
  const ids = keys.flatMap((k, index) => {
    const id = idOf(k);
    if (id === null) bag.add(`resources.${keyed ? k : index}`, "The resource id must be a positive integer.");
    return id === null ? [] : [id];
  });
  bag.throwIfAny();
  return ids;
}

/** Batch update: `{ "<id>": {attributes, pivot} }`. A list says no changes for any id, so it is refused, not taken as a no-op. */
export function batchItems(op: Operation, pivot: PivotDef | undefined, body: Body) {
  const raw = requireResources(body);
  if (!isObject(raw))
    throw validationError({
      resources: ["The resources field must be an object keyed by id, each value the changes of that row."],
    });
  const bag = new FieldErrorBag();
  const items = Object.entries(raw).flatMap(([key, value]) => {
    const id = idOf(key);
    if (id === null || !isObject(value)) {
      bag.add(
        `resources.${key}`,
        id === null ? "The resource id must be a positive integer." : "The resource must be an object.",
      );
      return [];
    }
    refusePrototypeNames(value, `resources.${key}`, bag);
    const input = inputOf(op.def, value);
    const pivotValuesOf = pivot ? pivotValues(pivot, value.pivot, `resources.${key}.pivot`, bag) : undefined;
    return [{ id, input, ...(pivot && Object.keys(pivot.fields).length ? { pivot: pivotValuesOf } : {}) }];
  });
  bag.throwIfAny();
  return items;
}

export const flag = (body: Body, key: string): boolean | undefined => {
  if (!Object.hasOwn(body, key)) return undefined;
  const v = coerce({ type: "boolean" }, body[key]);
  if (typeof v !== "boolean") throw validationError({ [key]: [`The ${key} field must be true or false.`] });
  return v;
};

/** Batch create: `{"resources": [{attributes, "pivot": {...}}, ...]}`. */
export function newItems(op: Operation, pivot: PivotDef | undefined, body: Body) {
  const raw = requireResources(body);
  if (!Array.isArray(raw)) throw validationError({ resources: ["The resources field must be a list of objects."] });
  const bag = new FieldErrorBag();
  const items = raw.flatMap((value, index) => {
    if (!isObject(value)) {
      bag.add(`resources.${index}`, "The resource must be an object.");
      return [];
    }
    refusePrototypeNames(value, `resources.${index}`, bag);
    const input = inputOf(op.def, value);
    const pivotValuesOf = pivot ? pivotValues(pivot, value.pivot, `resources.${index}.pivot`, bag) : undefined;
    return [pivot && Object.keys(pivot.fields).length ? { input, pivot: pivotValuesOf } : input];
  });
  bag.throwIfAny();
  return items;
}

/** The Orion search body, checked for shape here and for allowed fields by the resolver. */
export function searchVariables(body: Body): Body {
  const vars: Body = {};
  const list = (key: string) => {
    const value = body[key];
    if (value === undefined || value === null) return undefined;
    if (!Array.isArray(value)) throw validationError({ [key]: [`The ${key} field must be an array.`] });
    return value;
  };
  vars.filters = list("filters");
  vars.sort = list("sort");
  vars.scopes = list("scopes")?.map((s) =>
    isObject(s) && Object.hasOwn(s, "parameters") && !Array.isArray(s.parameters)
      ? { ...s, parameters: [s.parameters] }
      : s,
  );
  const aggregates = list("aggregates");
  if (aggregates?.length)
    throw validationError({ "aggregates.0.relation": ["No aggregates are available on this collection."] });
  const search = body.search;
  if (search !== undefined && search !== null) {
    if (!isObject(search)) throw validationError({ search: ["The search field must be an object."] });
    if (search.value !== undefined && search.value !== null && typeof search.value !== "string") {
      throw validationError({ "search.value": ["The search value must be a string."] });
    }
    vars.search = {
      value: search.value ?? null,
      caseSensitive: search.case_sensitive === undefined ? null : coerce({ type: "boolean" }, search.case_sensitive),
    };
  }
  return vars;
}

/** `page` and `limit`: positive integers (query string, or body for search); too large a limit is served as the maximum. */
export function pageParam(query: URLSearchParams, body: Body, name: "page" | "limit"): number | undefined {
  const raw = query.get(name) ?? (body[name] as string | number | undefined);
  if (raw === undefined || raw === null || raw === "") return undefined;
  const text = String(raw).trim();
  if (!/^\d+$/.test(text) || Number(text) < 1) {
    throw new ApiError("VALIDATION", `The ${name} field must be a positive integer.`, {
      [name]: [`The ${name} field must be a positive integer.`],
    });
  }
  return Math.min(Number(text), 2147483647);
}
