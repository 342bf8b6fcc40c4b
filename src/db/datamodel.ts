import { getDatamodel } from "../generated/pothos-types.ts";

/**
 * The models of the Prisma schema, from Prisma's datamodel (DMMF), as our SQL reads and writes them: each model's
 * columns and its relations as joins. The reader, the writer and the statements of our own elsewhere look columns up
 * here.
 */

export interface Scalar {
  name: string;
  type: string;
  required: boolean;
  /** `@default(...)` (a database default, or `now()` for DateTime columns) or `@updatedAt`. */
  generated: "default" | "now" | "updatedAt" | null;
}

/** A relation as a join: `target.to = this.from`. */
export interface Relation {
  name: string;
  target: string;
  list: boolean;
  from: string;
  to: string;
}

export interface Model {
  name: string;
  scalars: Scalar[];
  scalarByName: Map<string, Scalar>;
  relations: Map<string, Relation>;
}

/** A field of Prisma's datamodel as Pothos's generated module carries it: the parts read here. */
interface DatamodelField {
  name: string;
  kind: "scalar" | "enum" | "object" | "unsupported";
  type: string;
  isRequired: boolean;
  isList: boolean;
  isUpdatedAt?: boolean;
  hasDefaultValue?: boolean;
  relationName?: string | null;
  relationFromFields?: readonly string[];
}

function loadModels(): Map<string, Model> {
  const source = getDatamodel().datamodel.models as unknown as Record<string, { fields: DatamodelField[] }>;
  const models = new Map<string, Model>();
  for (const [name, { fields }] of Object.entries(source)) {
    const scalars: Scalar[] = fields
      .filter((f) => f.kind === "scalar" || f.kind === "enum")
      .map((f) => ({
        name: f.name,
        type: f.type,
        required: f.isRequired,
        generated: f.isUpdatedAt ? "updatedAt" : !f.hasDefaultValue ? null : f.type === "DateTime" ? "now" : "default",
      }));
    const relations = new Map<string, Relation>();
    for (const f of fields.filter((f) => f.kind === "object")) {
      if (f.relationFromFields?.length === 1) {
        relations.set(f.name, { name: f.name, target: f.type, list: false, from: f.relationFromFields[0], to: "id" });
        continue;
      }
      const other = source[f.type]?.fields.find(
        (o) => o.kind === "object" && o.relationName === f.relationName && o.relationFromFields?.length === 1,
      );
      if (other)
        relations.set(f.name, {
          name: f.name,
          target: f.type,
          list: f.isList,
          from: "id",
          to: other.relationFromFields![0],
        });
    }
    models.set(name, { name, scalars, scalarByName: new Map(scalars.map((s) => [s.name, s])), relations });
  }
  return models;
}

export const models = loadModels();
