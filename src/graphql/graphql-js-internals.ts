/*
 * Library: graphql (graphql-js).
 * Checked against: graphql 16.15.0
 *
 * The one module that imports graphql-js's internal modules, for src/graphql/planned-execution.ts; what we take from
 * them (test/library-contracts.test.ts checks that each module still exports it, with its arity, and behaves so):
 * - graphql/execution/execute.js: `buildExecutionContext(args)`, graphql-js's own checks and coercion of an
 *   execution's arguments (the operation, its variables, the fragments), an `ExecutionContext` or the errors; and
 *   `buildResolveInfo(context, field, fieldNodes, parentType, path)`, the resolve info graphql-js hands a resolver;
 * - graphql/execution/collectFields.js: `collectFields(schema, fragments, variables, type, selectionSet)` and
 *   `collectSubfields(schema, fragments, variables, type, fieldNodes)`, graphql-js's field collection (fragments,
 *   `@skip`/`@include`, response keys in order), a Map of response key to field nodes;
 * - graphql/jsutils/Path.js: `addPath(previous, key, typename)` and `pathToArray(path)` (the package exports the
 *   latter as `responsePathAsArray`, not `addPath`).
 *
 * Why the public API did not do: the package exports `execute`, which builds a resolve info, a path and an argument
 * object for every field of every row. A page of 100 users with 20 records each is some 16,000 fields, and with
 * Pothos's path-keyed lookup of each row's preloaded relations that was about 70 % of such a request's CPU; the
 * planned executor resolves each field once per request instead (W2 in-process on SQLite, 190 → 84 CPU ms per
 * request with the executor alone: bench/FINDINGS.md, "Planned execution"). It must answer exactly as graphql-js
 * does, so it uses graphql-js's own argument checks, field collection and resolve info rather than copies of them;
 * those are not exported by the package's index.
 */
export { buildExecutionContext, buildResolveInfo, type ExecutionContext } from "graphql/execution/execute.js";
export { collectFields, collectSubfields } from "graphql/execution/collectFields.js";
export { addPath, pathToArray, type Path } from "graphql/jsutils/Path.js";
