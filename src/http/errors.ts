import { Response } from "./response.ts";
import { GraphQLError, type ExecutionResult, type GraphQLSchema } from "graphql";
import type { Plugin } from "graphql-yoga";
import { ApiError, errorKinds, validationError, type ErrorCode, type FieldErrors } from "../core/errors.ts";
import { camel, snake } from "../core/names.ts";
import { inputPathsOf } from "../graphql/kinds/shared.ts";
import type { RequestIds } from "./ids.ts";

// P2028: an interactive transaction ran past its timeout and was rolled back.
const prismaCodes: Record<string, ErrorCode> = {
  P2025: "NOT_FOUND",
  P2002: "VALIDATION",
  P2003: "VALIDATION",
  P2028: "TIMEOUT",
};

/** Turns anything thrown during execution into an ApiError; unexpected errors become a generic 500. */
export function toApiError(error: unknown): ApiError {
  const original = error instanceof GraphQLError && error.originalError ? error.originalError : error;
  if (original instanceof ApiError) return original;
  if (error instanceof ApiError) return error;
  const code = (original as { code?: string })?.code;
  if (code && prismaCodes[code] === "NOT_FOUND") return new ApiError("NOT_FOUND");
  if (code && prismaCodes[code] === "VALIDATION")
    return new ApiError("VALIDATION", "The given data conflicts with existing records.");
  if (code && prismaCodes[code] === "TIMEOUT") return new ApiError("TIMEOUT");
  const coercion = coercionError(error);
  if (coercion) return coercion;
  // Yoga's own request errors (batching refused, a body it cannot read) carry a 4xx of their own.
  const status = (original as GraphQLError)?.extensions?.http as { status?: number } | undefined;
  if (error instanceof GraphQLError && status?.status && status.status >= 400 && status.status < 500)
    return new ApiError("BAD_REQUEST", error.message);
  return new ApiError("INTERNAL");
}

const expected: Array<[RegExp, string]> = [
  [/String cannot represent|Expected type "String/, "must be a string"],
  [/Int cannot represent|Expected type "Int/, "must be an integer"],
  [/Boolean cannot represent|Expected type "Boolean/, "must be true or false"],
  [/Expected type "DateTime"/, "must be a valid date"],
  [/Expected type "File"/, "must be a file"],
  [/to be an object|Expected type "\w+Input"/, "must be an object"],
];

/** Field errors of variables GraphQL could not coerce, keyed as the client sent them (`$x`, `in.rankId`), for `/graphql`. */
const variableKeyed = new WeakMap<ApiError, FieldErrors>();
/** The message of such an error for `/graphql` where it names a key: as the client sent it (`toString`), not snake. */
const variableMessages = new WeakMap<ApiError, string>();

/** A variable that GraphQL could not coerce is the client's input error: a 422 naming the field. */
function coercionError(error: unknown): ApiError | null {
  if (!(error instanceof GraphQLError)) return null;
  const m = /^Variable "\$(\w+)" got invalid value .*?(?: at "([^"]+)")?; (.*)$/s.exec(error.message);
  if (!m) return null;
  const [, variable, at, detail] = m;
  const sent = (at ?? variable).replace(/\[(\d+)\]/g, ".$1");
  const field = sent
    .replace(/^input\./, "")
    .split(".")
    .map(snake)
    .join(".");
  const keyed = (key: string, graphqlKey: string, message: string, graphqlMessage = message) => {
    const apiError = validationError({ [key]: [message] });
    variableKeyed.set(apiError, { [graphqlKey]: [graphqlMessage] });
    if (graphqlMessage !== message) variableMessages.set(apiError, graphqlMessage);
    return apiError;
  };
  const missing = /Field "(\w+)" of required type .* was not provided/.exec(detail);
  if (missing) {
    const key = `${field === "input" ? "" : `${field}.`}${snake(missing[1])}`.replace(/^\./, "");
    return keyed(key, `${sent}.${missing[1]}`, `The ${snake(missing[1]).replace(/_/g, " ")} field is required.`);
  }
  const unknown = /Field "(\w+)" is not defined by type/.exec(detail);
  if (unknown)
    return keyed(
      `${field}.${snake(unknown[1])}`,
      `${sent}.${unknown[1]}`,
      `The ${snake(unknown[1])} key is not allowed here.`,
      `The ${unknown[1]} key is not allowed here.`,
    );
  const what = expected.find(([re]) => re.test(detail))?.[1] ?? "is invalid";
  const name = field.split(".").at(-1)!.replace(/_/g, " ");
  return keyed(field, sent, `The ${name} field ${what}.`);
}

/** PERSCOM's error body. */
export function errorBody(error: ApiError, ids: RequestIds) {
  const kind = errorKinds[error.code];
  return {
    error: {
      message: error.message,
      type: kind.type,
      request_id: ids.requestId,
      trace_id: ids.traceId,
      ...(error.fieldErrors ? { errors: error.fieldErrors } : {}),
    },
  };
}

/** The same refusal as a GraphQL response (a request to `/graphql` refused before it runs): no `data`, one error. */
export function graphqlErrorBody(error: ApiError, ids: RequestIds) {
  const { status, type } = errorKinds[error.code];
  return {
    errors: [
      {
        message: error.message,
        extensions: { code: error.code, status, type, request_id: ids.requestId, trace_id: ids.traceId },
      },
    ],
  };
}

export function errorResponse(error: ApiError, ids: RequestIds, headers: Record<string, string> = {}): Response {
  return Response.json(errorBody(error, ids), { status: errorKinds[error.code].status, headers });
}

const REQUEST_PARAMETERS = new Set(["query", "variables", "operationName", "extensions", "documentId"]);

/**
 * A field key as REST names it (`rank_id`, `resources.0.rank_id`, `pivot.order`) turned into the path of the
 * GraphQL input that carried it (`input.rankId`, `resources.0.rankId`, `pivot.order`): a key that is no argument of
 * a root field is an attribute of the operation's `input`.
 */
export function graphqlInputPath(key: string, rootArguments: ReadonlySet<string>): string {
  // The request's own parameters (a limit on the whole document names `query`) are no input of any field.
  if (REQUEST_PARAMETERS.has(key)) return key;
  const [first, ...rest] = key.split(".");
  const head = rootArguments.has(first) ? first : camel(first);
  const path = [head, ...rest.map(camel)].join(".");
  return rootArguments.has(head) ? path : `input.${path}`;
}

/** Every argument name of a Query or Mutation field, except `input` (whose attributes are what a bare key names). */
function rootArgumentsOf(schema: GraphQLSchema): Set<string> {
  const names = new Set<string>();
  for (const type of [schema.getQueryType(), schema.getMutationType()]) {
    for (const field of Object.values(type?.getFields() ?? {})) for (const arg of field.args) names.add(arg.name);
  }
  names.delete("input");
  return names;
}

/**
 * GraphQL over HTTP for `/graphql` responses: a result that carries `data` is a 200 whatever its field errors say
 * (each error keeps its code and status in `extensions`); a request error (no `data`) keeps its status. Field
 * error keys become the GraphQL input paths the client sent; REST renders its own bodies and keeps its snake keys.
 */
export function graphqlResultsPlugin(schema: GraphQLSchema): Plugin {
  const rootArguments = rootArgumentsOf(schema);
  const rewrite = (result: ExecutionResult): ExecutionResult => {
    if (!result.errors?.length) return result;
    const hasData = result.data != null;
    const errors = result.errors.map((error) => {
      const {
        http,
        errors: fieldErrors,
        ...extensions
      } = error.extensions as { http?: unknown; errors?: FieldErrors } & Record<string, unknown>;
      if (!fieldErrors && (!http || !hasData)) return error;
      const original = error.originalError ?? error;
      const registered =
        original instanceof ApiError ? (variableKeyed.get(original) ?? inputPathsOf.get(original)) : undefined;
      const keyed = !fieldErrors
        ? undefined
        : registered
          ? registered
          : Object.fromEntries(
              Object.entries(fieldErrors).map(([key, messages]) => [graphqlInputPath(key, rootArguments), messages]),
            );
      const message = original instanceof ApiError ? (variableMessages.get(original) ?? error.message) : error.message;
      return new GraphQLError(message, {
        nodes: error.nodes,
        source: error.source,
        positions: error.positions,
        path: error.path,
        originalError: error.originalError,
        extensions: { ...extensions, ...(keyed ? { errors: keyed } : {}), ...(http && !hasData ? { http } : {}) },
      });
    });
    return { ...result, errors };
  };
  return {
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result) || !result || typeof result !== "object" || !("errors" in result)) return;
      setResult(rewrite(result as ExecutionResult));
    },
  };
}

/**
 * The masked form of an execution error, still located: the `path` and `locations` of the field that failed. Yoga
 * marks the request errors GraphQL over HTTP answers with 200 under `application/json` (a document that does not
 * parse...); the mark survives masking. A body that is not JSON at all stays a 400, as Yoga has it (its error
 * carries the parser's exception).
 */
export function maskedAt(masked: ApiError, original: unknown): GraphQLError {
  const extensions = (original as GraphQLError)?.extensions;
  const http = extensions?.http as { spec?: boolean } | undefined;
  if (http?.spec && !extensions?.originalError)
    Object.assign(masked.extensions, { http: { ...(masked.extensions.http as object), spec: true } });
  if (!(original instanceof GraphQLError) || original === masked || (!original.path && !original.nodes)) return masked;
  const { nodes, source, positions, path } = original;
  return new GraphQLError(masked.message, {
    nodes,
    source,
    positions,
    path,
    originalError: masked,
    extensions: masked.extensions,
  });
}
