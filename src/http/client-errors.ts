import { randomUUID } from "node:crypto";
import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { errorKinds } from "../core/errors.ts";

/**
 * Requests node:http itself refuses before any plugin sees them (headers over its 16 KB limit, a request line that is
 * not HTTP, a request that took too long) get an answer in the documented error shape instead of Node's bare status
 * line; the connection is closed after it.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable || error.code === "ECONNRESET") {
    socket.destroy();
    return;
  }
  const status = error.code === "HPE_HEADER_OVERFLOW" ? 431 : error.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400;
  const message =
    status === 431
      ? "The request's headers are too large."
      : status === 408
        ? errorKinds.REQUEST_TIMEOUT.message
        : "The request is not valid HTTP.";
  const id = randomUUID();
  const body = JSON.stringify({ error: { message, type: "HttpException", request_id: id, trace_id: randomUUID() } });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Perscom-Request-Id: ${id}\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
}
