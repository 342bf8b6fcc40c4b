import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { loadConfig, type Config } from "../src/core/config.ts";
import { createApp, type App } from "../src/server/app.ts";
import { setMaintenance } from "../src/http/maintenance.ts";
import type { RowBudget } from "../src/db/row-budget.ts";
import { client, startHarness, type Harness } from "./harness.ts";

/** A pino destination that keeps every line, parsed. */
function capture() {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      raw.push(...String(chunk).split("\n").filter(Boolean));
      done();
    },
  });
  return { stream, raw, lines: () => raw.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** An app on `h`'s database with a log of its own (and whatever else `extra` says). */
function appOn(
  h: Harness,
  config: Partial<Config> = {},
  extra: Parameters<typeof createApp>[0] extends infer O ? Partial<O> : never = {},
) {
  const log = capture();
  const app = createApp({
    db: h.db,
    config: { ...h.config, logLevel: "info", ...config },
    logStream: log.stream,
    ...extra,
  });
  return {
    app,
    log,
    as: (key: string | null, headers: Record<string, string> = {}) => client({ ...h, app }, key, headers),
  };
}

/** The value of one sample of a metric in Prometheus text, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const has = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => has[k] === v)) return Number(m[3]);
  }
  return undefined;
}

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

describe("configuration", () => {
  test("LOG_LEVEL, METRICS_TOKEN and the OpenTelemetry switches", () => {
    const none = loadConfig({});
    expect(none).toMatchObject({
      logLevel: "info",
      metricsToken: null,
      tracing: false,
      otlpTracesUrl: null,
      serviceName: "muster",
    });
    expect(loadConfig({ LOG_LEVEL: "DEBUG" }).logLevel).toBe("debug");
    expect(() => loadConfig({ LOG_LEVEL: "loud" })).toThrow(/LOG_LEVEL/);
    expect(loadConfig({ METRICS_TOKEN: "s3cret" }).metricsToken).toBe("s3cret");
    expect(loadConfig({ OTEL_TRACING: "1" })).toMatchObject({ tracing: true, otlpTracesUrl: null });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })).toMatchObject({
      tracing: true,
      otlpTracesUrl: "http://collector:4318/v1/traces",
    });
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318/traces", OTEL_SERVICE_NAME: "muster-eu" }),
    ).toMatchObject({
      tracing: true,
      otlpTracesUrl: "http://c:4318/traces",
      serviceName: "muster-eu",
    });
  });

  test("TRUST_PROXY: unset, true, a number of proxies; anything else names the variable", () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: "true" }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: "2" }).trustProxy).toBe(2);
    expect(() => loadConfig({ TRUST_PROXY: "yes" })).toThrow(
      'TRUST_PROXY must be true, false or a number of proxies, got "yes"',
    );
  });
  test("the test harness logs nothing", () => {
    expect(h.config.logLevel).toBe("silent");
  });
});

describe("request log", () => {
  test("one JSON line per request: ids, account, key, route template or operation, status, duration; no key material", async () => {
    const { log, as } = appOn(h);
    const key = await h.key("logged");
    const api = as(key);
    const user = (await api.post("/v2/users", { name: "Logged User", email: "logged@example.com" })).body.data;
    const replies = [
      await api.get(`/v2/users/${user.id}/rank-records?include=rank`),
      await as(null).get(`/v2/users/${user.id}/rank-records?apikey=${key}`),
      await api.get("/v2/ranks/999999"),
      await api.graphql("query ListRanks { ranks { nodes { id } } }"),
      await api.graphql("{ ranks { nodes { id } } }"),
      await as(null).get("/v2/ranks"),
      await api.get("/v2/no-such-route"),
    ];
    const lines = log.lines().filter((l) => l.msg === "request");
    expect(lines).toHaveLength(replies.length + 1);
    const account = lines[0].account;
    expect(account).toEqual(expect.any(Number));
    const expected = [
      { route: `GET /v2/users/{user}/rank-records`, status: 200, account, path: `/v2/users/${user.id}/rank-records` },
      { route: `GET /v2/users/{user}/rank-records`, status: 200, account },
      { route: "GET /v2/ranks/{rank}", status: 404, account },
      { route: "ListRanks", status: 200, account, path: "/graphql" },
      { route: "anonymous", status: 200, account },
      { route: "GET /v2/ranks", status: 401, account: null, key_id: null },
      // No route, no key lookup (PERSCOM's order): the caller is not known.
      { route: "GET unmatched", status: 404, account: null },
    ];
    replies.forEach((reply, i) => {
      const line = lines[i + 1];
      expect(line).toMatchObject({
        level: "info",
        msg: "request",
        method: expected[i].route.startsWith("GET") ? "GET" : "POST",
        ...expected[i],
      });
      expect(line.request_id).toBe(reply.headers.get("x-perscom-request-id"));
      expect(line.trace_id).toBe(reply.headers.get("x-perscom-trace-id"));
      expect(line.duration_ms).toEqual(expect.any(Number));
      expect(line.duration_ms).toBeGreaterThanOrEqual(0);
      if (line.account !== null) expect(line.key_id).toEqual(expect.any(Number));
      expect(line.time).toEqual(expect.any(String));
    });
    expect(lines[0]).toMatchObject({ route: "POST /v2/users", status: 200 });
    const everything = log.raw.join("\n");
    expect(everything).not.toContain(key);
    expect(everything).not.toMatch(/bearer/i);
    expect(everything).not.toContain("apikey");
  });

  test("a 500 is logged in full at error level with the ids the client was given (REST and GraphQL), never its key", async () => {
    // A request reads through a store of its own (`withBudget`): that one fails too.
    const failingStore = (store: typeof h.db.store): typeof h.db.store =>
      new Proxy(store, {
        get(target, prop) {
          if (prop === "withBudget") return (budget: RowBudget) => failingStore(target.withBudget(budget));
          if (prop === "findMany" || prop === "findPage") {
            return (model: string, args: object) =>
              model === "Rank"
                ? Promise.reject(new Error("disk on fire"))
                : (target[prop] as (model: string, args: object) => Promise<unknown>)(model, args);
          }
          const value = Reflect.get(target, prop);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
    const failing = failingStore(h.db.store);
    const log = capture();
    const app = createApp({
      db: { ...h.db, store: failing },
      config: { ...h.config, logLevel: "info" },
      logStream: log.stream,
    });
    const key = await h.key("failing");
    const api = client({ ...h, app }, key);
    const rest = await api.get(`/v2/ranks?apikey=${key}`);
    const graphql = await api.graphql("query Boom { ranks { nodes { id } } }");
    expect(rest.status).toBe(500);
    expect(graphql.body.errors[0].extensions.code).toBe("INTERNAL");
    const errors = log.lines().filter((l) => l.level === "error" && l.msg !== "request");
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatchObject({
      msg: "disk on fire",
      request_id: rest.body.error.request_id,
      trace_id: rest.body.error.trace_id,
      method: "GET",
      url: "/v2/ranks?apikey=%5BRedacted%5D",
      err: { message: "disk on fire", stack: expect.stringContaining("disk on fire") },
    });
    expect(errors[1]).toMatchObject({
      msg: "disk on fire",
      request_id: graphql.headers.get("x-perscom-request-id"),
      trace_id: graphql.headers.get("x-perscom-trace-id"),
      err: { stack: expect.stringContaining("disk on fire") },
    });
    const requests = log.lines().filter((l) => l.msg === "request");
    expect(requests[0]).toMatchObject({ level: "error", status: 500, route: "GET /v2/ranks" });
    expect(log.raw.join("\n")).not.toContain(key);
  });

  test("LOG_LEVEL filters: warn keeps the request lines out, silent writes nothing", async () => {
    for (const logLevel of ["warn", "silent"] as const) {
      const { log, as } = appOn(h, { logLevel });
      await as(await h.key("quiet")).get("/v2/ranks");
      expect(log.raw).toEqual([]);
    }
  });
});

describe("/health and /ready", () => {
  test("no key needed, JSON, answered even past the rate limit", async () => {
    const { as, log } = appOn(h, { rateLimitPerMinute: 1 });
    const anonymous = as(null);
    for (let i = 0; i < 3; i++) {
      const health = await anonymous.get("/health");
      expect(health.status).toBe(200);
      expect(health.body).toEqual({ status: "ok" });
      expect(health.headers.get("x-perscom-request-id")).toMatch(UUID);
      const ready = await anonymous.get("/ready");
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({ status: "ok" });
    }
    expect((await anonymous.get("/v2/ranks")).status).toBe(401);
    expect((await anonymous.get("/v2/ranks")).status).toBe(429);
    expect((await anonymous.get("/health")).status).toBe(200);
    // Probes are logged at debug level only.
    expect(log.lines().filter((l) => l.path === "/health")).toEqual([]);
  });

  test("maintenance mode: the API answers 503, /health and /ready stay 200 (ready says maintenance)", async () => {
    const m = await startHarness();
    try {
      const api = client(m, await m.key("maint"));
      await setMaintenance(m.db.prisma, true);
      expect((await api.get("/v2/ranks")).status).toBe(503);
      expect(await api.get("/health")).toMatchObject({ status: 200, body: { status: "ok" } });
      expect(await api.get("/ready")).toMatchObject({ status: 200, body: { status: "ok", maintenance: true } });
      expect((await m.app.yoga.fetch("http://muster.test/metrics")).status).toBe(200);
    } finally {
      await m.close();
    }
  });

  test("a migration shipped but not recorded in _prisma_migrations: /ready is 503 naming it; /health stays 200", async () => {
    const p = await startHarness();
    try {
      const api = client(p, null);
      const [last] = await p.db.prisma.$queryRawUnsafe<Array<{ migration_name: string }>>(
        `SELECT migration_name FROM "_prisma_migrations" ORDER BY migration_name DESC LIMIT 1`,
      );
      await p.db.prisma.$executeRawUnsafe(
        `DELETE FROM "_prisma_migrations" WHERE migration_name = '${last.migration_name}'`,
      );
      const ready = await api.get("/ready");
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({
        status: "unavailable",
        reason: "1 migration(s) not applied",
        pending_migrations: [last.migration_name],
      });
      expect((await api.get("/health")).status).toBe(200);
    } finally {
      await p.close();
    }
  });

  test("a database that does not answer: /ready is 503 with the reason", async () => {
    const down = new Proxy(h.db.prisma, {
      get(target, prop, receiver) {
        if (prop === "$queryRawUnsafe") return () => Promise.reject(new Error("connection refused\nmore detail"));
        return Reflect.get(target, prop, receiver);
      },
    });
    const app = createApp({ db: { ...h.db, prisma: down }, config: h.config });
    const ready = await client({ ...h, app }, null).get("/ready");
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({ status: "unavailable", reason: "database unavailable: connection refused" });
    expect((await client({ ...h, app }, null).get("/health")).status).toBe(200);
  });
});

describe("/metrics", () => {
  test("Prometheus text: request counters by route template, method and status; durations; operations; 429s; process metrics", async () => {
    const limited = await startHarness({ rateLimitPerMinute: 3 });
    try {
      const { app, as } = appOn(limited, { logLevel: "silent" });
      const api = as(await limited.key("metrics"));
      const rank = (await api.post("/v2/ranks", { name: "Private" })).body.data;
      await api.get(`/v2/ranks/${rank.id}`);
      await api.graphql("query Counted { ranks { nodes { id } } }");
      const throttled = await api.get(`/v2/ranks/${rank.id}`);
      expect(throttled.status).toBe(429);
      const scrape = await app.yoga.fetch("http://muster.test/metrics");
      expect(scrape.status).toBe(200);
      expect(scrape.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await scrape.text();
      expect(sample(text, "http_requests_total", { route: "/v2/ranks", method: "POST", status: "200" })).toBe(1);
      expect(sample(text, "http_requests_total", { route: "/v2/ranks/{rank}", method: "GET", status: "200" })).toBe(1);
      expect(sample(text, "http_requests_total", { route: "/v2/ranks/{rank}", method: "GET", status: "429" })).toBe(1);
      expect(sample(text, "http_requests_total", { route: "/graphql", method: "POST", status: "200" })).toBe(1);
      expect(text).not.toMatch(new RegExp(`route="/v2/ranks/${rank.id}"`));
      expect(sample(text, "http_request_duration_seconds_count", { route: "/v2/ranks/{rank}", method: "GET" })).toBe(2);
      expect(
        sample(text, "http_request_duration_seconds_bucket", { route: "/v2/ranks/{rank}", method: "GET", le: "+Inf" }),
      ).toBe(2);
      expect(sample(text, "graphql_operations_total", { operation: "Counted", type: "query" })).toBe(1);
      expect(sample(text, "graphql_operations_total", { operation: "Rest_createRank", type: "mutation" })).toBe(1);
      expect(sample(text, "graphql_operations_total", { operation: "Rest_rank", type: "query" })).toBe(2);
      expect(sample(text, "rate_limit_rejections_total")).toBe(1);
      expect(sample(text, "process_cpu_user_seconds_total")).toEqual(expect.any(Number));
      expect(text).toMatch(/^nodejs_heap_size_used_bytes /m);

      // A GraphQL document refused by the rate limit counts too; the scrape itself was counted and is not limited.
      await api.graphql("query Again { ranks { nodes { id } } }");
      const again = await (await app.yoga.fetch("http://muster.test/metrics")).text();
      expect(sample(again, "rate_limit_rejections_total")).toBe(2);
      expect(sample(again, "http_requests_total", { route: "/metrics", method: "GET", status: "200" })).toBe(1);
    } finally {
      await limited.close();
    }
  });

  test("each app has a registry of its own", async () => {
    const a = appOn(h, { logLevel: "silent" });
    const b = appOn(h, { logLevel: "silent" });
    await a.as(await h.key("registry")).get("/v2/ranks");
    const text = await (await b.app.yoga.fetch("http://muster.test/metrics")).text();
    expect(sample(text, "http_requests_total", { route: "/v2/ranks", method: "GET", status: "200" })).toBeUndefined();
  });

  test("operations run without a valid key count under one name, whatever names the client makes up", async () => {
    const { app, as } = appOn(h, { logLevel: "silent" });
    for (const key of [null, "mst_not_a_key"]) {
      for (let i = 0; i < 5; i++)
        expect((await as(key).graphql(`query Flood${key ? "Keyed" : ""}${i} { ranks { nodes { id } } }`)).status).toBe(
          401,
        );
    }
    await as(await h.key("named-operations")).graphql("query Named { ranks { nodes { id } } }");
    const text = await (await app.yoga.fetch("http://muster.test/metrics")).text();
    expect(text).not.toMatch(/operation="Flood/);
    expect(sample(text, "graphql_operations_total", { operation: "unauthenticated", type: "query" })).toBe(10);
    expect(sample(text, "graphql_operations_total", { operation: "Named", type: "query" })).toBe(1);
  });

  test("METRICS_TOKEN: a Bearer token is required when set", async () => {
    const { app } = appOn(h, { logLevel: "silent", metricsToken: "scrape-me" });
    const get = (headers: Record<string, string> = {}) => app.yoga.fetch("http://muster.test/metrics", { headers });
    const none = await get();
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe("Bearer");
    expect((await none.json()).error.message).toBe("A valid metrics token is required.");
    expect((await get({ authorization: "Bearer wrong" })).status).toBe(401);
    const ok = await get({ authorization: "Bearer scrape-me" });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toMatch(/^# HELP http_requests_total/m);
  });
});

describe("tracing", () => {
  let app: App;
  let exporter: InMemorySpanExporter;
  let key: string;
  beforeAll(async () => {
    exporter = new InMemorySpanExporter();
    app = createApp({ db: h.db, config: { ...h.config, tracing: true }, spanExporter: exporter });
    key = await h.key("traced");
  });

  const uuidOf = (traceId: string) => traceId.replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, "$1-$2-$3-$4-$5");

  test("the trace id answered (header and error body) is the request span's trace id; the operation is a child span", async () => {
    exporter.reset();
    const api = client({ ...h, app }, key);
    const missing = await api.get("/v2/ranks/999999");
    expect(missing.status).toBe(404);
    const spans = exporter.getFinishedSpans();
    const server = spans.find((s) => s.name === "GET /v2/ranks/{rank}")!;
    expect(server).toBeDefined();
    expect(missing.headers.get("x-perscom-trace-id")).toBe(uuidOf(server.spanContext().traceId));
    expect(missing.body.error.trace_id).toBe(uuidOf(server.spanContext().traceId));
    expect(server.attributes).toMatchObject({
      "http.request.method": "GET",
      "http.route": "/v2/ranks/{rank}",
      "http.response.status_code": 404,
    });
    const operation = spans.find((s) => s.name === "graphql.query Rest_rank")!;
    expect(operation.spanContext().traceId).toBe(server.spanContext().traceId);
    expect(operation.parentSpanContext?.spanId).toBe(server.spanContext().spanId);

    const graphql = await api.graphql("query Traced { ranks { nodes { id } } }");
    const span = exporter.getFinishedSpans().find((s) => s.name === "POST /graphql Traced")!;
    expect(graphql.headers.get("x-perscom-trace-id")).toBe(uuidOf(span.spanContext().traceId));
  });

  test("an incoming traceparent is continued", async () => {
    exporter.reset();
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const reply = await client({ ...h, app }, key, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` }).get(
      "/v2/ranks",
    );
    expect(reply.headers.get("x-perscom-trace-id")).toBe("4bf92f35-77b3-4da6-a3ce-929d0e0e4736");
    const server = exporter.getFinishedSpans().find((s) => s.name === "GET /v2/ranks")!;
    expect(server.spanContext().traceId).toBe(traceId);
    expect(server.parentSpanContext?.spanId).toBe("00f067aa0ba902b7");
    const invalid = await client({ ...h, app }, key, {
      traceparent: "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
    }).get("/v2/ranks");
    expect(invalid.headers.get("x-perscom-trace-id")).not.toBe("00000000-0000-0000-0000-000000000000");
  });

  test("tracing off: no spans, trace ids stay independent random UUIDs", async () => {
    const reply = await client(h, key, { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" }).get(
      "/v2/ranks",
    );
    expect(reply.headers.get("x-perscom-trace-id")).toMatch(UUID);
    expect(reply.headers.get("x-perscom-trace-id")).not.toBe("4bf92f35-77b3-4da6-a3ce-929d0e0e4736");
    expect(h.app.observability.tracing).toBeNull();
  });
});

describe("over real HTTP", () => {
  let server: Server;
  let base: string;
  let log: ReturnType<typeof capture>;
  beforeAll(async () => {
    const made = appOn(h);
    log = made.log;
    server = createServer((req, res) => void made.app.yoga(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test("probes, a logged request and the metrics that counted it", async () => {
    expect(await (await fetch(`${base}/health`)).json()).toEqual({ status: "ok" });
    expect((await fetch(`${base}/ready`)).status).toBe(200);
    const key = await h.key("http");
    const reply = await fetch(`${base}/v2/ranks`, { headers: { authorization: `Bearer ${key}` } });
    expect(reply.status).toBe(200);
    const line = log.lines().find((l) => l.request_id === reply.headers.get("x-perscom-request-id"));
    expect(line).toMatchObject({
      route: "GET /v2/ranks",
      status: 200,
      key_id: expect.any(Number),
      account: expect.any(Number),
    });
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(sample(text, "http_requests_total", { route: "/v2/ranks", method: "GET", status: "200" })).toBe(1);
    expect(sample(text, "http_requests_total", { route: "/health", method: "GET", status: "200" })).toBe(1);
    expect(log.raw.join("\n")).not.toContain(key);
  });
});

describe("client address, user agent and pid in the request log", () => {
  async function serveOn(config: Partial<Config>) {
    const made = appOn(h, config);
    const server = createServer((req, res) => void made.app.yoga(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const lineOf = async (headers: Record<string, string>) => {
      const reply = await fetch(`${base}/v2/ranks`, { headers });
      await reply.arrayBuffer();
      return made.log.lines().find((l) => l.request_id === reply.headers.get("x-perscom-request-id"))!;
    };
    return { lineOf, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }

  test("without TRUST_PROXY the connection's address is logged, whatever X-Forwarded-For says", async () => {
    const served = await serveOn({ trustProxy: false });
    try {
      const line = await served.lineOf({ "user-agent": "roster-sync/2.1", "x-forwarded-for": "203.0.113.9" });
      expect(line.client).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
      expect(line.user_agent).toBe("roster-sync/2.1");
      expect(line.pid).toBe(process.pid);
    } finally {
      await served.close();
    }
  });

  test("TRUST_PROXY=1 takes the address the one proxy in front added; true takes the first; a spoofed prefix is not believed", async () => {
    const one = await serveOn({ trustProxy: 1 });
    const all = await serveOn({ trustProxy: true });
    try {
      expect((await one.lineOf({ "x-forwarded-for": "198.51.100.7" })).client).toBe("198.51.100.7");
      // A client that writes its own header before the proxy appends the real address gets the real one logged.
      expect((await one.lineOf({ "x-forwarded-for": "10.6.6.6, 198.51.100.7" })).client).toBe("198.51.100.7");
      expect((await all.lineOf({ "x-forwarded-for": "198.51.100.8, 10.0.0.1" })).client).toBe("198.51.100.8");
      expect((await one.lineOf({})).client).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
    } finally {
      await one.close();
      await all.close();
    }
  });
});
