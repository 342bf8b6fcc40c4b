import cluster from "node:cluster";
import { randomUUID } from "node:crypto";
import { AggregatorRegistry, Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { CommitCounts } from "../../db/sqlite-group-commit.ts";

/** Distinct GraphQL operation names kept as label values; later ones are counted as `other`. */
const MAX_OPERATION_NAMES = 200;
/** The operation label of every operation run without a valid API key: their names are the client's to choose. */
export const UNAUTHENTICATED_OPERATION = "unauthenticated";
/** A worker's question to its primary, and the answer: the Prometheus text of every worker's metrics summed. */
const METRICS_REQUEST = "muster:metrics?";
const METRICS_ANSWER = "muster:metrics";
/** How long a worker waits for its primary's answer (prom-client gives the workers 5 s to answer the primary). */
const ANSWER_TIMEOUT_MS = 10_000;

export interface Metrics {
  /** This process's own metrics. */
  registry: Registry;
  /** What `/metrics` answers: this process's metrics, or in a worker of `WORKERS>1`, every worker's summed. */
  text(): Promise<string>;
  contentType: string;
  /** One finished HTTP request; `route` is a template (`/v2/users/{user}`), never a raw path. */
  request(route: string, method: string, status: number, seconds: number): void;
  operation(name: string, type: string): void;
  rateLimited(): void;
  /** One attempt to deliver an event to a webhook: `delivered`, `failed` (to be retried) or `abandoned` (the last). */
  webhookAttempt(outcome: string): void;
}

/**
 * A Prometheus registry of one app instance, with the default process metrics. With `acrossWorkers` (a worker of
 * `WORKERS>1`), `text()` asks the primary for the metrics of all the workers, summed (see `serveClusterMetrics`).
 */
export function createMetrics({
  acrossWorkers = false,
  commits,
}: { acrossWorkers?: boolean; commits?: Readonly<CommitCounts> } = {}): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: "http_requests_total",
    help: "HTTP requests answered, by route template, method and status.",
    labelNames: ["route", "method", "status"] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: "http_request_duration_seconds",
    help: "Time to answer an HTTP request, by route template and method.",
    labelNames: ["route", "method"] as const,
    registers: [registry],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  });
  const operations = new Counter({
    name: "graphql_operations_total",
    help: "GraphQL operations executed (REST requests run one named Rest_*), by name and type.",
    labelNames: ["operation", "type"] as const,
    registers: [registry],
  });
  const rejections = new Counter({
    name: "rate_limit_rejections_total",
    help: "Requests refused by the rate limit (429).",
    registers: [registry],
  });
  const webhookAttempts = new Counter({
    name: "webhook_deliveries_total",
    help: "Attempts to deliver an event to a webhook, by outcome (delivered, failed, abandoned).",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  const commitCounters = [
    ["transactions", "db_write_transactions_total", "Write transactions of the app's own committed on SQLite."],
    [
      "commits",
      "db_write_commits_total",
      "COMMITs those write transactions took: fewer than db_write_transactions_total when concurrent writes commit together (group commit).",
    ],
  ] as const;
  for (const [count, name, help] of commits ? commitCounters : []) {
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(commits![count]);
      },
    });
  }
  const names = new Set<string>();
  if (acrossWorkers) {
    AggregatorRegistry.setRegistries([registry]);
    // Its first construction in a worker is what makes the worker answer the primary's requests for its metrics.
    new AggregatorRegistry();
  }
  return {
    registry,
    text: acrossWorkers ? askPrimary : () => registry.metrics(),
    contentType: registry.contentType,
    request(route, method, status, seconds) {
      requests.inc({ route, method, status: String(status) });
      if (!Number.isNaN(seconds)) duration.observe({ route, method }, seconds);
    },
    operation(name, type) {
      if (!names.has(name) && names.size < MAX_OPERATION_NAMES) names.add(name);
      operations.inc({ operation: names.has(name) ? name : "other", type });
    },
    rateLimited: () => rejections.inc(),
    webhookAttempt: (outcome) => webhookAttempts.inc({ outcome }),
  };
}

/**
 * In the primary of `WORKERS>1`: answers a worker's `/metrics` with the metrics of every worker, summed by
 * prom-client's `AggregatorRegistry` (the primary does not serve HTTP itself; each worker asks it over IPC).
 */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on("message", (worker, message: { type?: unknown; id?: unknown }) => {
    if (message?.type !== METRICS_REQUEST) return;
    aggregator.clusterMetrics().then(
      (text) => worker.isConnected() && worker.send({ type: METRICS_ANSWER, id: message.id, text }),
      (error: Error) =>
        worker.isConnected() && worker.send({ type: METRICS_ANSWER, id: message.id, error: error.message }),
    );
  });
}

/** The metrics of every worker, from the primary. */
function askPrimary(): Promise<string> {
  const id = randomUUID();
  return new Promise((resolve, reject) => {
    const onMessage = (message: { type?: unknown; id?: unknown; text?: string; error?: string }) => {
      if (message?.type !== METRICS_ANSWER || message.id !== id) return;
      done();
      if (message.error !== undefined)
        reject(new Error(`The metrics of the workers are unavailable: ${message.error}`));
      else resolve(message.text ?? "");
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error("The metrics of the workers are unavailable: the primary did not answer in time."));
    }, ANSWER_TIMEOUT_MS);
    const done = () => {
      clearTimeout(timer);
      process.off("message", onMessage);
    };
    process.on("message", onMessage);
    process.send!({ type: METRICS_REQUEST, id });
  });
}
