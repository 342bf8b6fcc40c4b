import type { IncomingMessage } from "node:http";
import type { Config } from "../core/config.ts";

/** What node:http's adapter gives Yoga as the server context; yoga.fetch has none. */
export type NodeServerContext = { req?: IncomingMessage };

/**
 * The client's address, for logs and for the rate limit of requests without a key. The connection's own address
 * unless `TRUST_PROXY` says which proxies to believe: `true` takes `X-Forwarded-For`'s first address, a number N
 * the address N hops back (the header's last N entries were added by the proxies in front of us; what lies before
 * them the client may have written itself).
 */
export function clientAddress(
  request: Request,
  serverContext: NodeServerContext | undefined,
  trustProxy: Config["trustProxy"],
): string {
  return addressOf(request.headers.get("x-forwarded-for"), serverContext?.req?.socket?.remoteAddress, trustProxy);
}

/** `clientAddress` of a request node:http gives directly (the OpenID provider's pages). */
export function nodeClientAddress(req: IncomingMessage, trustProxy: Config["trustProxy"]): string {
  const forwarded = req.headers["x-forwarded-for"];
  return addressOf(
    Array.isArray(forwarded) ? forwarded.join(",") : (forwarded ?? null),
    req.socket?.remoteAddress,
    trustProxy,
  );
}

function addressOf(forwardedFor: string | null, remoteAddress: string | undefined, trustProxy: Config["trustProxy"]) {
  const peer = remoteAddress ?? "unknown";
  if (trustProxy === false || trustProxy === 0) return peer;
  const forwarded = (forwardedFor ?? "")
    .split(",")
    .map((a) => a.trim())
    .filter(Boolean);
  if (forwarded.length === 0) return peer;
  if (trustProxy === true) return forwarded[0];
  const hops = [...forwarded, peer];
  return hops[Math.max(0, hops.length - 1 - trustProxy)];
}
