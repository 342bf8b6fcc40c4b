import cluster from "node:cluster";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { loadConfig } from "../config.ts";
import { openDatabase } from "../db/prisma.ts";
import { migrate } from "../db/migrate.ts";
import { createApp } from "./app.ts";
import { firstRun } from "./first-run.ts";

const config = loadConfig();

/**
 * `WORKERS=N` (N > 1): this process migrates and seeds once, then forks N workers that share the
 * listening port (node:cluster) and hold no state of their own between requests. A worker that dies
 * is replaced; SIGTERM is passed on to every worker, each drains as below, and the primary exits 0
 * once they all have.
 */
if (config.workers > 1 && cluster.isPrimary) {
  const applied = await migrate(config.databaseUrl);
  if (applied.length) console.log(`Applied migrations: ${applied.join(", ")}`);
  const seedDb = await openDatabase(config.databaseUrl);
  await firstRun(seedDb.prisma, config);
  await seedDb.close();
  let stopping = false;
  const fork = () => cluster.fork({ MUSTER_WORKER: "1" });
  cluster.on("exit", (worker, code) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    console.error(`Worker ${worker.process.pid} exited (${code}); starting another`);
    fork();
  });
  for (let i = 0; i < config.workers; i++) fork();
  console.log(`Muster primary ${process.pid}: ${config.workers} workers`);
  const stop = (signal: NodeJS.Signals) => {
    stopping = true;
    console.log(`${signal}: stopping ${config.workers} workers`);
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
} else {
  await serve();
}

async function serve() {
const applied = cluster.isWorker ? [] : await migrate(config.databaseUrl);
if (applied.length) console.log(`Applied migrations: ${applied.join(", ")}`);
const db = await openDatabase(config.databaseUrl);
if (!cluster.isWorker) await firstRun(db.prisma, config);
const { yoga, rateLimit, observability } = createApp({ db, config });
// Counters go to Redis from the first request when REDIS_URL is set (the in-memory insurance limiter covers a slow start).
await rateLimit.ready();

/** Responses not yet finished: a shutdown waits for them. */
const inFlight = new Set<ServerResponse>();
let stopping = false;

const server = createServer((req, res) => {
  inFlight.add(res);
  res.on("close", () => {
    inFlight.delete(res);
    // A connection kept alive by a response that began before the stop is dropped as soon as it is idle.
    if (stopping) setImmediate(() => server.closeIdleConnections());
  });
  // Once stopping, no connection is kept alive past the response it is carrying.
  if (stopping) res.shouldKeepAlive = false;
  void yoga(req, res);
});
server.listen(config.port, config.host, () => {
  const { port } = server.address() as AddressInfo;
  const who = cluster.isWorker ? ` (worker ${process.pid})` : "";
  console.log(`Muster listening on http://${config.host === "0.0.0.0" ? "localhost" : config.host}:${port} (REST /v2, GraphQL /graphql)${who}`);
});

/**
 * Graceful stop on SIGTERM or SIGINT: the listening socket is closed at once (new connections are
 * refused), idle keep-alive connections are dropped, requests in flight are finished and answered,
 * then the database is closed and the process exits 0. An operation cannot outlive the execution
 * timeout, so past that (plus a margin) the process exits 1 without waiting; SQLite discards the
 * unfinished transactions. A second signal exits at once.
 */
async function shutdown(signal: string) {
  if (stopping) {
    console.log(`${signal} again: exiting now`);
    process.exit(1);
  }
  stopping = true;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  for (const res of inFlight) res.shouldKeepAlive = false;
  console.log(`${signal}: shutting down, ${inFlight.size} request(s) in flight`);
  setTimeout(() => {
    console.error(`Shutdown timed out with ${inFlight.size} request(s) in flight`);
    process.exit(1);
  }, config.executionTimeoutMs + 5_000).unref();
  await closed;
  await observability.close();
  await rateLimit.close();
  await db.close();
  console.log("Stopped");
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
}
