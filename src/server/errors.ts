import { Response } from "./response.ts";
import { GraphQLError } from "graphql";
import { ApiError, errorKinds, validationError, type ErrorCode } from "../errors.ts";
import { snake } from "../graphql/names.ts";
import type { RequestIds } from "./ids.ts";

// P2028: an interactive transaction ran past its timeout and was rolled back.
const prismaCodes: Record<string, ErrorCode> = { P2025: "NOT_FOUND", P2002: "VALIDATION", P2003: "VALIDATION", P2028: "TIMEOUT" };

/** Turns anything thrown during execution into an ApiError; unexpected errors become a generic 500. */
export function toApiError(error: unknown): ApiError {
  const original = error instanceof GraphQLError && error.originalError ? error.originalError : error;
  if (original instanceof ApiError) return original;
  if (error instanceof ApiError) return error;
  const code = (original as { code?: string })?.code;
  if (code && prismaCodes[code] === "NOT_FOUND") return new ApiError("NOT_FOUND");
  if (code && prismaCodes[code] === "VALIDATION") return new ApiError("VALIDATION", "The given data conflicts with existing records.");
  if (code && prismaCodes[code] === "TIMEOUT") return new ApiError("TIMEOUT");
  const coercion = coercionError(error);
  if (coercion) return coercion;
  // Yoga's own request errors (batching refused, a body it cannot read) carry a 4xx of their own.
  const status = (original as GraphQLError)?.extensions?.http as { status?: number } | undefined;
  if (error instanceof GraphQLError && status?.status && status.status >= 400 && status.status < 500) return new ApiError("BAD_REQUEST", error.message);
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

/** A variable that GraphQL could not coerce is the client's input error: a 422 naming the field. */
function coercionError(error: unknown): ApiError | null {
  if (!(error instanceof GraphQLError)) return null;
  const m = /^Variable "\$(\w+)" got invalid value .*?(?: at "([^"]+)")?; (.*)$/s.exec(error.message);
  if (!m) return null;
  const [, variable, at, detail] = m;
  const path = (at ?? variable!).replace(/^input\./, "").replace(/\[(\d+)\]/g, ".$1");
  const field = path.split(".").map(snake).join(".");
  const missing = /Field "(\w+)" of required type .* was not provided/.exec(detail!);
  if (missing) return validationError({ [`${field === "input" ? "" : `${field}.`}${snake(missing[1]!)}`.replace(/^\./, "")]: [`The ${snake(missing[1]!).replace(/_/g, " ")} field is required.`] });
  const unknown = /Field "(\w+)" is not defined by type/.exec(detail!);
  if (unknown) return validationError({ [`${field}.${snake(unknown[1]!)}`]: [`The ${snake(unknown[1]!)} key is not allowed here.`] });
  const what = expected.find(([re]) => re.test(detail!))?.[1] ?? "is invalid";
  const name = field.split(".").at(-1)!.replace(/_/g, " ");
  return validationError({ [field]: [`The ${name} field ${what}.`] });
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

export function errorResponse(error: ApiError, ids: RequestIds, headers: Record<string, string> = {}): Response {
  return Response.json(errorBody(error, ids), { status: errorKinds[error.code].status, headers });
}
