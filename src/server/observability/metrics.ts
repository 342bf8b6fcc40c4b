import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** Distinct GraphQL operation names kept as label values; later ones are counted as `other`. */
const MAX_OPERATION_NAMES = 200;

export interface Metrics {
  registry: Registry;
  /** One finished HTTP request; `route` is a template (`/v2/users/{user}`), never a raw path. */
  request(route: string, method: string, status: number, seconds: number): void;
  operation(name: string, type: string): void;
  rateLimited(): void;
}

/** A Prometheus registry of one app instance, with the default process metrics. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: "http_requests_total", help: "HTTP requests answered, by route template, method and status.",
    labelNames: ["route", "method", "status"] as const, registers: [registry],
  });
  const duration = new Histogram({
    name: "http_request_duration_seconds", help: "Time to answer an HTTP request, by route template and method.",
    labelNames: ["route", "method"] as const, registers: [registry],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  });
  const operations = new Counter({
    name: "graphql_operations_total", help: "GraphQL operations executed (REST requests run one named Rest_*), by name and type.",
    labelNames: ["operation", "type"] as const, registers: [registry],
  });
  const rejections = new Counter({
    name: "rate_limit_rejections_total", help: "Requests refused by the rate limit (429).", registers: [registry],
  });
  const names = new Set<string>();
  return {
    registry,
    request(route, method, status, seconds) {
      requests.inc({ route, method, status: String(status) });
      if (!Number.isNaN(seconds)) duration.observe({ route, method }, seconds);
    },
    operation(name, type) {
      if (!names.has(name) && names.size < MAX_OPERATION_NAMES) names.add(name);
      operations.inc({ operation: names.has(name) ? name : "other", type });
    },
    rateLimited: () => rejections.inc(),
  };
}
