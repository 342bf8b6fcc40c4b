import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { client, startHarness, type Harness } from "./harness.ts";
import { createApp } from "../src/server/app.ts";

const preflight = (h: Harness, origin: string) =>
  h.app.yoga.fetch("http://muster.test/v2/ranks", {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": "authorization,content-type",
    },
  });

describe("by default", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  // Item 7 of issue 42: CORS_ORIGINS is empty by default (it was `*`), so an origin no OAuth client registered gets no
  // CORS header; what registered and listed origins get is in test/cors.test.ts.
  test("CORS: an origin no client registered gets no CORS header, and never credentials", async () => {
    const answer = await preflight(h, "https://roster.example.org");
    expect(answer.status).toBe(204);
    expect(answer.headers.has("access-control-allow-origin")).toBe(false);
    expect(answer.headers.has("access-control-allow-credentials")).toBe(false);
    const reply = await client(h, await h.key(), { origin: "https://roster.example.org" }).get("/v2/ranks");
    expect(reply.status).toBe(200);
    expect(reply.headers.has("access-control-allow-origin")).toBe(false);
    expect(reply.headers.has("access-control-expose-headers")).toBe(false);
  });

  test("without a key the answer is 401 before the request itself is checked (PERSCOM's order), REST and GraphQL", async () => {
    const anonymous = client(h, null);
    for (const reply of [
      await anonymous.get("/v2/ranks?include=nope"),
      await anonymous.get("/v2/ranks?page=0"),
      await anonymous.post("/v2/ranks/search", { filters: "x" }),
      await anonymous.send("POST", "/v2/ranks", "{not json"),
    ]) {
      expect(reply.status).toBe(401);
      expect(reply.body.error.type).toBe("AuthenticationException");
    }
    const graphql = await anonymous.graphql("query($id: Int!) { rank(rowId: $id) { id } }", { id: "x" });
    expect(graphql.body.errors[0].extensions.code).toBe("UNAUTHENTICATED");
    expect((await anonymous.graphql("{ __schema { queryType { name } } }")).body.data.__schema.queryType.name).toBe(
      "Query",
    );
  });

  test("security headers on API responses, errors included", async () => {
    // A successful GET is `private, no-cache` (revalidated with its ETag, src/http/response-cache.ts); errors are not stored.
    for (const [reply, cacheControl] of [
      [await client(h, await h.key()).get("/v2/ranks"), "private, no-cache"],
      [await client(h, null).get("/v2/ranks"), "no-store"],
      [await client(h, null).get("/nowhere"), "no-store"],
    ] as const) {
      expect(reply.headers.get("x-content-type-options")).toBe("nosniff");
      expect(reply.headers.get("x-frame-options")).toBe("DENY");
      expect(reply.headers.get("referrer-policy")).toBe("no-referrer");
      expect(reply.headers.get("content-security-policy")).toContain("default-src 'none'");
      expect(reply.headers.get("cache-control")).toBe(cacheControl);
    }
  });

  test("a 500 shows only the generic message and its ids — no stack, SQL or table names — and is logged in full", async () => {
    const logged: string[] = [];
    const app = createApp({
      db: h.db,
      config: { ...h.config, logLevel: "error" },
      logStream: { write: (line: string) => logged.push(line) },
    });
    const api = client({ ...h, app }, await h.key());
    await api.post("/v2/ranks", { name: "Private" });
    await h.db.prisma.$executeRawUnsafe('ALTER TABLE "Rank" RENAME TO "RankGone"');
    try {
      const restReply = await api.get("/v2/ranks");
      const graphql = await api.graphql("{ row: rank(rowId: 1) { rowId } statuses { totalCount } }");
      expect(restReply.status).toBe(500);
      // GraphQL over HTTP: a response with data is a 200; the failed field is null and its error says 500; the
      // sibling that does not read ranks keeps its data.
      expect(graphql.status).toBe(200);
      expect(graphql.body.data).toEqual({ row: null, statuses: { totalCount: 0 } });
      expect(graphql.body.errors).toHaveLength(1);
      expect(graphql.body.errors[0]).toMatchObject({ path: ["row"], extensions: { code: "INTERNAL", status: 500 } });
      for (const reply of [restReply, graphql]) {
        const text = JSON.stringify(reply.body);
        expect(text).toContain("There was a server error with your last request. Please try again.");
        expect(text).not.toMatch(/Rank"|RankGone|SELECT|sqlite|prisma|at .*\.ts:\d+/i);
      }
      const rest = (await api.get("/v2/ranks")).body.error;
      expect(Object.keys(rest).sort()).toEqual(["message", "request_id", "trace_id", "type"]);
      expect(logged.join("\n")).toMatch(/no such table|Rank/);
    } finally {
      await h.db.prisma.$executeRawUnsafe('ALTER TABLE "RankGone" RENAME TO "Rank"');
    }
  });
});

describe("with CORS_ORIGINS set", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ corsOrigins: ["https://allowed.example.org"] });
  });
  afterAll(() => h.close());

  test("only the listed origins are allowed", async () => {
    expect((await preflight(h, "https://allowed.example.org")).headers.get("access-control-allow-origin")).toBe(
      "https://allowed.example.org",
    );
    expect((await preflight(h, "https://evil.example.org")).headers.has("access-control-allow-origin")).toBe(false);
  });
});

describe("over real HTTP", () => {
  test("every status line carries its reason phrase (REST answers and errors, probes, GraphQL, public pages)", async () => {
    const { createServer } = await import("node:http");
    const { connect } = await import("node:net");
    const h = await startHarness();
    const server = createServer((req, res) => void h.app.yoga(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    const statusLine = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(port, "127.0.0.1", () => socket.write(request));
        let text = "";
        socket.on("data", (chunk) => {
          text += chunk.toString();
          if (text.includes("\r\n")) {
            resolve(text.slice(0, text.indexOf("\r\n")));
            socket.destroy();
          }
        });
        socket.on("error", reject);
      });
    const get = (path: string, headers = "") =>
      statusLine(`GET ${path} HTTP/1.1\r\nHost: muster.test\r\n${headers}Connection: close\r\n\r\n`);
    try {
      const key = await h.key();
      const auth = `Authorization: Bearer ${key}\r\n`;
      expect(await get("/v2/ranks", auth)).toBe("HTTP/1.1 200 OK");
      expect(await get("/v2/ranks")).toBe("HTTP/1.1 401 Unauthorized");
      expect(await get("/v2/ranks/999999", auth)).toBe("HTTP/1.1 404 Not Found");
      expect(await get("/v2/ranks?limit=0", auth)).toBe("HTTP/1.1 422 Unprocessable Entity");
      expect(await get("/health")).toBe("HTTP/1.1 200 OK");
      expect(await get("/", "Accept: application/json\r\n")).toBe("HTTP/1.1 200 OK");
      expect(await get("/openapi.json")).toBe("HTTP/1.1 200 OK");
      expect(
        await statusLine(
          `POST /v2/ranks HTTP/1.1\r\nHost: muster.test\r\n${auth}Content-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
        ),
      ).toBe("HTTP/1.1 415 Unsupported Media Type");
      expect(
        await statusLine(
          `POST /graphql HTTP/1.1\r\nHost: muster.test\r\n${auth}Content-Type: application/json\r\nContent-Length: 26\r\nConnection: close\r\n\r\n{"query":"{ __typename }"}`,
        ),
      ).toBe("HTTP/1.1 200 OK");
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await h.close();
    }
  });
});
