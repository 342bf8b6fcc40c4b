import { parse, validate, type DocumentNode, type GraphQLSchema } from "graphql";
import type { Operation } from "../resources/operations.ts";
import { resourceNamed } from "../resources/index.ts";
import type { PivotDef } from "../resources/define.ts";
import { pascal } from "../graphql/names.ts";
import { includeTree } from "./includes.ts";
import { select, selectLink, type Shaper } from "./selection.ts";

export interface PreparedDocument {
  document: DocumentNode;
  operationName: string;
  /** Shapes each returned row (or null when rows need no change). */
  shape: Shaper;
}

const pivotOf = (op: Operation): PivotDef | undefined => (op.parent?.relation.kind === "belongsToMany" ? op.parent.relation.pivot : undefined);

/** GraphQL type of each argument the operation's field takes. */
function variableTypes(op: Operation): Record<string, string> {
  const vars: Record<string, string> = {};
  const pivot = pivotOf(op);
  if (op.parent) vars[op.parent.def.param] = "Int!";
  if (["show", "update", "delete", "pivot"].includes(op.kind)) {
    const oneToOne = op.parent?.relation.kind === "belongsTo" || op.parent?.relation.kind === "morphOne";
    vars[op.parent ? op.parent.route.param : op.def.param] = oneToOne ? "Int" : "Int!";
  }
  if (op.kind === "list") Object.assign(vars, { page: "Int", limit: "Int" });
  if (op.kind === "create" || op.kind === "update") vars.input = `${pascal(op.def.name)}Input${op.kind === "create" ? "!" : ""}`;
  const pivotInput = pivot && Object.keys(pivot.fields).length ? `${pivot.model}PivotInput` : null;
  if (pivotInput && (op.kind === "create" || op.kind === "update")) vars.pivot = pivotInput;
  if (pivot && op.kind === "pivot") vars.pivot = `${pivotInput ?? "JSON"}!`;
  if (pivot && ["attach", "sync", "toggle"].includes(op.kind)) vars.resources = `[${pivot.model}ItemInput!]!`;
  if (op.kind === "attach") vars.duplicates = "Boolean";
  if (op.kind === "sync") vars.detaching = "Boolean";
  if (op.kind === "detach" || op.kind === "batchDelete") vars.resources = "[Int!]!";
  if (op.kind === "batchUpdate") vars.resources = `[${pascal(op.def.name)}${pivot ? pivot.model : ""}BatchItemInput!]!`;
  return vars;
}

/** Builds the named GraphQL operation a REST route executes, for one normalised include list. */
export function buildDocument(op: Operation, includes: readonly string[]): { text: string; operationName: string; shape: Shaper } {
  const pivot = pivotOf(op);
  const vars = variableTypes(op);
  const declared = Object.entries(vars).map(([k, t]) => `$${k}: ${t}`).join(", ");
  const passed = Object.keys(vars).map((k) => `${k}: $${k}`).join(", ");
  let body: string;
  let shape: Shaper = null;
  if (op.returns === "changes") {
    body = "attached detached updated";
  } else {
    const built = pivot
      ? selectLink(pivot, includeTree(resourceNamed(pivot.related), includes, [pivot.as]))
      : select(op.def, includeTree(op.def, includes));
    shape = built.shape;
    body = op.returns === "page" || op.returns === "linkPage" ? `nodes { ${built.selection} } totalCount page perPage lastPage` : built.selection;
  }
  const operationName = `Rest_${op.field}${includes.length ? `_${includes.join("_").replace(/[^A-Za-z0-9_]/g, "_")}` : ""}`;
  const text = `${op.root} ${operationName}${declared ? `(${declared})` : ""} { result: ${op.field}${passed ? `(${passed})` : ""} { ${body} } }`;
  return { text, operationName, shape };
}

/** Documents by route and include set: parsed and validated once, then reused for every request. */
export class DocumentCache {
  private readonly cache = new Map<string, PreparedDocument>();
  constructor(private readonly schema: GraphQLSchema) {}

  get(op: Operation, includes: readonly string[]): PreparedDocument {
    const key = `${op.field}|${includes.join(",")}`;
    let prepared = this.cache.get(key);
    if (!prepared) {
      const { text, operationName, shape } = buildDocument(op, includes);
      const document = parse(text);
      const errors = validate(this.schema, document);
      if (errors.length) throw new Error(`Generated document for ${op.field} is invalid: ${errors.map((e) => e.message).join("; ")}\n${text}`);
      prepared = { document, operationName, shape };
      this.cache.set(key, prepared);
    }
    return prepared;
  }
}
