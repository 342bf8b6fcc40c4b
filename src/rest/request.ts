import { ApiError } from "../errors.ts";
import type { Body } from "./body.ts";

/** Reads a JSON, multipart or url-encoded body. Malformed JSON is a 400; a body over the cap a 413. */
export async function readBody(request: Request, maxBytes: number, uploadMaxBytes: number): Promise<Body> {
  if (request.method === "GET" || request.method === "HEAD") return {};
  const type = (request.headers.get("content-type") ?? "").toLowerCase();
  const declared = Number(request.headers.get("content-length") ?? "0");
  const isForm = type.startsWith("multipart/form-data") || type.startsWith("application/x-www-form-urlencoded");
  const cap = isForm ? uploadMaxBytes + maxBytes : maxBytes;
  if (declared > cap) throw new ApiError("PAYLOAD_TOO_LARGE");
  if (isForm) {
    let form: FormData;
    try {
      form = await request.formData();
    } catch {
      throw new ApiError("BAD_REQUEST", "The request body could not be parsed as form data.");
    }
    const body: Body = {};
    for (const [key, value] of form.entries()) assign(body, key, value);
    return body;
  }
  const text = await request.text();
  if (Buffer.byteLength(text) > maxBytes) throw new ApiError("PAYLOAD_TOO_LARGE");
  if (text.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ApiError("BAD_REQUEST", "The request body is not valid JSON.");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ApiError("VALIDATION", "The request body must be a JSON object.", { body: ["The request body must be a JSON object."] });
  }
  return parsed as Body;
}

/** Form keys such as `pivot[order]` or `resources[]` become nested values, as PHP clients send them. */
function assign(body: Body, key: string, value: FormDataEntryValue): void {
  const path = key.replace(/\]/g, "").split("[");
  if (path.some((segment) => segment === "__proto__" || segment === "constructor" || segment === "prototype")) {
    throw new ApiError("VALIDATION", `The form field ${key} is not allowed.`, { [key]: [`The form field ${key} is not allowed.`] });
  }
  let node: any = body;
  for (let i = 0; i < path.length - 1; i++) {
    const segment = path[i]!;
    const nextIsList = path[i + 1] === "";
    node[segment] ??= nextIsList ? [] : {};
    node = node[segment];
    if (typeof node !== "object" || node === null || node instanceof Blob) {
      throw new ApiError("VALIDATION", `The form field ${key} conflicts with another field of the same name.`, {
        [key]: [`The form field ${key} conflicts with another field of the same name.`],
      });
    }
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
