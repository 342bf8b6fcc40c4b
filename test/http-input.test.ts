import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { spawnServer, type ServerProcess } from "./support/spawn-server.ts";

/**
 * The HTTP input layer over a real socket: what the URL parser, the body reader and the content-type check do before
 * any route runs. Raw paths and bodies go through node:http (fetch would normalise `%2e%2e` itself) or a bare socket.
 */
const BODY_MAX_BYTES = 64 * 1024;
const UPLOAD_MAX_BYTES = 1024 * 1024;
const BODY_READ_TIMEOUT_MS = 1000;

let server: ServerProcess;
let key: string;
let host: string;
let port: number;

beforeAll(async () => {
  server = await spawnServer({
    NODE_ENV: "production",
    BODY_MAX_BYTES: String(BODY_MAX_BYTES),
    UPLOAD_MAX_BYTES: String(UPLOAD_MAX_BYTES),
    BODY_READ_TIMEOUT_MS: String(BODY_READ_TIMEOUT_MS),
  });
  const url = new URL(server.base);
  host = url.hostname;
  port = Number(url.port);
  const { createApiKey } = await import("../src/auth/accounts.ts");
  const { openDatabase } = await import("../src/db/prisma.ts");
  const db = await openDatabase(server.databaseUrl);
  ({ key } = await createApiKey(db.store, { account: "input", scopes: "*" }));
  await db.close();
}, 120_000);
afterAll(() => server?.stop());

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The parsed body (undefined when it is not JSON): the members these tests read. */
  body: AnswerBody;
}

interface AnswerBody {
  error: { message: string; type: string; errors: Record<string, string[]> };
  errors: Array<{ message: string; extensions: { code: string; status: number } }>;
  data: { id: number; name: string; ranks: { totalCount: number } };
  meta: { total: number };
}

const parsed = (text: string) => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** One request with the path sent exactly as given. */
function send(
  method: string,
  path: string,
  body?: string | Buffer,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host, port, method, path, headers: { authorization: `Bearer ${key}`, accept: "application/json", ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status: res.statusCode!, headers: res.headers, text, body: parsed(text) });
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const json = (method: string, path: string, body: unknown, type = "application/json") =>
  send(method, path, typeof body === "string" ? body : JSON.stringify(body), { "content-type": type });

/** PERSCOM's error body, and only it. */
function perscomError(answer: Answer, status: number, type?: string) {
  expect(answer.status, answer.text.slice(0, 500)).toBe(status);
  expect(answer.headers["content-type"]).toMatch(/^application\/json/);
  expect(Object.keys(answer.body)).toEqual(["error"]);
  expect(answer.body.error).toMatchObject({
    message: expect.any(String),
    type: type ?? expect.any(String),
    request_id: expect.any(String),
    trace_id: expect.any(String),
  });
  return answer.body.error;
}

/** A GraphQL response that is one error with `code`, answered with `status`. */
function graphqlError(answer: Answer, status: number, code: string) {
  expect(answer.status, answer.text.slice(0, 500)).toBe(status);
  expect(answer.headers["content-type"]).toMatch(/json/);
  expect(answer.body.data ?? null).toBeNull();
  expect(answer.body.errors).toHaveLength(1);
  expect(answer.body.errors[0]).toMatchObject({ message: expect.any(String), extensions: { code, status } });
  return answer.body.errors[0];
}

const rankCount = async () => (await send("GET", "/v2/ranks")).body.meta.total;

describe("path ids are ids", () => {
  let userId: number;
  beforeAll(async () => {
    const created = await json("POST", "/v2/users", { name: "Kept", email: "kept@example.com" });
    expect(created.status).toBe(200);
    userId = created.body.data.id;
  });

  const dotSegments = ["%2e%2e", ".%2e", "%2e.", "%2E%2E", ".."];
  test.each(dotSegments)(
    "a dot segment (%s) in an id position is 404 on v1 and v2; the user it would resolve to is untouched",
    async (segment) => {
      for (const version of ["v1", "v2"]) {
        const path = `/${version}/users/${userId}/rank-records/${segment}`;
        perscomError(await send("DELETE", path), 404, "NotFoundHttpException");
        perscomError(await json("PATCH", path, { name: "Renamed" }), 404, "NotFoundHttpException");
        perscomError(await send("GET", path), 404, "NotFoundHttpException");
      }
      const user = await send("GET", `/v2/users/${userId}`);
      expect(user.status).toBe(200);
      expect(user.body.data.name).toBe("Kept");
    },
  );

  test("a path parameter that is not a positive integer as sent is 404, whatever it decodes to", async () => {
    const rank = (await json("POST", "/v2/ranks", { name: "Target" })).body.data.id;
    for (const id of ["0", "-1", "01", "1.0", "1e3", `%3${rank}`, "%31", `${rank}%2F..`, `${rank}%00`, "2147483648"]) {
      perscomError(await send("GET", `/v2/ranks/${id}`), 404, "NotFoundHttpException");
      perscomError(await send("DELETE", `/v1/ranks/${id}`), 404, "NotFoundHttpException");
    }
    expect((await send("GET", `/v2/ranks/${rank}`)).status).toBe(200);
  });

  test("a dot segment anywhere is 404 on every endpoint, not what the resolved URL names (the front door, GraphQL)", async () => {
    for (const path of [
      "/v2/%2e%2e",
      "/v2/ranks/%2E%2e",
      "/graphql/%2e%2e/v2/ranks",
      "/v2/%2e%2e/graphql?query=%7B__typename%7D",
      "/docs/.%2e/health",
    ]) {
      perscomError(await send("GET", path), 404, "NotFoundHttpException");
    }
    perscomError(await json("POST", "/v2/%2e%2e/graphql", { query: "{ __typename }" }), 404, "NotFoundHttpException");
  });

  test("percent-encoded literal segments and encoded slashes match no route: 404, never the decoded route", async () => {
    for (const path of [
      "/v2/%72anks",
      "/v2/RANKS",
      "/v2/ranks%2F1",
      "/v2/ranks%2f",
      "/v2%2Franks",
      "/v2/ranks/%2e%2e/ranks",
      "/v2/users/%2e%2e/ranks",
      "/%2e%2e/ranks",
      "/%762/ranks",
      "/./v2/ranks",
    ]) {
      perscomError(await send("GET", path), 404, "NotFoundHttpException");
    }
    expect((await send("GET", "/v2/ranks")).status).toBe(200);
  });
});

describe("nesting", () => {
  /** JSON text of `leaf` inside `depth` arrays (JSON.stringify itself would overflow on a few thousand). */
  const nested = (depth: number, leaf = '"x"') => `${"[".repeat(depth)}${leaf}${"]".repeat(depth)}`;

  test("a REST JSON body nested 5,000 levels is 422 naming the body, nothing stored; 60 levels reach validation", async () => {
    const before = await rankCount();
    const error = perscomError(
      await json("POST", "/v2/ranks", `{"name": "Deep", "description": ${nested(5000)}}`),
      422,
      "ValidationException",
    );
    expect(error.errors.body[0]).toMatch(/nested deeper than 64 levels/);
    perscomError(
      await json("POST", "/v2/ranks/search", `{"filters": ${nested(5000, "{}")}}`),
      422,
      "ValidationException",
    );
    expect(await rankCount()).toBe(before);
    const shallow = perscomError(
      await json("POST", "/v2/ranks", `{"name": "Shallow", "description": ${nested(60)}}`),
      422,
      "ValidationException",
    );
    expect(shallow.errors).toHaveProperty("description");
  });

  test("GraphQL: list literals, input objects and variables nested past the limit are 422, by POST and by GET", async () => {
    const list = `{ ranks(orderBy: ${"[".repeat(4000)}${"]".repeat(4000)}) { totalCount } }`;
    graphqlError(await json("POST", "/graphql", { query: list }), 422, "VALIDATION");
    const object = `{ ranks(where: ${"{ NOT: ".repeat(1500)}{ name: { equals: "x" } }${"}".repeat(1500)}) { totalCount } }`;
    graphqlError(await json("POST", "/graphql", { query: object }), 422, "VALIDATION");
    graphqlError(
      await send(
        "GET",
        `/graphql?query=${encodeURIComponent("{ ranks(orderBy: ").replace(/%20/g, "+")}${"[".repeat(4000)}${"]".repeat(4000)})+{+totalCount+}+}`,
      ),
      422,
      "VALIDATION",
    );
    const deepVariables = JSON.stringify({ query: "{ ranks { totalCount } }", variables: { deep: "@" } }).replace(
      '"@"',
      nested(5000),
    );
    graphqlError(await json("POST", "/graphql", deepVariables), 422, "VALIDATION");
    const fine = await json("POST", "/graphql", {
      query: "query ($o: [RankOrderBy!], $w: RankWhere) { ranks(orderBy: $o, where: $w) { totalCount } }",
      variables: { o: [], w: { NOT: { NOT: { NOT: { name: { equals: "x" } } } } } },
    });
    expect(fine.status, fine.text).toBe(200);
    expect(fine.body.data.ranks.totalCount).toBeGreaterThanOrEqual(0);
  });
});

/**
 * Sends a chunked body (no Content-Length) of up to `total` bytes, a chunk at a time as the socket takes it, until the
 * server answers; returns the answer and how much was sent by then.
 */
function streamUntilAnswered(path: string, type: string, total: number): Promise<Answer & { sent: number }> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = httpRequest(
      { host, port, method: "POST", path, headers: { authorization: `Bearer ${key}`, "content-type": type } },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status: res.statusCode!, headers: res.headers, text, body: parsed(text), sent });
          req.destroy();
        });
      },
    );
    req.on("error", (error) => {
      if (!answered) reject(error);
    });
    const chunk = Buffer.alloc(64 * 1024, "x");
    const pump = () => {
      while (!answered && sent < total) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      if (!answered) req.end();
    };
    req.write('{"query": "{ ranks { totalCount } }", "variables": {"padding": "');
    pump();
  });
}

describe("body size", () => {
  const over = "x".repeat(BODY_MAX_BYTES + 1024);

  test("/graphql: a body over BODY_MAX_BYTES is 413 with a GraphQL error, declared or chunked, and is not read to its end", async () => {
    graphqlError(
      await json("POST", "/graphql", { query: "{ ranks { totalCount } }", variables: { padding: over } }),
      413,
      "PAYLOAD_TOO_LARGE",
    );
    const streamed = await streamUntilAnswered("/graphql", "application/json", 60 * 1024 * 1024);
    graphqlError(streamed, 413, "PAYLOAD_TOO_LARGE");
    expect(streamed.sent).toBeLessThan(60 * 1024 * 1024);
  });

  test("REST: JSON (declared or chunked), url-encoded and multipart text over BODY_MAX_BYTES are 413 in PERSCOM's shape, nothing stored", async () => {
    const before = await rankCount();
    perscomError(await json("POST", "/v2/ranks", { name: over }), 413, "HttpException");
    const streamed = await streamUntilAnswered("/v2/ranks", "application/json", 60 * 1024 * 1024);
    perscomError(streamed, 413, "HttpException");
    expect(streamed.sent).toBeLessThan(60 * 1024 * 1024);
    perscomError(
      await json(
        "POST",
        "/v2/ranks",
        new URLSearchParams({ name: over }).toString(),
        "application/x-www-form-urlencoded",
      ),
      413,
      "HttpException",
    );
    const form = new FormData();
    form.set("name", over);
    const multipart = new Response(form);
    const bytes = Buffer.from(await multipart.arrayBuffer());
    perscomError(
      await send("POST", "/v2/ranks", bytes, { "content-type": multipart.headers.get("content-type")! }),
      413,
      "HttpException",
    );
    expect(await rankCount()).toBe(before);
  });

  test("multipart keeps the upload cap: a file larger than BODY_MAX_BYTES is stored, one over UPLOAD_MAX_BYTES is 413", async () => {
    const png = Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
      "base64",
    );
    const upload = async (size: number) => {
      const form = new FormData();
      form.set("name", "Crest");
      form.set(
        "image",
        new Blob([new Uint8Array(Buffer.concat([png, Buffer.alloc(size - png.length)]))], { type: "image/png" }),
        "crest.png",
      );
      const multipart = new Response(form);
      return send("POST", "/v2/images", Buffer.from(await multipart.arrayBuffer()), {
        "content-type": multipart.headers.get("content-type")!,
      });
    };
    const stored = await upload(4 * BODY_MAX_BYTES);
    expect(stored.status, stored.text).toBe(200);
    perscomError(await upload(UPLOAD_MAX_BYTES + BODY_MAX_BYTES + 1024), 413, "HttpException");
  });

  test("a body trickling in past BODY_READ_TIMEOUT_MS is 408 in PERSCOM's shape, and nothing is stored", async () => {
    const before = await rankCount();
    const body = '{"name": "Trickled"}';
    const raw = await new Promise<string>((resolve) => {
      const socket = connect(port, host);
      let received = "";
      const done = () => {
        clearInterval(timer);
        socket.destroy();
        resolve(received);
      };
      socket.on("data", (chunk) => (received += chunk.toString("utf8")));
      socket.on("end", done);
      socket.on("close", done);
      socket.on("error", done);
      socket.write(
        `POST /v2/ranks HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      let at = 0;
      // One byte at a time, the whole body taking about three deadlines.
      const timer = setInterval(
        () => {
          if (at < body.length) socket.write(body[at++]);
        },
        (3 * BODY_READ_TIMEOUT_MS) / body.length,
      );
    });
    expect(raw).toMatch(/^HTTP\/1\.1 408 /);
    const answer = JSON.parse(raw.slice(raw.indexOf("{"), raw.lastIndexOf("}") + 1));
    expect(Object.keys(answer)).toEqual(["error"]);
    expect(answer.error).toMatchObject({
      type: "HttpException",
      request_id: expect.any(String),
      trace_id: expect.any(String),
    });
    expect(await rankCount()).toBe(before);
  });
});

describe("content types and UTF-8", () => {
  test("a REST write whose body is not JSON, multipart or url-encoded is 415, nothing stored", async () => {
    const before = await rankCount();
    for (const type of [
      "text/plain",
      "text/plain; charset=utf-8",
      "application/xml",
      "application/jsonx",
      "application/octet-stream",
    ]) {
      perscomError(await json("POST", "/v2/ranks", { name: "Plain" }, type), 415, "UnsupportedMediaTypeHttpException");
    }
    perscomError(
      await send("POST", "/v2/ranks", JSON.stringify({ name: "Untyped" })),
      415,
      "UnsupportedMediaTypeHttpException",
    );
    expect(await rankCount()).toBe(before);
  });

  test("JSON with any +json type or charset parameter, url-encoded forms, and bodiless requests are accepted", async () => {
    for (const type of [
      "application/json",
      "application/json; charset=UTF-8",
      "Application/JSON",
      "application/vnd.api+json",
      "application/merge-patch+json;charset=utf-8",
    ]) {
      const created = await json("POST", "/v2/ranks", { name: `Typed ${type}` }, type);
      expect(created.status, `${type}: ${created.text}`).toBe(200);
    }
    const form = await json(
      "POST",
      "/v2/ranks",
      new URLSearchParams({ name: "Form" }).toString(),
      "application/x-www-form-urlencoded",
    );
    expect(form.status).toBe(200);
    expect((await send("DELETE", `/v2/ranks/${form.body.data.id}`, undefined, { "content-length": "0" })).status).toBe(
      200,
    );
    expect((await send("GET", `/v2/ranks/${form.body.data.id}`)).status).toBe(404);
  });

  test("invalid UTF-8 in a JSON body is 400, on REST and on /graphql, and nothing is stored", async () => {
    const before = await rankCount();
    const bad = Buffer.concat([Buffer.from('{"name": "Bad '), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const rest = perscomError(
      await send("POST", "/v2/ranks", bad, { "content-type": "application/json" }),
      400,
      "HttpException",
    );
    expect(rest.message).toMatch(/not valid UTF-8/);
    const graphql = Buffer.concat([
      Buffer.from('{"query": "mutation { createRank(input: {name: \\"Bad '),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('\\"}) { rank { rowId } } }"}'),
    ]);
    const answer = graphqlError(
      await send("POST", "/graphql", graphql, { "content-type": "application/json" }),
      400,
      "BAD_REQUEST",
    );
    expect(answer.message).toMatch(/not valid UTF-8/);
    graphqlError(
      await send("GET", "/graphql?query=%7B+ranks(where:+%7Bname:+%7Bequals:+%22%FF%22%7D%7D)+%7B+totalCount+%7D+%7D"),
      400,
      "BAD_REQUEST",
    );
    expect(await rankCount()).toBe(before);
  });
});

describe("requests node:http refuses before any route", () => {
  const exchange = (bytes: string) =>
    new Promise<string>((resolve) => {
      const socket = connect(port, host, () => socket.write(bytes));
      let received = "";
      socket.on("data", (chunk) => (received += chunk.toString("utf8")));
      const done = () => resolve(received);
      socket.on("close", done);
      socket.on("error", done);
    });
  const bodyOf = (raw: string) => JSON.parse(raw.slice(raw.indexOf("\r\n\r\n") + 4));

  test("headers over Node's limit are a 431 in the error shape, the connection closed", async () => {
    const raw = await exchange(`GET /v2/ranks HTTP/1.1\r\nHost: ${host}\r\nX-Padding: ${"a".repeat(20_000)}\r\n\r\n`);
    expect(raw).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(raw).toMatch(/\r\nConnection: close\r\n/i);
    expect(bodyOf(raw).error).toMatchObject({
      type: "HttpException",
      message: "The request's headers are too large.",
      request_id: expect.any(String),
    });
  });

  test("a request that is not HTTP is a 400 in the error shape", async () => {
    const raw = await exchange("HELLO THERE\r\n\r\n");
    expect(raw).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(bodyOf(raw).error).toMatchObject({ type: "HttpException", message: "The request is not valid HTTP." });
  });
});

test("a /graphql body that is neither JSON nor multipart is a 415 with a GraphQL error body", async () => {
  const answer = await send("POST", "/graphql", '{"query":"{ __typename }"}', { "content-type": "text/plain" });
  expect(answer.status).toBe(415);
  expect(answer.headers["content-type"]).toMatch(/^application\/json/);
  expect(answer.headers["x-content-type-options"]).toBe("nosniff");
  expect(answer.body.errors).toEqual([
    expect.objectContaining({
      message: "A GraphQL request body must be JSON (application/json) or multipart/form-data.",
      extensions: expect.objectContaining({
        code: "UNSUPPORTED_MEDIA_TYPE",
        status: 415,
        request_id: expect.any(String),
      }),
    }),
  ]);
});
