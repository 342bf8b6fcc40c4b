import { afterAll, beforeAll, expect, test } from "vitest";
import { createHmac } from "node:crypto";
import { postEvent, type Delivery } from "../src/events/webhooks/send.ts";
import { startReceiver, type Receiver } from "./support/webhook-receiver.ts";

/**
 * The signed POST itself (src/events/webhooks/send.ts), against a real receiver: the address checked is the one
 * connected to, so a host name that resolves to a private address is refused at delivery time too — a webhook stored
 * while its name resolved elsewhere, or a name re-pointed since, reaches nothing private.
 */
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver?.close());

const delivery = (url: string, allowPrivate: boolean): Delivery => ({
  url,
  secret: "whsec_test",
  body: JSON.stringify({ event: "rank.created", data: { id: 1 } }),
  eventType: "rank.created",
  deliveryId: "wh1-ev1",
  timeoutMs: 2000,
  allowPrivate,
});

test("a host name that resolves to a loopback address is refused when connecting, and nothing is sent", async () => {
  const port = new URL(receiver.url).port;
  const before = receiver.received.length;
  const result = await postEvent(delivery(`http://localhost:${port}/hook`, false));
  expect(result).toMatchObject({ succeeded: false, statusCode: null });
  expect(result.error).toMatch(/private address/);
  const literal = await postEvent(delivery(`http://127.0.0.1:${port}/hook`, false));
  expect(literal).toMatchObject({ succeeded: false, statusCode: null });
  expect(receiver.received.length).toBe(before);
});

test("allowed, the same POST arrives signed: hex HMAC-SHA256 of the raw body with the secret, and the event headers", async () => {
  const port = new URL(receiver.url).port;
  const sent = delivery(`http://localhost:${port}/hook`, true);
  const result = await postEvent(sent);
  expect(result).toMatchObject({ succeeded: true, statusCode: 200, error: null });
  const got = receiver.received.at(-1)!;
  expect(got.raw).toBe(sent.body);
  expect(got.headers.signature).toBe(createHmac("sha256", "whsec_test").update(got.raw).digest("hex"));
  expect(got.headers["x-muster-event"]).toBe("rank.created");
  expect(got.headers["x-muster-delivery"]).toBe("wh1-ev1");
  expect(Number(got.headers["x-muster-timestamp"])).toBeGreaterThan(Date.now() / 1000 - 60);
});

test("a scheme other than http(s) is refused without a connection", async () => {
  const result = await postEvent(delivery("ftp://example.com/x", true));
  expect(result).toMatchObject({ succeeded: false, statusCode: null });
  expect(result.error).toMatch(/unsupported protocol/);
});
