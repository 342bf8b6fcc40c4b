import { errorKinds, type ErrorCode } from "../core/errors.ts";
import type { OperationKind } from "../resources/define.ts";
import { changesOf, type LinkKind } from "../graphql/kinds/links.ts";
import { isOneToOne, pivotOf, type Operation, type Returns } from "../resources/operations.ts";
import { camel, pascal } from "../core/names.ts";
import { Components, includeTree, object, RowSchemas, type Schema } from "./schema.ts";
import { includeValues } from "./parameters.ts";
import { feedPageSchema } from "./changes.ts";

const headerRefs = {
  "X-Perscom-Request-Id": { $ref: "#/components/headers/RequestId" },
  "X-Perscom-Trace-Id": { $ref: "#/components/headers/TraceId" },
};

export const sharedHeaders: Record<string, Schema> = {
  RequestId: { description: "Id of the request, also in error bodies as `request_id`.", schema: { type: "string" } },
  TraceId: { description: "Trace id of the request, also in error bodies as `trace_id`.", schema: { type: "string" } },
};

/** The statuses of `errorKinds`, each with the codes that answer it. */
const byStatus = new Map<number, ErrorCode[]>();
for (const code of Object.keys(errorKinds) as ErrorCode[]) byStatus.set(errorKinds[code].status, [...(byStatus.get(errorKinds[code].status) ?? []), code]);

/** `BadRequest`, `NotFound`, ...: the response component of a status, named after its first code. */
const responseName = (status: number) => pascal(camel(byStatus.get(status)![0]!.toLowerCase()));

/** `components.responses`: one per error status, each the shared `Error` body. */
export function errorResponses(): Record<string, Schema> {
  return Object.fromEntries([...byStatus].map(([status, codes]) => {
    const kinds = codes.map((c) => errorKinds[c]);
    return [responseName(status), {
      description: [...new Set(kinds.map((k) => k.message))].join(" / "),
      headers: headerRefs,
      content: {
        "application/json": {
          schema: { $ref: "#/components/schemas/Error" },
          example: { error: { message: kinds[0]!.message, type: kinds[0]!.type, request_id: "3f0b6c1e-…", trace_id: "9a1d…" } },
        },
      },
    }];
  }));
}

/** PERSCOM's error body. */
export const errorSchema: Schema = object({
  error: object({
    message: { type: "string" },
    type: { type: "string", enum: [...new Set(Object.values(errorKinds).map((k) => k.type))] },
    request_id: { type: "string" },
    trace_id: { type: "string" },
    errors: {
      type: "object",
      description: "Messages per field (422), keyed by the snake_case field path, e.g. `name` or `resources.3.name`.",
      additionalProperties: { type: "array", items: { type: "string" } },
    },
  }, ["message", "type", "request_id", "trace_id"]),
}, ["error"]);

const everywhere = [400, 401, 402, 403, 429, 500, 503];
const lookups = new Set<OperationKind>(["batchUpdate", "batchDelete", "associate"]);

/** Every error status an operation can answer. */
export function errorStatuses(op: Operation, hasBody: boolean, hasInclude: boolean): number[] {
  const statuses = new Set(everywhere);
  if (/\{\w+\}/.test(op.path) || lookups.has(op.kind)) statuses.add(404);
  if (op.kind === "create" && isOneToOne(op)) statuses.add(409);
  if (hasBody) statuses.add(413);
  if (hasBody || hasInclude || op.kind === "list" || op.kind === "search" || op.kind === "feed") statuses.add(422);
  if (op.kind === "feed") statuses.add(410);
  return [...statuses].filter((s) => byStatus.has(s)).sort((a, b) => a - b);
}

export const errorResponseRef = (status: number) => ({ $ref: `#/components/responses/${responseName(status)}` });


const refName = (ref: Schema) => String(ref.$ref).split("/").at(-1)!;

/** The success body of each `returns`: `{data}`, a page with `links` and `meta`, or the changed ids. */
export class SuccessBodies {
  /** Success responses, by the name of their body schema. */
  readonly responses: Record<string, Schema> = {};

  constructor(readonly components: Components, readonly rows: RowSchemas) {}

  private pageParts(): Record<string, Schema> {
    const url = { type: "string", format: "uri" };
    return {
      links: this.components.ref("PageLinks", () =>
        object({ first: url, last: url, prev: { type: ["string", "null"], format: "uri" }, next: { type: ["string", "null"], format: "uri" } }, [
          "first", "last", "prev", "next",
        ])),
      meta: this.components.ref("PageMeta", () =>
        object({
          current_page: { type: "integer" },
          from: { type: ["integer", "null"] },
          last_page: { type: "integer" },
          links: {
            type: "array",
            items: object({ url: { type: ["string", "null"] }, label: { type: "string" }, active: { type: "boolean" } }),
          },
          path: url,
          per_page: { type: "integer" },
          to: { type: ["integer", "null"] },
          total: { type: "integer" },
        }, ["current_page", "from", "last_page", "path", "per_page", "to", "total"])),
    };
  }

  private envelope(row: Schema, returns: Returns): Schema {
    const name = refName(row);
    switch (returns) {
      case "page":
      case "linkPage":
        return this.components.ref(`${name}Page`, () => object({ data: { type: "array", items: row }, ...this.pageParts() }, ["data", "links", "meta"]));
      case "objects":
      case "links":
        return this.components.ref(`${name}List`, () => object({ data: { type: "array", items: row } }, ["data"]));
      default:
        return this.components.ref(`${name}Item`, () => object({ data: row }, ["data"]));
    }
  }

  body(op: Operation): Schema {
    if (op.returns === "status") {
      return this.components.ref("CommandStatus", () => object({ status: { type: "string", description: "`okay` when the command ran." } }, ["status"]));
    }
    if (op.returns === "feed") return feedPageSchema(this.components);
    if (op.returns === "changes") {
      const keys = changesOf[op.kind as LinkKind] ?? (["attached", "detached", "updated"] as const);
      return this.components.ref(`${keys.map(pascal).join("")}Changes`, () =>
        object(Object.fromEntries(keys.map((k) => [k, { type: "array", items: { type: "integer" }, description: `Related ids ${k}.` }])), keys));
    }
    const pivot = pivotOf(op);
    const linked = op.returns === "link" || op.returns === "links" || op.returns === "linkPage";
    const tree = includeTree(includeValues(op));
    return this.envelope(linked && pivot ? this.rows.linkRow(pivot, tree) : this.rows.row(op.def, tree), op.returns);
  }

  /** The 200 response of an operation: a `components.responses` entry per success body. */
  response(op: Operation): Schema {
    const body = this.body(op);
    const name = refName(body);
    this.responses[name] ??= {
      description: ({
        status: "The command ran.", changes: "The related ids the operation changed.", page: "One page of rows.", linkPage: "One page of rows.",
        feed: "One page of the change feed.",
      } as Partial<
        Record<Returns, string>
      >)[op.returns] ?? (op.returns === "objects" || op.returns === "links" ? "The rows." : "The row."),
      headers: headerRefs,
      content: { "application/json": { schema: body } },
    };
    return { $ref: `#/components/responses/${name}` };
  }
}
