import http from "node:http";
import type { AddressInfo } from "node:net";

/** One request as it goes on the wire: the path is sent byte for byte, never normalised. */
export interface WireRequest {
  method: string;
  /** Path and query exactly as sent (`/v2/ranks/%2e%2e`): `new URL` would resolve dot segments, this does not. */
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array | FormData;
  /** Send the body in chunks with no Content-Length (Transfer-Encoding: chunked). */
  chunked?: boolean;
}

export interface WireAnswer {
  status: number;
  text: string;
  contentType: string | null;
}

/** A form's bytes and the multipart content type (with its boundary) that goes with them. */
async function encodeForm(form: FormData): Promise<{ bytes: Uint8Array; contentType: string }> {
  const request = new Request("http://form.invalid/", { method: "POST", body: form });
  return { bytes: new Uint8Array(await request.arrayBuffer()), contentType: request.headers.get("content-type")! };
}

/**
 * A node:http server on 127.0.0.1 around a request listener (the app's Yoga instance, as
 * src/server/main.ts serves it), in this process so the caller can still read the database, and a
 * client that sends raw request targets: `http.request` keeps `%2e%2e`, `..` and `%2f` as they are.
 */
export class RawHttp {
  private constructor(
    private readonly server: http.Server,
    private readonly agent: http.Agent,
    readonly port: number,
  ) {}

  static async start(listener: http.RequestListener): Promise<RawHttp> {
    // Node's default (16 KB) would answer long query strings itself, with a bare 431, before the app sees them.
    const server = http.createServer({ maxHeaderSize: 256 * 1024 }, listener);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    // A connection per request: an answer given before its body was read must not leave bytes for the next request.
    return new RawHttp(server, new http.Agent({ keepAlive: false }), (server.address() as AddressInfo).port);
  }

  async send(request: WireRequest, timeoutMs: number): Promise<WireAnswer> {
    const headers = { ...request.headers };
    let bytes: Uint8Array | undefined;
    if (request.body instanceof FormData) {
      const form = await encodeForm(request.body);
      bytes = form.bytes;
      headers["content-type"] ??= form.contentType;
    } else if (typeof request.body === "string") bytes = Buffer.from(request.body, "utf8");
    else bytes = request.body;
    // Explicit, or Node sends a DELETE's body with neither Content-Length nor Transfer-Encoding (as bytes after the request).
    if (bytes && request.chunked) headers["transfer-encoding"] = "chunked";
    else if (bytes) headers["content-length"] = String(bytes.length);
    return new Promise<WireAnswer>((resolve, reject) => {
      let answered = false;
      const outgoing = http.request(
        {
          host: "127.0.0.1",
          port: this.port,
          method: request.method,
          path: request.path,
          headers,
          agent: this.agent,
          timeout: timeoutMs,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () => {
            answered = true;
            const type = response.headers["content-type"];
            resolve({
              status: response.statusCode ?? 0,
              text: Buffer.concat(chunks).toString("utf8"),
              contentType: typeof type === "string" ? type : null,
            });
          });
          response.on("error", reject);
        },
      );
      outgoing.on("timeout", () => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      // A server may answer (413) and close before the whole body is written: once answered, the answer is what counts.
      outgoing.on("error", (error) => {
        if (!answered) reject(error);
      });
      if (!bytes) outgoing.end();
      else if (request.chunked) {
        const step = 64 * 1024;
        for (let at = 0; at < bytes.length; at += step) outgoing.write(bytes.subarray(at, at + step));
        outgoing.end();
      } else outgoing.end(bytes);
    });
  }

  async close(): Promise<void> {
    this.agent.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
