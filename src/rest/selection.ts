import type { PivotDef, ResourceDef } from "../resources/define.ts";
import { resourceNamed } from "../resources/index.ts";
import { restRelationField } from "../graphql/objects.ts";
import { morphOwnersOf } from "../resources/index.ts";
import { spreadAttribute } from "../data/attributes.ts";
import { pascal, snake } from "../core/names.ts";
import type { IncludeTree } from "./includes.ts";

/** A row of a GraphQL result, by field name (JSON values). */
type Row = Record<string, unknown>;
/** Turns one selected object into PERSCOM's shape. */
export type Shaper = (row: Row) => Row;

export interface Built {
  selection: string;
  shape: Shaper;
}

const RELATED = "__related";

/**
 * A row's columns and computed fields come in one `attributes` value, already in PERSCOM's shape; the shaper takes
 * that object and adds the row's relations to it.
 */
const ATTRIBUTES = "attributes";

/** Selection and shaper of `def` with the relations in `tree`. */
export function select(def: ResourceDef, tree: IncludeTree): Built {
  const parts = [ATTRIBUTES];
  const relations: Array<(out: Row, row: Row) => void> = [];
  for (const [name, sub] of tree) {
    const relation = def.relations[name];
    if (relation.kind === "morphTo") {
      const fragments = morphOwnersOf(relation.morphRelation)
        .map((o) => `... on ${pascal(o.name)} { ${ATTRIBUTES} }`)
        .join(" ");
      parts.push(`${name}: ${relation.field} { ${fragments} }`);
      relations.push((out, row) => void (out[name] = row[name] ? (row[name] as Row)[ATTRIBUTES] : null));
      continue;
    }
    const built =
      relation.kind === "belongsToMany" ? selectLink(relation.pivot, sub) : select(resourceNamed(relation.target), sub);
    parts.push(`${name}: ${restRelationField(relation)} { ${built.selection} }`);
    const shape = built.shape;
    relations.push((out, row) => {
      const value = row[name];
      out[name] = Array.isArray(value) ? (value as Row[]).map(shape) : value ? shape(value as Row) : value;
    });
  }
  const spread = def.spread && snake(def.spread);
  return {
    selection: parts.join(" "),
    shape: (row) => {
      const out = row[ATTRIBUTES] as Row;
      for (const add of relations) add(out, row);
      if (spread) spreadAttribute(out, spread);
      return out;
    },
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
  if (showPivot) parts.push(ATTRIBUTES);
  const shapeRelated = related.shape;
  return {
    selection: parts.join(" "),
    shape: (link) => {
      const row = shapeRelated(link[RELATED] as Row);
      if (showPivot) row[pivot.as] = link[ATTRIBUTES];
      return row;
    },
  };
}
