import { ApiError } from "../core/errors.ts";
import type { Body } from "./body.ts";
import { nestedDeeperThan } from "../core/nesting.ts";

/** Limits of {@link readBody}. */
export interface BodyLimits {
  /** Most bytes of a JSON body, and of the text fields of a form together. */
  bodyMaxBytes: number;
  /** Most bytes of one uploaded file. */
  uploadMaxBytes: number;
  /** Deepest nesting of the body's objects and arrays. */
  bodyMaxDepth: number;
}

/** `application/json`, or any `application/…+json`; parameters such as `charset` aside. */
const jsonMediaType = /^application\/(?:[\w.-]+\+)?json$/;
const formMediaTypes = new Set(["multipart/form-data", "application/x-www-form-urlencoded"]);
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Reads a JSON, multipart or url-encoded body (its size and arrival time are already bounded by the body limits
 * plugin). A body of another type is a 415, bytes that are not UTF-8 or text that is not JSON a 400, a form field over
 * its cap a 413, a body nested too deep a 422. A request without a body needs no content type.
 */
export async function readBody(request: Request, limits: BodyLimits): Promise<Body> {
  if (request.method === "GET" || request.method === "HEAD" || request.headers.get("content-length") === "0") return {};
  const mediaType = (request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  let body: Body;
  if (formMediaTypes.has(mediaType)) body = await formBody(request, limits);
  else {
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength === 0) return {};
    if (!jsonMediaType.test(mediaType)) throw new ApiError("UNSUPPORTED_MEDIA_TYPE");
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      throw new ApiError("BAD_REQUEST", "The request body is not valid UTF-8.");
    }
    if (text.trim() === "") return {};
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new ApiError("BAD_REQUEST", "The request body is not valid JSON.");
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw new ApiError("VALIDATION", "The request body must be a JSON object.", {
        body: ["The request body must be a JSON object."],
      });
    }
    body = parsed as Body;
  }
  if (nestedDeeperThan(body, limits.bodyMaxDepth)) {
    const message = `The request body is nested deeper than ${limits.bodyMaxDepth} levels.`;
    throw new ApiError("VALIDATION", message, { body: [message] });
  }
  return body;
}

/** A form's fields; its text together and each file are held to their caps while it is parsed (413). */
async function formBody(request: Request, limits: BodyLimits): Promise<Body> {
  let form: FormData;
  try {
    // @whatwg-node's Request (Yoga's) takes busboy's limits here.
    form = await (request as Request & { formData(options: object): Promise<FormData> }).formData({
      formDataLimits: { fieldSize: limits.bodyMaxBytes, fileSize: limits.uploadMaxBytes },
    });
  } catch (error) {
    if (/size (?:limit )?exceeded/i.test((error as Error)?.message ?? "")) throw new ApiError("PAYLOAD_TOO_LARGE");
    throw new ApiError("BAD_REQUEST", "The request body could not be parsed as form data.");
  }
  const body: Body = {};
  let textBytes = 0;
  for (const [key, value] of form.entries()) {
    if (
      typeof value === "string" &&
      (textBytes += Buffer.byteLength(value) + Buffer.byteLength(key)) > limits.bodyMaxBytes
    ) {
      throw new ApiError("PAYLOAD_TOO_LARGE");
    }
    assign(body, key, value);
  }
  return body;
}

/** Form keys such as `pivot[order]` or `resources[]` become nested values, as PHP clients send them. */
function assign(body: Body, key: string, value: FormDataEntryValue): void {
  const path = key.replace(/\]/g, "").split("[");
  if (path.some((segment) => segment === "__proto__" || segment === "constructor" || segment === "prototype")) {
    throw new ApiError("VALIDATION", `The form field ${key} is not allowed.`, {
      [key]: [`The form field ${key} is not allowed.`],
    });
  }
  // An object or a list (indexed by its segments' strings, as before).
  let node: Record<string, unknown> = body;
  for (let i = 0; i < path.length - 1; i++) {
    const segment = path[i];
    const nextIsList = path[i + 1] === "";
    node[segment] ??= nextIsList ? [] : {};
    const next = node[segment];
    if (typeof next !== "object" || next === null || next instanceof Blob) {
      throw new ApiError("VALIDATION", `The form field ${key} conflicts with another field of the same name.`, {
        [key]: [`The form field ${key} conflicts with another field of the same name.`],
      });
    }
    node = next as Record<string, unknown>;
  }
  const last = path.at(-1)!;
  if (Array.isArray(node) && last === "") node.push(value);
  else node[last] = value;
}

/** Laravel method spoofing: `POST` with `_method=PUT` in the body is a `PUT`. */
export function effectiveMethod(method: string, body: Body): string {
  const spoofed = typeof body._method === "string" ? body._method.toUpperCase() : null;
  return method === "POST" && spoofed && ["PUT", "PATCH", "DELETE"].includes(spoofed) ? spoofed : method;
}
