import { errorKinds, type ErrorCode } from "../core/errors.ts";
import { changesOf, type LinkKind } from "../graphql/kinds/links.ts";
import { pivotOf, type Operation } from "../resources/operations.ts";
import { camel, pascal, snake } from "../core/names.ts";
import { Components, includeTree, object, RowSchemas, type Schema } from "./schema.ts";
import { includeValues } from "./parameters.ts";
import { feedPageSchema } from "./changes.ts";
import { answers, openapiKinds, type SuccessBody } from "./kinds.ts";

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
for (const code of Object.keys(errorKinds) as ErrorCode[])
  byStatus.set(errorKinds[code].status, [...(byStatus.get(errorKinds[code].status) ?? []), code]);

/** `BadRequest`, `NotFound`, ...: the response component of a status, named after its first code. */
const responseName = (status: number) => pascal(camel(byStatus.get(status)![0].toLowerCase()));

/** `components.responses`: one per error status, each the shared `Error` body. */
export function errorResponses(): Record<string, Schema> {
  return Object.fromEntries(
    [...byStatus].map(([status, codes]) => {
      const kinds = codes.map((c) => errorKinds[c]);
      return [
        responseName(status),
        {
          description: [...new Set(kinds.map((k) => k.message))].join(" / "),
          headers: headerRefs,
          content: {
            "application/json": {
              schema: { $ref: "#/components/schemas/Error" },
              example: {
                error: { message: kinds[0].message, type: kinds[0].type, request_id: "3f0b6c1e-…", trace_id: "9a1d…" },
              },
            },
          },
        },
      ];
    }),
  );
}

/** PERSCOM's error body. */
export const errorSchema: Schema = object(
  {
    error: object(
      {
        message: { type: "string" },
        type: { type: "string", enum: [...new Set(Object.values(errorKinds).map((k) => k.type))] },
        request_id: { type: "string" },
        trace_id: { type: "string" },
        errors: {
          type: "object",
          description:
            "Messages per field (422), keyed by the snake_case field path, e.g. `name` or `resources.3.name`.",
          additionalProperties: { type: "array", items: { type: "string" } },
        },
      },
      ["message", "type", "request_id", "trace_id"],
    ),
  },
  ["error"],
);

const everywhere = [400, 401, 402, 403, 429, 500, 503];

/** Every error status an operation can answer. */
export function errorStatuses(op: Operation, hasBody: boolean, hasInclude: boolean): number[] {
  // A route that needs no credential refuses none.
  const statuses = new Set(op.anonymous ? everywhere.filter((s) => s !== 401 && s !== 402 && s !== 403) : everywhere);
  if (/\{\w+\}/.test(op.path)) statuses.add(404);
  for (const status of openapiKinds[op.kind].errors?.(op) ?? []) statuses.add(status);
  if (hasBody) statuses.add(413);
  if (hasBody || hasInclude) statuses.add(422);
  return [...statuses].filter((s) => byStatus.has(s)).sort((a, b) => a - b);
}

const nullableText = (description: string): Schema => ({ type: ["string", "null"], description });

/** A public form as REST shows it (src/rest/public-forms.ts): what a public page needs, its fields in order. */
function publicFormSchema(): Schema {
  const field = object(
    {
      key: { type: "string", description: "The key its value is submitted under." },
      name: { type: "string", description: "Its label." },
      type: { type: "string", description: "The kind of input (`text`, `email`, `number`, `select`, ...)." },
      description: nullableText("What it asks for."),
      placeholder: nullableText("The placeholder of its input."),
      default: nullableText("Its default value."),
      help: nullableText("Help shown beside it."),
      required: { type: "boolean", description: "Whether a value is required." },
      readonly: { type: "boolean", description: "Shown but not set by the submitter." },
      rules: nullableText("Its validation rules, Laravel style (`required|max:255`)."),
      options: {
        type: "array",
        description: "A select field's choices; `[]` for none.",
        items: object({ label: { type: "string" }, value: { type: "string" } }, ["label", "value"]),
      },
    },
    ["key", "name", "type", "required", "readonly", "options"],
  );
  return object(
    {
      id: { type: "integer" },
      name: { type: "string" },
      slug: { type: "string" },
      description: nullableText("What the form is for."),
      instructions: nullableText("What a submitter should know."),
      success_message: nullableText("What to show once a submission is made."),
      fields: { type: "array", items: field, description: "The fields to fill in, in order (no hidden field)." },
    },
    ["id", "name", "slug", "fields"],
  );
}

function publicSubmissionSchema(): Schema {
  return object(
    {
      id: { type: "integer", description: "The submission's id." },
      form_id: { type: "integer", description: "The form's id." },
      created_at: { type: "string", format: "date-time" },
      success_message: nullableText("The form's message to show now."),
    },
    ["id", "form_id", "created_at"],
  );
}

export const errorResponseRef = (status: number) => ({ $ref: `#/components/responses/${responseName(status)}` });

const refName = (ref: Schema) => String(ref.$ref).split("/").at(-1)!;

/** The success body of each `returns`: `{data}`, a page with `links` and `meta`, or the changed ids. */
export class SuccessBodies {
  /** Success responses, by the name of their body schema. */
  readonly responses: Record<string, Schema> = {};

  constructor(
    readonly components: Components,
    readonly rows: RowSchemas,
  ) {}

  private pageParts(): Record<string, Schema> {
    const url = { type: "string", format: "uri" };
    return {
      links: this.components.ref("PageLinks", () =>
        object(
          {
            first: url,
            last: url,
            prev: { type: ["string", "null"], format: "uri" },
            next: { type: ["string", "null"], format: "uri" },
          },
          ["first", "last", "prev", "next"],
        ),
      ),
      meta: this.components.ref("PageMeta", () =>
        object(
          {
            current_page: { type: "integer" },
            from: { type: ["integer", "null"] },
            last_page: { type: "integer" },
            links: {
              type: "array",
              items: object({
                url: { type: ["string", "null"] },
                label: { type: "string" },
                active: { type: "boolean" },
              }),
            },
            path: url,
            per_page: { type: "integer" },
            to: { type: ["integer", "null"] },
            total: { type: "integer" },
          },
          ["current_page", "from", "last_page", "path", "per_page", "to", "total"],
        ),
      ),
    };
  }

  /** The row of a row answer, with the operation's includes (a many-to-many route's: its link row). */
  private rowOf(op: Operation): Schema {
    const pivot = pivotOf(op);
    const tree = includeTree(includeValues(op));
    return pivot ? this.rows.linkRow(pivot, tree) : this.rows.row(op.def, tree);
  }

  /** Each success body (`answers` in src/openapi/kinds.ts says an answer's). */
  private readonly bodies: Record<SuccessBody, (op: Operation) => Schema> = {
    page: (op) => {
      const row = this.rowOf(op);
      return this.components.ref(`${refName(row)}Page`, () =>
        object({ data: { type: "array", items: row }, ...this.pageParts() }, ["data", "links", "meta"]),
      );
    },
    list: (op) => {
      const row = this.rowOf(op);
      return this.components.ref(`${refName(row)}List`, () =>
        object({ data: { type: "array", items: row } }, ["data"]),
      );
    },
    item: (op) => {
      const row = this.rowOf(op);
      return this.components.ref(`${refName(row)}Item`, () => object({ data: row }, ["data"]));
    },
    status: () =>
      this.components.ref("CommandStatus", () =>
        object({ status: { type: "string", description: "`okay` when the command ran." } }, ["status"]),
      ),
    result: (op) => {
      const answer = op.command!.answer!;
      return this.components.ref(`${answer.type}Item`, () =>
        object(
          {
            data: object(
              Object.fromEntries(
                Object.entries(answer.fields).map(([name, description]) => [
                  snake(name),
                  { type: "string", description },
                ]),
              ),
              Object.keys(answer.fields).map(snake),
              { description: answer.description },
            ),
          },
          ["data"],
        ),
      );
    },
    feed: () => feedPageSchema(this.components),
    publicForm: () => this.components.ref("PublicFormItem", () => object({ data: publicFormSchema() }, ["data"])),
    publicSubmission: () =>
      this.components.ref("PublicSubmissionItem", () => object({ data: publicSubmissionSchema() }, ["data"])),
    changes: (op) => {
      const keys = changesOf[op.kind as LinkKind] ?? (["attached", "detached", "updated"] as const);
      return this.components.ref(`${keys.map(pascal).join("")}Changes`, () =>
        object(
          Object.fromEntries(
            keys.map((k) => [k, { type: "array", items: { type: "integer" }, description: `Related ids ${k}.` }]),
          ),
          keys,
        ),
      );
    },
  };

  body(op: Operation): Schema {
    return this.bodies[answers[op.returns].body](op);
  }

  /** The 200 response of an operation: a `components.responses` entry per success body. */
  response(op: Operation): Schema {
    const body = this.body(op);
    const name = refName(body);
    this.responses[name] ??= {
      description: answers[op.returns].description,
      headers: headerRefs,
      content: { "application/json": { schema: body } },
    };
    return { $ref: `#/components/responses/${name}` };
  }
}
