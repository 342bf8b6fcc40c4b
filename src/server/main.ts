import cluster, { type Worker } from "node:cluster";
import { createServer, type ServerResponse } from "node:http";
import { createServer as createListener, type AddressInfo, type Socket } from "node:net";
import { loadConfig, type Config } from "../core/config.ts";
import { openDatabase } from "../db/prisma.ts";
import { migrate } from "../db/migrate.ts";
import { createApp } from "./app.ts";
import { firstRun } from "../http/first-run.ts";
import { shareRateLimitsAcrossWorkers } from "../http/rate-limit.ts";
import { createWorkerEventBus, relayEventsBetweenWorkers } from "./cluster-events.ts";
import { serveClusterMetrics } from "../http/observability/metrics.ts";
import { processLog } from "../http/observability/process-log.ts";
import { describeStartupError } from "./startup-errors.ts";
import { answerClientError } from "../http/client-errors.ts";
import { startDispatcher } from "../events/webhooks/dispatcher.ts";
import { startRunner } from "../events/automations/runner.ts";
import { everyHour, startEventPruning } from "../events/retention.ts";
import { pruneExpiredRecords } from "../auth/oidc/adapter.ts";
import { serveWebSocket } from "./websocket.ts";
import { closeSubscriptions } from "../graphql/subscriptions.ts";
import { createOidc } from "../http/oidc.ts";
import { requestListener } from "./http.ts";

const log = processLog();

/** A start that cannot go on: one line that says why (its stack only with LOG_LEVEL=debug), exit 1. */
function failStartup(error: unknown, where: Partial<Config> = {}): never {
  log.error(describeStartupError(error, where), error);
  process.exit(1);
}

const config = (() => {
  try {
    return loadConfig();
  } catch (error) {
    failStartup(error);
  }
})();

/** Listens, or fails the start in one line (a port in use, a host not ours). */
function listenOrFail(
  server: {
    once(event: "error", listener: (error: Error) => void): unknown;
    off(event: "error", listener: (error: Error) => void): unknown;
  },
  listen: (done: () => void) => void,
  done: () => void,
) {
  const failed = (error: Error) => failStartup(error, config);
  server.once("error", failed);
  listen(() => {
    server.off("error", failed);
    done();
  });
}

/** What the primary and its workers tell each other (`WORKERS>1`). */
type Message =
  /** Worker → primary: serving; send it connections. */
  | { muster: "ready" }
  /** Worker → primary: it was signalled on its own; send it no more connections. */
  | { muster: "stopping" }
  /** Primary → worker, with the socket of a connection the primary accepted. */
  | { muster: "connection" }
  /** Primary → worker: no connection follows this message; answer what was received, then exit. */
  | { muster: "shutdown" };

const kindOf = (message: unknown) =>
  typeof message === "object" && message !== null ? (message as { muster?: unknown }).muster : undefined;

/**
 * Resolves after one whole turn of the event loop, its poll phase included: connections waiting in the kernel's accept
 * queue have been accepted and bytes waiting on a socket have been read, so a request written before this was called
 * is no longer invisible (a connection whose request has begun is not idle).
 */
const pollOnce = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

/** Connections the kernel holds for a listening socket before they are accepted: at most this many, plus one. */
const LISTEN_BACKLOG = 511;

/**
 * Takes in what clients sent before a stop: libuv accepts one connection per turn of the event loop (and reads every
 * readable socket each turn), so turns are run until one accepts nothing, at most as many as the accept queue holds.
 */
async function takeWaiting(accepted: () => number) {
  for (let turn = 0; turn <= LISTEN_BACKLOG; turn++) {
    const before = accepted();
    await pollOnce();
    if (accepted() === before) return;
  }
}

await (config.workers > 1 && cluster.isPrimary ? runPrimary() : serve()).catch((error: unknown) =>
  failStartup(error, config),
);

/**
 * `WORKERS=N` (N > 1): this process migrates and seeds once, forks N workers, then listens itself and hands each
 * connection it accepts to the next worker in turn (node:cluster's round robin, done here so that a shutdown knows
 * every connection accepted has reached a worker before telling the workers to stop). Rate limits (without Redis)
 * and `/metrics` are kept across the workers through this process. A worker that dies is replaced. On SIGTERM the
 * connections already waiting are accepted and handed over, the listening socket is closed, each worker drains as
 * below, and this process exits 0 once they all have (1 if one of them did not finish within the grace period).
 */
async function runPrimary() {
  const applied = await migrate(config.databaseUrl);
  if (applied.length) log.info(`Applied migrations: ${applied.join(", ")}`);
  const seedDb = await openDatabase(config.databaseUrl);
  for (const line of await firstRun(seedDb.store, config)) log.info(line);
  await seedDb.close();
  shareRateLimitsAcrossWorkers(config);
  if (!config.redisUrl) relayEventsBetweenWorkers();
  serveClusterMetrics();

  /** Workers that said they are ready and are not stopping, in the order connections go to them. */
  const serving: Worker[] = [];
  let turn = 0;
  let stopping = false;
  let failed = false;
  const leave = (worker: Worker) => {
    const at = serving.indexOf(worker);
    if (at >= 0) serving.splice(at, 1);
  };
  const shutdownMessage: Message = { muster: "shutdown" };

  let accepted = 0;
  const listener = createListener({ pauseOnConnect: true, noDelay: true }, (socket) => {
    accepted++;
    const worker = serving[turn++ % Math.max(1, serving.length)];
    if (!worker) return void socket.destroy();
    worker.send({ muster: "connection" } satisfies Message, socket, (error) => {
      if (error) socket.destroy();
    });
  });
  const listen = () =>
    listenOrFail(
      listener,
      (done) => listener.listen({ port: config.port, host: config.host, backlog: LISTEN_BACKLOG }, done),
      () => {
        const { port } = listener.address() as AddressInfo;
        log.info(
          `Muster listening on http://${config.host === "0.0.0.0" ? "localhost" : config.host}:${port} (REST /v2, GraphQL /graphql) ` +
            `(primary ${process.pid}, ${serving.length} workers)`,
        );
      },
    );
  let started = false;

  const fork = () => cluster.fork({ MUSTER_WORKER: "1" });
  cluster.on("message", (worker, message: unknown) => {
    const kind = kindOf(message);
    if (kind === "ready") {
      if (stopping) return void worker.send(shutdownMessage);
      serving.push(worker);
      if (!started && serving.length === config.workers) {
        started = true;
        listen();
      }
    } else if (kind === "stopping") {
      leave(worker);
      worker.send(shutdownMessage);
    }
  });
  const running = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
  cluster.on("exit", (worker, code, signal) => {
    leave(worker);
    if (stopping) {
      if (code !== 0) failed = true;
      if (running().length === 0) process.exit(failed ? 1 : 0);
      return;
    }
    log.error(`Worker ${worker.process.pid} exited (${code ?? signal}); starting another`);
    fork();
  });
  for (let i = 0; i < config.workers; i++) fork();
  log.info(`Muster primary ${process.pid}: ${config.workers} workers`);

  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) {
      log.info(`${signal} again: exiting now`);
      for (const worker of running()) worker.process.kill("SIGKILL");
      process.exit(1);
    }
    stopping = true;
    // Connections the kernel accepted before the signal are taken and handed over before the socket closes.
    await takeWaiting(() => accepted);
    listener.close();
    log.info(`${signal}: stopping ${running().length} workers`);
    serving.length = 0;
    // Sent after every connection handed over (one channel, in order): a worker stops only once it has them all.
    for (const worker of running()) worker.send(shutdownMessage);
    setTimeout(() => {
      log.error(`Workers still running past the shutdown grace period (${config.shutdownGraceMs} ms): exiting`);
      for (const worker of running()) worker.process.kill("SIGKILL");
      process.exit(1);
    }, config.shutdownGraceMs + 5_000).unref();
    if (running().length === 0) process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

/**
 * Serves HTTP: on its own port (`WORKERS=1`) or, in a worker, the connections the primary hands over.
 *
 * Graceful stop on SIGTERM or SIGINT (in a worker, when the primary says so): connections waiting to be accepted and
 * bytes already received are taken in first (`takeWaiting`), then the listening socket is closed (new
 * connections are refused), connections with no request begun are closed, and every request received is answered,
 * with `Connection: close`; connections kept alive by a response that began earlier are closed once idle. Once the
 * last connection is closed, the database is closed and the process exits 0. Past `SHUTDOWN_GRACE_MS` it exits 1
 * without waiting (SQLite and PostgreSQL discard the unfinished transactions). A second signal exits at once.
 */
async function serve() {
  const worker = cluster.isWorker;
  // eslint-disable-next-line prefer-const -- assigned once below, but read by the signal handlers set up before that
  let beginShutdown: ((reason: string) => void) | undefined;
  let shutdownAsked = false;
  let handOver: ((socket: Socket) => void) | undefined;
  if (worker) {
    process.on("message", (message: unknown, socket?: Socket) => {
      const kind = kindOf(message);
      if (kind === "connection" && socket) {
        if (handOver) handOver(socket);
        else socket.destroy();
      } else if (kind === "shutdown") {
        if (beginShutdown) beginShutdown("shutdown requested by the primary");
        else shutdownAsked = true;
      }
    });
  }

  const applied = worker ? [] : await migrate(config.databaseUrl);
  if (applied.length) log.info(`Applied migrations: ${applied.join(", ")}`);
  const db = await openDatabase(config.databaseUrl);
  if (!worker) for (const line of await firstRun(db.store, config)) log.info(line);
  // Without Redis, the workers of WORKERS>1 hear of each other's commits through the primary.
  const app = createApp({ db, config, ...(worker && !config.redisUrl ? { events: createWorkerEventBus() } : {}) });
  const { rateLimit, observability } = app;
  const oidc = await createOidc({ db, config, logger: observability.logger, signInAttempts: app.signInAttempts });
  const listener = requestListener(app, oidc);
  // Counters go to Redis from the first request when REDIS_URL is set (the in-memory insurance limiter covers a slow start).
  await rateLimit.ready();
  // Every process that serves delivers webhooks, each worker of WORKERS>1 too: leases keep each webhook to one of them.
  const dispatcher = config.webhookDispatch
    ? startDispatcher({
        db,
        config,
        bus: app.events,
        logger: observability.logger,
        onAttempt: (outcome) => observability.metrics.webhookAttempt(outcome),
      })
    : null;
  // Automations run in every serving process too, leases keeping each automation to one of them.
  const runner = config.automationRun
    ? startRunner({ db, config, bus: app.events, logger: observability.logger })
    : null;
  // Old events are pruned by every instance (the deletes are idempotent); the primary of WORKERS>1 serves nothing.
  const pruning = startEventPruning(db, config, (error) =>
    observability.logger.error({ err: error }, "Pruning old events failed; it is tried again in an hour"),
  );
  // The OpenID provider's expired sessions, codes and tokens, which its reads already ignore.
  const oidcPruning = everyHour(
    () => pruneExpiredRecords(db),
    (error) =>
      observability.logger.error({ err: error }, "Pruning expired OpenID records failed; it is tried again in an hour"),
  );

  /** Responses not yet finished. */
  const inFlight = new Set<ServerResponse>();
  /** Open connections: the process exits once the last one closes. */
  const sockets = new Set<Socket>();
  let stopping = false;
  let finished = false;

  // On the server, so the connections a worker is handed are timed too; checked each second (Node's default is 30 s).
  const server = createServer(
    {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      connectionsCheckingInterval: 1000,
    },
    (req, res) => {
      inFlight.add(res);
      // Once stopping, no connection is kept alive past the response it is carrying.
      if (stopping) res.shouldKeepAlive = false;
      res.on("close", () => {
        inFlight.delete(res);
        // A connection kept alive by a response that began before the stop is closed once idle.
        if (stopping) closeIdle();
      });
      listener(req, res);
    },
  );
  server.on("clientError", answerClientError);
  const webSocket = serveWebSocket(server, app, db, config);
  let accepted = 0;
  server.on("connection", (socket: Socket) => {
    accepted++;
    sockets.add(socket);
    socket.once("close", () => {
      sockets.delete(socket);
      if (stopping && sockets.size === 0) void finish();
    });
  });

  let sweeping = false;
  let sweepAgain = false;
  /** Closes the connections that have no request begun and none waiting to be read. */
  function closeIdle() {
    if (sweeping) return void (sweepAgain = true);
    sweeping = true;
    void pollOnce().then(() => {
      server.closeIdleConnections();
      sweeping = false;
      if (sweepAgain) {
        sweepAgain = false;
        closeIdle();
      }
    });
  }

  async function finish() {
    if (finished) return;
    finished = true;
    // Deliveries under way are recorded (at most a receiver timeout) before the database closes.
    await dispatcher?.stop();
    await runner?.stop();
    await pruning.stop();
    await oidcPruning.stop();
    await app.events.close();
    await observability.close();
    await rateLimit.close();
    await db.close();
    log.info("Stopped");
    process.exit(0);
  }

  async function shutdown(reason: string) {
    if (stopping) return;
    stopping = true;
    for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
    // Subscriptions would hold their responses and sockets open forever: they complete now, WebSockets close (1001).
    closeSubscriptions(app.events);
    void webSocket.close();
    setTimeout(() => {
      log.error(
        `Shutdown grace period (${config.shutdownGraceMs} ms) over with ${inFlight.size} request(s) in flight: exiting`,
      );
      process.exit(1);
    }, config.shutdownGraceMs).unref();
    await takeWaiting(() => accepted);
    // http's close() also closes the connections idle at this moment; a worker has no listening socket of its own.
    if (server.listening) server.close();
    else server.closeIdleConnections();
    log.info(`${reason}: shutting down, ${inFlight.size} request(s) in flight`);
    if (sockets.size === 0) await finish();
  }
  beginShutdown = (reason) => void shutdown(reason);

  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
      log.info(`${signal} again: exiting now`);
      process.exit(1);
    }
    signalled = true;
    // A worker signalled on its own first has the primary stop sending it connections; the primary then says when.
    if (worker && process.connected) process.send!({ muster: "stopping" } satisfies Message);
    else void shutdown(signal);
  };
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  process.on("SIGINT", () => onSignal("SIGINT"));
  if (worker) process.on("disconnect", () => void shutdown("primary gone"));

  if (worker) {
    // http.Server starts its connection list (closeIdleConnections, headersTimeout, requestTimeout) on "listening";
    // this one never listens, the primary hands it connections.
    server.emit("listening");
    handOver = (socket) => {
      // As on the sockets http.Server accepts itself (it handles a client's half-close on its own).
      socket.allowHalfOpen = true;
      server.emit("connection", socket);
    };
    // Logged first: the primary says it is listening once every worker has said it is ready, and the log reads in order.
    log.info(`Muster worker ${process.pid} ready`);
    process.send!({ muster: "ready" } satisfies Message);
    if (shutdownAsked) void shutdown("shutdown requested by the primary");
  } else {
    listenOrFail(
      server,
      (done) => server.listen({ port: config.port, host: config.host, backlog: LISTEN_BACKLOG }, done),
      () => {
        const { port } = server.address() as AddressInfo;
        log.info(
          `Muster listening on http://${config.host === "0.0.0.0" ? "localhost" : config.host}:${port} (REST /v2, GraphQL /graphql)`,
        );
      },
    );
  }
}
