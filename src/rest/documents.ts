import { parse, specifiedRules, validate, type DocumentNode, type GraphQLSchema, type ValidationRule } from "graphql";
import { pivotOf, type Operation } from "../resources/operations.ts";
import { resourceNamed } from "../resources/index.ts";
import { includeTree } from "./includes.ts";
import { ApiError, validationError } from "../core/errors.ts";
import { select, selectLink, type Shaper } from "./selection.ts";
import { restRootField } from "../core/names.ts";
import { markFixedSelections } from "../graphql/fixed-plans.ts";
import { answers } from "./kinds.ts";

export interface PreparedDocument {
  document: DocumentNode;
  operationName: string;
  /** Shapes each returned row; null when the operation returns no rows. */
  shape: Shaper | null;
}

/** `$name: Type` for each argument of the operation's root field, as the schema declares it. */
function variableTypes(schema: GraphQLSchema, op: Operation): Record<string, string> {
  const root = op.root === "query" ? schema.getQueryType() : schema.getMutationType();
  const field = root?.getFields()[restRootField(op.field)];
  if (!field) throw new Error(`The schema has no ${op.root} field ${op.field}`);
  return Object.fromEntries(field.args.map((a) => [a.name, String(a.type)]));
}

/** Builds the named GraphQL operation a REST route executes, for one normalised include list. */
export function buildDocument(
  schema: GraphQLSchema,
  op: Operation,
  requested: readonly string[],
): { text: string; operationName: string; shape: Shaper | null } {
  const pivot = pivotOf(op);
  const includes = op.view?.alwaysIncludes ? [...new Set([...requested, ...op.view.alwaysIncludes])].sort() : requested;
  const vars = variableTypes(schema, op);
  const declared = Object.entries(vars)
    .map(([k, t]) => `$${k}: ${t}`)
    .join(", ");
  const passed = Object.keys(vars)
    .map((k) => `${k}: $${k}`)
    .join(", ");
  const { body, shape } = answers[op.returns].selection(
    () =>
      pivot
        ? selectLink(pivot, includeTree(resourceNamed(pivot.related), includes, [pivot.as]))
        : select(op.def, includeTree(op.def, includes)),
    op,
  );
  const operationName = `Rest_${op.field}${requested.length ? `_${requested.join("_").replace(/[^A-Za-z0-9_]/g, "_")}` : ""}`;
  const text = `${op.root} ${operationName}${declared ? `(${declared})` : ""} { result: ${restRootField(op.field)}${passed ? `(${passed})` : ""} { ${body} } }`;
  return { text, operationName, shape };
}

/** Documents by route and include set: parsed and validated once, then reused for every request. */
export class DocumentCache {
  private readonly cache = new Map<string, PreparedDocument>();
  private readonly rules: readonly ValidationRule[];
  /** `limits`: the query-shape rules `/graphql` enforces, so a REST route can never build past them. */
  constructor(
    private readonly schema: GraphQLSchema,
    limits: readonly ValidationRule[] = [],
  ) {
    this.rules = [...specifiedRules, ...limits];
  }

  get(op: Operation, includes: readonly string[]): PreparedDocument {
    const key = `${op.field}|${includes.join(",")}`;
    let prepared = this.cache.get(key);
    if (!prepared) {
      const { text, operationName, shape } = buildDocument(this.schema, op, includes);
      const document = parse(text);
      const errors = validate(this.schema, document, this.rules);
      // A limit (depth, cost) is the request's doing: too many or too deep includes for this server's settings.
      const limit = errors.find((e): e is ApiError => e instanceof ApiError);
      if (limit)
        throw validationError({ include: [`The requested includes make the query too large: ${limit.message}`] });
      if (errors.length)
        throw new Error(
          `Generated document for ${op.field} is invalid: ${errors.map((e) => e.message).join("; ")}\n${text}`,
        );
      markFixedSelections(document);
      prepared = { document, operationName, shape };
      this.cache.set(key, prepared);
    }
    return prepared;
  }
}
