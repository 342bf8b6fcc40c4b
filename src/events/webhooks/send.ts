import { createHmac } from "node:crypto";
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import { BlockList, isIP } from "node:net";

/** `Signature`: hex HMAC-SHA256 of the raw body, keyed with the webhook's secret (README, "Verifying a webhook"). */
export const sign = (secret: string, body: string): string => createHmac("sha256", secret).update(body).digest("hex");

/** Addresses a webhook may not reach unless WEBHOOKS_ALLOW_PRIVATE=true: private, loopback, link-local and the like. */
const privateRanges = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["224.0.0.0", 4], ["240.0.0.0", 4],
] as const) privateRanges.addSubnet(net, prefix, "ipv4");
for (const [net, prefix] of [["::", 128], ["::1", 128], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8], ["64:ff9b::", 96]] as const) privateRanges.addSubnet(net, prefix, "ipv6");

/** True for an address a webhook may not reach by default (IPv4-mapped IPv6 addresses are judged as IPv4). */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return privateRanges.check(mapped[1]!, "ipv4");
  const family = isIP(address);
  if (family === 0) return true;
  return privateRanges.check(address, family === 4 ? "ipv4" : "ipv6");
}

export class PrivateTargetError extends Error {
  override name = "PrivateTargetError";
}

/**
 * DNS lookup that refuses private addresses: the address checked is the one connected to, so a host name that
 * resolves (or is re-pointed) to a private address is refused too.
 */
function guardedLookup(allowPrivate: boolean): typeof dnsLookup {
  return ((hostname: string, options: object, callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, "");
      const list = addresses as LookupAddress[];
      const allowed = allowPrivate ? list : list.filter((a) => !isPrivateAddress(a.address));
      if (!allowed.length) return callback(new PrivateTargetError(`${hostname} resolves to a private address`), "");
      if ((options as { all?: boolean }).all) return callback(null, allowed);
      callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  }) as typeof dnsLookup;
}

/** How long validating a webhook URL waits for its name to resolve (it runs inside the write's transaction). */
const VALIDATION_LOOKUP_MS = 1000;

/** The host names' addresses a URL reaches: for validating a webhook URL before it is stored. */
export async function resolvesToPrivate(url: URL): Promise<boolean> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host)) return isPrivateAddress(host);
  let timer: NodeJS.Timeout | undefined;
  const addresses = await Promise.race([
    new Promise<LookupAddress[]>((resolve) => dnsLookup(host, { all: true }, (error, list) => resolve(error ? [] : list))),
    new Promise<LookupAddress[]>((resolve) => (timer = setTimeout(() => resolve([]), VALIDATION_LOOKUP_MS))),
  ]).finally(() => clearTimeout(timer));
  // A name that does not resolve now (or not in time) may later: the address is checked again on every delivery.
  return addresses.some((a) => isPrivateAddress(a.address));
}

export interface Delivery {
  url: string;
  secret: string;
  /** The raw JSON body; it is what is signed. */
  body: string;
  eventType: string;
  /** `X-Muster-Delivery`: the same on every attempt at one event. */
  deliveryId: string;
  timeoutMs: number;
  allowPrivate: boolean;
}

export interface DeliveryResult {
  /** The receiver's status code; null when there was no answer (network error, timeout, refused target). */
  statusCode: number | null;
  durationMs: number;
  /** Why it failed, or null for a 2xx. */
  error: string | null;
  succeeded: boolean;
}

const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

/** One POST of an event to a webhook, signed; it never throws: a failure is in the result. */
export function postEvent(delivery: Delivery): Promise<DeliveryResult> {
  const started = performance.now();
  const timestamp = Math.floor(Date.now() / 1000).toString();
  const headers = {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(delivery.body).toString(),
    "user-agent": "Muster-Webhooks/1",
    Signature: sign(delivery.secret, delivery.body),
    "X-Muster-Event": delivery.eventType,
    "X-Muster-Delivery": delivery.deliveryId,
    "X-Muster-Timestamp": timestamp,
  };
  return new Promise((resolve) => {
    let settled = false;
    const finish = (statusCode: number | null, error: string | null) => {
      if (settled) return;
      settled = true;
      const succeeded = error === null && statusCode !== null && statusCode >= 200 && statusCode < 300;
      resolve({ statusCode, durationMs: Math.round(performance.now() - started), error: succeeded ? null : (error ?? `HTTP ${statusCode}`), succeeded });
    };
    let url: URL;
    try {
      url = new URL(delivery.url);
    } catch {
      return finish(null, "invalid URL");
    }
    const secure = url.protocol === "https:";
    if (!secure && url.protocol !== "http:") return finish(null, `unsupported protocol ${url.protocol}`);
    const host = url.hostname.replace(/^\[|\]$/g, "");
    if (isIP(host) && !delivery.allowPrivate && isPrivateAddress(host)) return finish(null, `${host} is a private address`);
    const request = (secure ? https : http).request(url, {
      method: "POST", headers, agent: secure ? agents.https : agents.http, lookup: guardedLookup(delivery.allowPrivate), timeout: delivery.timeoutMs,
    }, (response) => {
      // The body is read and dropped, so the connection can be reused; the status is the answer.
      response.on("data", () => {});
      response.on("end", () => finish(response.statusCode ?? null, null));
      response.on("error", (error) => finish(response.statusCode ?? null, error.message));
    });
    const timer = setTimeout(() => {
      finish(null, `timed out after ${delivery.timeoutMs} ms`);
      request.destroy();
    }, delivery.timeoutMs);
    request.on("close", () => clearTimeout(timer));
    request.on("timeout", () => {
      finish(null, `timed out after ${delivery.timeoutMs} ms`);
      request.destroy();
    });
    request.on("error", (error) => finish(null, error.message));
    request.end(delivery.body);
  });
}

/** `X-Muster-Delivery` of an event at a webhook: the same on every attempt and redelivery, so receivers can drop repeats. */
export const deliveryIdOf = (webhookId: number, eventId: number): string => `wh${webhookId}-ev${eventId}`;
