import { createHmac } from "node:crypto";
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { guardedLookup, isPrivateAddress } from "../../core/private-addresses.ts";

/** `Signature`: hex HMAC-SHA256 of the raw body, keyed with the webhook's secret (README, "Verifying a webhook"). */
export const sign = (secret: string, body: string): string => createHmac("sha256", secret).update(body).digest("hex");

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
  /** Further request headers (an automation's webhook action); they cannot replace the signature's. */
  headers?: Record<string, string>;
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
    ...delivery.headers,
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
      resolve({
        statusCode,
        durationMs: Math.round(performance.now() - started),
        error: succeeded ? null : (error ?? `HTTP ${statusCode}`),
        succeeded,
      });
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
    if (isIP(host) && !delivery.allowPrivate && isPrivateAddress(host))
      return finish(null, `${host} is a private address`);
    const request = (secure ? https : http).request(
      url,
      {
        method: "POST",
        headers,
        agent: secure ? agents.https : agents.http,
        lookup: guardedLookup(delivery.allowPrivate),
        timeout: delivery.timeoutMs,
      },
      (response) => {
        // The body is read and dropped, so the connection can be reused; the status is the answer.
        response.on("data", () => {});
        response.on("end", () => finish(response.statusCode ?? null, null));
        response.on("error", (error) => finish(response.statusCode ?? null, error.message));
      },
    );
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
