import type { IncomingMessage } from "node:http";
import { isUtf8 } from "node:buffer";
import type { Plugin } from "graphql-yoga";
import type { Config } from "../core/config.ts";
import { ApiError, errorKinds } from "../core/errors.ts";
import { errorBody, graphqlErrorBody } from "./errors.ts";
import { idsOf } from "./ids.ts";

type Refusal = "PAYLOAD_TOO_LARGE" | "REQUEST_TIMEOUT" | "BAD_REQUEST";
type Outcome = { bytes: Uint8Array<ArrayBuffer> } | { refused: Refusal };

const isGraphQL = (path: string) => path === "/graphql" || path.startsWith("/graphql/");
const isMultipart = (type: string | null) => (type ?? "").trimStart().toLowerCase().startsWith("multipart/form-data");

/** Reads a Node request's body, stopping at `cap` bytes or after `ms`. */
function readNode(req: IncomingMessage, cap: number, ms: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (outcome: Outcome) => {
      clearTimeout(timer);
      req.off("data", onData).off("end", onEnd).off("error", onError).off("aborted", onError);
      resolve(outcome);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > cap) finish({ refused: "PAYLOAD_TOO_LARGE" });
      else chunks.push(chunk);
    };
    const onEnd = () => finish({ bytes: Buffer.concat(chunks, size) });
    const onError = () => finish({ refused: "BAD_REQUEST" });
    const timer = setTimeout(() => finish({ refused: "REQUEST_TIMEOUT" }), ms);
    req.on("data", onData).on("end", onEnd).on("error", onError).on("aborted", onError);
  });
}

/**
 * The rest of a refused body is read and dropped until the deadline, then the connection is closed: closing it at
 * once, with the client still sending, would reset it, often before the client has read the answer.
 */
function dropRest(req: IncomingMessage, ms: number): void {
  if (req.complete) return;
  const timer = setTimeout(() => req.socket?.destroy(), Math.max(ms, 0));
  const stop = () => clearTimeout(timer);
  req.once("end", stop).once("close", stop).resume();
}

/** The same for a fetch body (`yoga.fetch`, where there is no Node request). */
async function readStream(body: ReadableStream<Uint8Array>, cap: number, deadline: number): Promise<Outcome> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), deadline)));
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), late]);
      if (next === "late") return (void reader.cancel().catch(() => {}), { refused: "REQUEST_TIMEOUT" });
      if (next.done) return { bytes: Buffer.concat(chunks, size) };
      size += next.value.byteLength;
      if (size > cap) return (void reader.cancel().catch(() => {}), { refused: "PAYLOAD_TOO_LARGE" });
      chunks.push(next.value);
    }
  } catch {
    return { refused: "BAD_REQUEST" };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A GET `/graphql` query string whose escapes do not decode as UTF-8 (URLSearchParams would put U+FFFD in their
 * place, silently).
 */
function queryStringIsUtf8(search: string): boolean {
  try {
    for (const part of search.slice(1).split("&")) decodeURIComponent(part.replace(/\+/g, " "));
    return true;
  } catch {
    return false;
  }
}

/**
 * Every request body is read here, first, before any route or operation sees it: at most `BODY_MAX_BYTES`
 * (`UPLOAD_MAX_BYTES` more for multipart), counted as it streams in whether or not `Content-Length` was sent, and
 * within `BODY_READ_TIMEOUT_MS` of the request's start. Past either it is answered at once, 413 or 408, in the error
 * shape of its endpoint (PERSCOM's, or a GraphQL error on `/graphql`), and the connection is closed after the answer.
 * A GraphQL request must also be valid UTF-8. The body read is handed on as the request's, so nothing downstream
 * waits on the network again.
 */
export function bodyLimitsPlugin(
  config: Pick<Config, "bodyMaxBytes" | "uploadMaxBytes" | "bodyReadTimeoutMs">,
): Plugin {
  return {
    async onRequest({ request, url, serverContext, setRequest, endResponse, fetchAPI }) {
      const started = Date.now();
      const graphql = isGraphQL(url.pathname);
      const req = (serverContext as { req?: IncomingMessage } | undefined)?.req;
      const refuse = (code: Refusal, message?: string) => {
        // Out of time, the connection is closed after the answer; otherwise the body is drained while time is left.
        if (req?.on && code === "REQUEST_TIMEOUT") req.resume();
        else if (req?.on) dropRest(req, config.bodyReadTimeoutMs - (Date.now() - started));
        const error = new ApiError(code, message);
        const ids = idsOf(request);
        const { status } = errorKinds[code];
        const body = graphql ? graphqlErrorBody(error, ids) : errorBody(error, ids);
        endResponse(
          fetchAPI.Response.json(body, { status, headers: code === "REQUEST_TIMEOUT" ? { Connection: "close" } : {} }),
        );
      };
      if (request.method === "GET" || request.method === "HEAD") {
        if (graphql && !queryStringIsUtf8(url.search)) refuse("BAD_REQUEST", "The query string is not valid UTF-8.");
        return;
      }
      const type = request.headers.get("content-type");
      const cap = isMultipart(type) ? config.bodyMaxBytes + config.uploadMaxBytes : config.bodyMaxBytes;
      const declared = Number(request.headers.get("content-length") ?? "0");
      if (declared > cap) return refuse("PAYLOAD_TOO_LARGE");
      const outcome = req?.on
        ? await readNode(req, cap, config.bodyReadTimeoutMs)
        : request.body
          ? await readStream(request.body, cap, config.bodyReadTimeoutMs)
          : { bytes: new Uint8Array(0) };
      if ("refused" in outcome) return refuse(outcome.refused);
      if (graphql && !isMultipart(type) && !isUtf8(outcome.bytes))
        return refuse("BAD_REQUEST", "The request body is not valid UTF-8.");
      const headers = new fetchAPI.Headers(request.headers);
      headers.delete("transfer-encoding");
      headers.set("content-length", String(outcome.bytes.byteLength));
      setRequest(
        new fetchAPI.Request(request.url, {
          method: request.method,
          headers,
          body: outcome.bytes.byteLength ? outcome.bytes : null,
          signal: request.signal,
        }),
      );
    },
  };
}
