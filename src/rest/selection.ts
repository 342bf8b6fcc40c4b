import { relationField, type PivotDef, type ResourceDef } from "../resources/define.ts";
import { linkResourceOf, resourceNamed } from "../resources/index.ts";
import { morphOwnersOf } from "../graphql/objects.ts";
import { pascal, snake } from "../graphql/names.ts";
import type { IncludeTree } from "./includes.ts";

type Row = Record<string, any>;
/** Post-processing of one selected object into PERSCOM's shape; null when the object is already right. */
export type Shaper = ((row: Row) => Row) | null;

export interface Built {
  selection: string;
  shape: Shaper;
}

const RELATED = "__related";

const alias = (name: string) => (snake(name) === name ? name : `${snake(name)}: ${name}`);

/** The columns of a resource, aliased to PERSCOM's snake_case names. */
function scalars(def: ResourceDef): string[] {
  const fields = ["id", ...(def.link ? [] : ["label"])];
  for (const [name, f] of Object.entries(def.fields)) if (!f.hidden) fields.push(alias(name));
  for (const name of Object.keys(def.computed ?? {})) fields.push(alias(name));
  fields.push("created_at: createdAt", "updated_at: updatedAt");
  return fields;
}

/** Selection and shaper of `def` with the relations in `tree`. */
export function select(def: ResourceDef, tree: IncludeTree): Built {
  const parts = scalars(def);
  const shapers: Array<(row: Row) => void> = [];
  if (def.spread) {
    const column = snake(def.spread);
    shapers.push((row) => {
      const values = row[column];
      delete row[column];
      if (values && typeof values === "object") for (const [k, v] of Object.entries(values)) if (!(k in row)) row[k] = v;
    });
  }
  for (const [name, sub] of tree) {
    const relation = def.relations[name]!;
    if (relation.kind === "morphTo") {
      // Owner types may share a column name with different types (`type` is Int on one, String on
      // another), which GraphQL forbids under one response key: prefix each with its type, then strip.
      const owners = morphOwnersOf(relation.morphRelation);
      const fragments = owners.map((o) => `... on ${pascal(o.name)} { ${scalars(o).map((f) => `${pascal(o.name)}__${f.includes(":") ? f : `${f}: ${f}`}`).join(" ")} }`).join(" ");
      parts.push(`${name}: ${relation.field} { __typename ${fragments} }`);
      shapers.push((row) => {
        const owner = row[name];
        if (!owner) return;
        const prefix = `${owner.__typename}__`;
        row[name] = Object.fromEntries(Object.entries(owner).filter(([k]) => k.startsWith(prefix)).map(([k, v]) => [k.slice(prefix.length), v]));
      });
      continue;
    }
    if (relation.kind === "belongsToMany") {
      const built = selectLink(relation.pivot, sub);
      parts.push(`${name}: ${relationField(relation)} { ${built.selection} }`);
      const flatten = built.shape!;
      shapers.push((row) => {
        row[name] = (row[name] as Row[]).map(flatten);
      });
      continue;
    }
    const built = select(resourceNamed(relation.target), sub);
    parts.push(`${name}: ${relationField(relation)} { ${built.selection} }`);
    if (built.shape) {
      const shape = built.shape;
      shapers.push((row) => {
        const value = row[name];
        if (Array.isArray(value)) row[name] = value.map(shape);
        else if (value) row[name] = shape(value);
      });
    }
  }
  return {
    selection: parts.join(" "),
    shape: shapers.length ? (row) => (shapers.forEach((s) => s(row)), row) : null,
  };
}

/**
 * A link row shown as PERSCOM shows it: the related row, with the link's columns under the pivot
 * accessor (`pivot`, `record`, `assignment`) when that accessor is requested or always shown.
 */
export function selectLink(pivot: PivotDef, tree: IncludeTree): Built {
  const showPivot = pivot.always || tree.has(pivot.as);
  const rest: IncludeTree = new Map([...tree].filter(([k]) => k !== pivot.as));
  const related = select(resourceNamed(pivot.related), rest);
  const parts = [`${RELATED}: ${pivot.related} { ${related.selection} }`];
  if (showPivot) parts.push(scalars(linkResourceOf(pivot)).join(" "));
  const shapeRelated = related.shape;
  return {
    selection: parts.join(" "),
    shape: (link) => {
      const row = shapeRelated ? shapeRelated(link[RELATED]) : link[RELATED];
      if (showPivot) {
        const { [RELATED]: _, ...columns } = link;
        row[pivot.as] = columns;
      }
      return row;
    },
  };
}
