import { operations, type Operation } from "../resources/operations.ts";
import { routes } from "../rest/routes.ts";
import { human, pascal } from "../core/names.ts";
import { article, type Schema } from "./schema.ts";
import type { Bodies } from "./bodies.ts";
import { errorResponseRef, errorStatuses, type SuccessBodies } from "./responses.ts";
import { Parameters } from "./parameters.ts";
import { openapiKinds, type Words } from "./kinds.ts";

const a = article;

/** The tag of an operation: its top-level collection, view, or nested route. */
export function tagOf(op: Operation): { name: string; description: string } {
  if (op.view) return { name: op.view.path, description: `${op.def.label} rows through \`/${op.view.path}\`.` };
  const own = openapiKinds[op.kind].tag?.(op);
  if (own) return own;
  if (op.subject) return { name: op.subject.path!, description: `${op.subject.label} rows: \`/${op.subject.path}\`.` };
  if (op.parent) {
    return {
      name: `${op.parent.def.path}/${op.parent.route.path}`,
      description: `${pascal(human(op.def.plural))} of ${a(op.parent.def.label.toLowerCase())}: \`/${op.parent.def.path}/{${op.parent.def.param}}/${op.parent.route.path}\`.`,
    };
  }
  return { name: op.def.path!, description: `${op.def.label} rows: \`/${op.def.path}\`.` };
}

function describe(op: Operation): string {
  if (op.anonymous) return `No credential needed (any is ignored). GraphQL: \`${op.field}\`.`;
  const scopes = op.scopes.length ? `Scopes: ${op.scopes.map((s) => `\`${s}\``).join(", ")}.` : "Any valid API key.";
  return `${scopes} GraphQL: \`${op.field}\`.`;
}

/** The routes of an operation beyond its own method and path: `PUT` for updates, the path without an optional trailing id. */
function aliasesOf(op: Operation): Array<{ method: string; path: string; operationId: string }> {
  return routes
    .filter((r) => r.op === op)
    .map((r) => ({ method: r.method, path: `/${r.segments.join("/")}` }))
    .filter((r) => !(r.method === op.method && r.path === op.path))
    .map((r) => ({
      ...r,
      operationId: `${op.field}${r.path === op.path ? "" : "WithoutId"}${r.method === op.method ? "" : `Via${pascal(r.method.toLowerCase())}`}`,
    }));
}

/**
 * `paths` of the document: every operation of the catalogue, and the aliases the route table serves.
 * The operation id is the GraphQL field; a route sharing its field with another (a search runs its
 * list's field) is prefixed with its kind (`searchRanks`).
 */
export function pathsOf(
  bodies: Bodies,
  success: SuccessBodies,
  params: Parameters,
): Record<string, Record<string, Schema>> {
  const paths: Record<string, Record<string, Schema>> = {};
  const add = (op: Operation, method: string, path: string, operationId: string, alias: boolean) => {
    const parameters = params.of(op, path);
    const requestBody = bodies.requestBody(op);
    const hasInclude = Parameters.hasInclude(op);
    const responses: Record<string, Schema> = { 200: success.response(op) };
    for (const status of errorStatuses(op, requestBody !== undefined, hasInclude))
      responses[status] = errorResponseRef(status);
    const words: Words = {
      one: a(op.def.label.toLowerCase()),
      many: human(op.def.plural),
      parent: op.parent ? ` of ${a(op.parent.def.label.toLowerCase())}` : op.view ? ` (/${op.view.path})` : "",
    };
    const security = op.anonymous ? [] : [{ bearerAuth: op.scopes }, { apiKeyQuery: op.scopes }, { oauth2: op.scopes }];
    (paths[`/{version}${path}`] ??= {})[method.toLowerCase()] = {
      operationId,
      tags: [tagOf(op).name],
      summary: op.action?.summary ?? openapiKinds[op.kind].summary(words),
      description: alias ? `Same as \`${op.method} ${op.path}\` (\`${op.field}\`). ${describe(op)}` : describe(op),
      security,
      parameters,
      ...(requestBody ? { requestBody } : {}),
      responses,
      "x-operation-kind": op.kind,
    };
  };
  const used = new Set<string>();
  const unique = (id: string, op: Operation) => {
    const chosen = used.has(id) ? `${op.kind}${pascal(id)}` : id;
    used.add(chosen);
    return chosen;
  };
  for (const op of operations) {
    add(op, op.method, op.path, unique(op.field, op), false);
    for (const alias of aliasesOf(op)) add(op, alias.method, alias.path, unique(alias.operationId, op), true);
  }
  return paths;
}
