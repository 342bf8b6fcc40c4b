import { GraphQLError } from "graphql";

/** Error kinds of the API, each with its HTTP status, PERSCOM exception type and fixed message. */
export const errorKinds = {
  BAD_REQUEST: { status: 400, type: "HttpException", message: "The request could not be understood." },
  BAD_VERSION: {
    status: 400,
    type: "HttpException",
    message: "The provided API version is not valid. The currently available versions are: v1, v2",
  },
  UNAUTHENTICATED: {
    status: 401,
    type: "AuthenticationException",
    message: "You are not authenticated. Please provide a valid API key that contains your PERSCOM ID to continue.",
  },
  PAYMENT_REQUIRED: {
    status: 402,
    type: "HttpException",
    message: "A valid subscription is required to complete this request.",
  },
  FORBIDDEN: {
    status: 403,
    type: "HttpException",
    message:
      "The API key provided does not have the correct permissions and/or scopes to perform the requested action.",
  },
  NOT_FOUND: {
    status: 404,
    type: "NotFoundHttpException",
    message: "The requested resource or endpoint could not be found.",
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    type: "MethodNotAllowedHttpException",
    message: "The method is not supported for this route.",
  },
  REQUEST_TIMEOUT: { status: 408, type: "HttpException", message: "The request body was not received in time." },
  CONFLICT: { status: 409, type: "HttpException", message: "Entity already exists." },
  CURSOR_EXPIRED: {
    status: 410,
    type: "GoneHttpException",
    message:
      "The cursor is older than the event retention period, so events after it may have been pruned: read the resources again in full, then follow the change feed from a new cursor.",
  },
  PAYLOAD_TOO_LARGE: { status: 413, type: "HttpException", message: "The request body is too large." },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    type: "UnsupportedMediaTypeHttpException",
    message:
      "The request body must be JSON (application/json), multipart/form-data or application/x-www-form-urlencoded.",
  },
  VALIDATION: { status: 422, type: "ValidationException", message: "The given data was invalid." },
  RATE_LIMITED: {
    status: 429,
    type: "ThrottleRequestsException",
    message: "You have exceeded the API rate limit. Please wait a minute before trying again.",
  },
  TIMEOUT: {
    status: 503,
    type: "HttpException",
    message: "The request took too long to complete. Please try again, or ask for less at once.",
  },
  INTERNAL: {
    status: 500,
    type: "HttpException",
    message: "There was a server error with your last request. Please try again.",
  },
  MAINTENANCE: {
    status: 503,
    type: "HttpException",
    message: "The API is currently down for maintenance. Please check back later.",
  },
  UNAVAILABLE: {
    status: 503,
    type: "HttpException",
    message: "A service this request depends on is unavailable. Please try again later.",
  },
} as const;

export type ErrorCode = keyof typeof errorKinds;
export type FieldErrors = Record<string, string[]>;

/** An error the client caused or is told about; carries its code into GraphQL `extensions`. */
export class ApiError extends GraphQLError {
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly fieldErrors?: FieldErrors,
  ) {
    const kind = errorKinds[code];
    super(message ?? kind.message, {
      extensions: {
        code,
        status: kind.status,
        type: kind.type,
        ...(fieldErrors ? { errors: fieldErrors } : {}),
        http: { status: kind.status },
      },
    });
  }
}

/** A 422 whose message is the first field message, Laravel style: "The x field is required. (and 2 more errors)". */
export function validationError(fieldErrors: FieldErrors): ApiError {
  const messages = Object.values(fieldErrors).flat();
  const more = messages.length - 1;
  const message =
    more > 0
      ? `${messages[0]} (and ${more} more error${more > 1 ? "s" : ""})`
      : (messages[0] ?? errorKinds.VALIDATION.message);
  return new ApiError("VALIDATION", message, fieldErrors);
}

export const notFound = () => new ApiError("NOT_FOUND");

/** A 429 that says when to try again: `Retry-After` on REST and GraphQL (`extensions.http.headers`). */
export function rateLimited(retryAfterSeconds: number, message?: string): ApiError {
  const error = new ApiError("RATE_LIMITED", message);
  const http = error.extensions.http as { status: number; headers?: Record<string, string> };
  http.headers = { "Retry-After": String(Math.max(1, Math.ceil(retryAfterSeconds))) };
  return error;
}

/** The headers an error asks its response to carry (`Retry-After`), set by `rateLimited`. */
export const errorHeaders = (error: ApiError): Record<string, string> =>
  (error.extensions.http as { headers?: Record<string, string> } | undefined)?.headers ?? {};
export const forbidden = () => new ApiError("FORBIDDEN");

/** Collects field messages and throws them together, so the client sees every problem at once. */
export class FieldErrorBag {
  /** No prototype: a field named by the client (`constructor`, `__proto__`) is a key like any other. */
  readonly errors: FieldErrors = Object.create(null) as FieldErrors;
  add(field: string, message: string): void {
    (this.errors[field] ??= []).push(message);
  }
  get empty(): boolean {
    return Object.keys(this.errors).length === 0;
  }
  throwIfAny(): void {
    if (!this.empty) throw validationError(this.errors);
  }
}
