import { randomUUID } from "node:crypto";

export interface RequestIds {
  requestId: string;
  traceId: string;
}

const idsByRequest = new WeakMap<Request, RequestIds>();

/** Two independent UUIDs per request, as PERSCOM issues them; sent in error bodies and response headers. */
export function idsOf(request: Request): RequestIds {
  let ids = idsByRequest.get(request);
  if (!ids) {
    ids = { requestId: randomUUID(), traceId: randomUUID() };
    idsByRequest.set(request, ids);
  }
  return ids;
}
