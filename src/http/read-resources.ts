import {
  getNamedType,
  isAbstractType,
  isObjectType,
  Kind,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type GraphQLSchema,
} from "graphql";
import { pascal } from "../core/names.ts";
import { linkResourceOf, resources } from "../resources/index.ts";
import type { ChangeAction } from "../core/events.ts";

// What a cached response depends on, and what a committed event changes, both as resource names (`ResourceDef.name`,
// the `resource` of an event): a response is stale once any resource it read has changed in its account.

const resourceOfType = new Map(resources.map((def) => [pascal(def.name), def.name]));

/**
 * Rows a resource's fields read beyond its GraphQL relations (computed fields with `readsOtherRows`): the user's
 * last rank and assignment change dates come from their records.
 */
const READS_BEYOND_RELATIONS: Record<string, string[]> = { user: ["rankRecord", "assignmentRecord"] };

const readByDocument = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, string[]>>();

/**
 * The resources a document reads, sorted: the resource of every object type any of its fields returns (through every
 * relation and fragment; both ends of a union or interface), with what those read beyond their relations. Worked out
 * once per schema and document object (prepared REST documents, Yoga's parsed-document cache).
 */
export function resourcesRead(schema: GraphQLSchema, document: DocumentNode): string[] {
  let bySchema = readByDocument.get(schema);
  if (!bySchema) readByDocument.set(schema, (bySchema = new WeakMap()));
  let read = bySchema.get(document);
  if (read) return read;
  const names = new Set<string>();
  const add = (typeName: string) => {
    const resource = resourceOfType.get(typeName);
    if (!resource) return;
    names.add(resource);
    for (const more of READS_BEYOND_RELATIONS[resource] ?? []) names.add(more);
  };
  const typeInfo = new TypeInfo(schema);
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      [Kind.FIELD]() {
        const type = typeInfo.getType();
        if (!type) return;
        const named = getNamedType(type);
        if (isObjectType(named)) add(named.name);
        else if (isAbstractType(named)) for (const member of schema.getPossibleTypes(named)) add(member.name);
      },
    }),
  );
  read = [...names].sort();
  bySchema.set(document, read);
  return read;
}

/** For each resource, the others a change of one of its rows can change too, by kind of change. */
function changedWith(): Record<"deleted" | "written", Map<string, Set<string>>> {
  const written = new Map<string, Set<string>>();
  const deleted = new Map<string, Set<string>>();
  const add = (map: Map<string, Set<string>>, resource: string, ...others: string[]) => {
    let set = map.get(resource);
    if (!set) map.set(resource, (set = new Set([resource])));
    for (const other of others) set.add(other);
  };
  for (const def of resources) {
    add(written, def.name);
    add(deleted, def.name);
    for (const relation of Object.values(def.relations)) {
      if (relation.kind === "belongsToMany") {
        // A link row (a pivot) is read as its two ends: writing one changes what both show.
        const link = linkResourceOf(relation.pivot).name;
        add(written, link, def.name, relation.target);
        add(deleted, link, def.name, relation.target);
        add(deleted, relation.target, link, def.name);
        add(deleted, def.name, link, relation.target);
      } else if (relation.kind === "belongsTo") {
        // Deleting the row a foreign key names sets the key to null or deletes the row (the schema's onDelete),
        // without an event of its own.
        add(deleted, relation.target, def.name);
      } else if (relation.kind !== "morphTo") {
        add(deleted, def.name, relation.target);
      }
    }
  }
  for (const [resource, reads] of Object.entries(READS_BEYOND_RELATIONS))
    for (const read of reads) {
      add(written, read, resource);
      add(deleted, read, resource);
    }
  return { written, deleted };
}

let changes: ReturnType<typeof changedWith> | undefined;

/** The resources an event of `action` on `resource` may change: itself, and what its writes change without events. */
export function resourcesChanged(resource: string, action: ChangeAction): ReadonlySet<string> {
  changes ??= changedWith();
  const map = action === "deleted" ? changes.deleted : changes.written;
  return map.get(resource) ?? new Set([resource]);
}
