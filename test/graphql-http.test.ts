import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditServer } from "graphql-http";
import { startHarness, type Harness } from "./harness.ts";

/**
 * The GraphQL over HTTP specification's server audits (graphql-http) against `/graphql` over real HTTP.
 * Every audit request carries a key, as a client of this API would: the audits test the protocol, not auth.
 */
describe("GraphQL over HTTP compliance (graphql-http server audits)", () => {
  let h: Harness;
  let server: Server;
  let url: string;
  let key: string;

  beforeAll(async () => {
    h = await startHarness();
    key = await h.key();
    server = createServer((req, res) => void h.app.yoga(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await h.close();
  });

  it("passes every MUST and SHOULD", async () => {
    const withKey: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set("authorization", `Bearer ${key}`);
      return fetch(input, { ...init, headers });
    };
    const results = await auditServer({ url, fetchFn: withKey });
    const failing = results.filter(
      (r) => r.status !== "ok" && (r.name.startsWith("MUST") || r.name.startsWith("SHOULD")),
    );
    const report = await Promise.all(
      failing.map(async (r) => `${r.id} ${r.name}: ${r.status === "ok" ? "" : r.reason}`),
    );
    expect(report, report.join("\n")).toEqual([]);
    // The audits ran: MUSTs and SHOULDs alike.
    expect(results.filter((r) => r.name.startsWith("MUST")).length).toBeGreaterThan(10);
    expect(results.filter((r) => r.name.startsWith("SHOULD")).length).toBeGreaterThan(5);
  });
});
