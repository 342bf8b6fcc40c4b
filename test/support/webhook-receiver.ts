import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One POST a webhook receiver got. */
/** The members of a webhook delivery's body, sorted: PERSCOM's, and the actor beside them (issue 42). */
export const DELIVERY_BODY_KEYS = [
  "actor",
  "changes",
  "created",
  "data",
  "event",
  "id",
  "record_id",
  "request_id",
  "resource",
  "trace_id",
];

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, as it was signed. */
  raw: string;
  /** The parsed body (null if it was not JSON, which the dispatcher never sends). */
  body: Delivery;
}

/** A delivery's JSON body: one change event, as the dispatcher sends it. */
export interface Delivery {
  id: number;
  event: string;
  created: string;
  resource: string;
  record_id: number;
  request_id: string | null;
  trace_id: string | null;
  data: Record<string, unknown>;
  changes: Record<string, { old: unknown; new: unknown }> | null;
  /** Who made the change (src/core/events.ts `Actor`); null for the CLI. */
  actor: Record<string, unknown> | null;
}

/** How the receiver answers a request: a status code, or `hang` (no answer until the sender gives up). */
export type Answer = number | "hang";

export interface Receiver {
  /** `http://127.0.0.1:<port>` */
  url: string;
  received: Received[];
  /** Decides each answer (200 by default); `n` counts the requests before this one with its `X-Muster-Delivery`. */
  answer: (request: Received, n: number) => Answer;
  /** Resolves once `done()` holds, checking as requests arrive; fails after `timeoutMs` saying what arrived. */
  until(done: (received: Received[]) => boolean, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A real HTTP server on 127.0.0.1 that records the webhook POSTs it gets. */
export async function startReceiver(): Promise<Receiver> {
  const hanging = new Set<ServerResponse>();
  const seen = new Map<string, number>();
  const receiver: Receiver = {
    url: "",
    received: [],
    answer: () => 200,
    async until(done, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!done(receiver.received)) {
        if (Date.now() > deadline) {
          throw new Error(
            `the receiver did not get what was expected in ${timeoutMs} ms; it got: ${JSON.stringify(receiver.received.map((r) => [r.headers["x-muster-delivery"], r.body?.event]))}`,
          );
        }
        await sleep(10);
      }
      return receiver.received;
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let body: Delivery | null = null;
      try {
        body = JSON.parse(raw);
      } catch {}
      const request: Received = { path: req.url ?? "/", headers: req.headers, raw, body: body as Delivery };
      const id = String(req.headers["x-muster-delivery"]);
      const n = seen.get(id) ?? 0;
      seen.set(id, n + 1);
      receiver.received.push(request);
      const answer = receiver.answer(request, n);
      if (answer === "hang") {
        hanging.add(res);
        res.on("close", () => hanging.delete(res));
        return;
      }
      res.writeHead(answer, { "content-type": "text/plain" }).end(answer < 300 ? "ok" : "no");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}
