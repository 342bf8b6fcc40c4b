import path from "node:path";

/** Service configuration, read from the environment once at start-up. */
export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  /** Directory where uploaded files are stored by the `disk` driver. */
  storageDir: string;
  /** Where uploads live: `disk` (under `storageDir`, this instance's) or `database` (shared by every instance). */
  storageDriver: StorageDriver;
  /** Absolute base URL for file links; defaults to the request's own origin. */
  publicUrl: string | null;
  defaultPageSize: number;
  maxPageSize: number;
  /** When true, accounts without an active or trialing subscription get 402. */
  subscriptionsEnforced: boolean;
  uploadMaxBytes: number;
  bodyMaxBytes: number;
  /**
   * Deepest nesting of a JSON body, of GraphQL variables, and of brackets (`{`, `[`, `(`) in a GraphQL document;
   * deeper is a 422 before anything walks it.
   */
  bodyMaxDepth: number;
  /** Time from a request's headers to the last byte of its body; a body still arriving then is answered 408. */
  bodyReadTimeoutMs: number;
  /** Most items one `resources` list (batch, attach, sync...) may carry. */
  batchMaxItems: number;
  /** Root fields (one per REST request) an API key, or a client address without a key, may run per minute. */
  rateLimitPerMinute: number;
  /**
   * Root fields one client address may run per minute with publishable keys (all of them together), besides each key's
   * own `rateLimitPerMinute`: a publishable key is public, so its allowance alone would let one visitor use it all up.
   */
  publicRateLimitPerMinute: number;
  /** Failed password sign-ins one person (account and email) may make per window before being refused for its rest. */
  signInFailuresPerPerson: number;
  /** Failed password sign-ins one client address may make per window, whatever the emails. */
  signInFailuresPerAddress: number;
  /** The window of those two limits, in minutes. */
  signInFailureWindowMinutes: number;
  /** Redis holding the rate-limit counters and carrying committed events, shared by every instance; null: in memory per instance. */
  redisUrl: string | null;
  /**
   * The deployment's namespace in Redis (REDIS_PREFIX): its rate-limit keys and its event channel start with it. The
   * instances of one deployment share it; deployments sharing one Redis need prefixes of their own, or their API keys'
   * allowances and their accounts' events mix (ids are numbered per database).
   */
  redisPrefix: string;
  /**
   * The shared cache of public reads (RESPONSE_CACHE: `on`/`true`, `off`/`false`; on by default): GET responses to publishable keys and
   * anonymous requests, kept in Redis when `redisUrl` is set, in this process's memory otherwise.
   */
  responseCache: boolean;
  /** Seconds a public read is fresh: its `Cache-Control: public, max-age` and its life in the shared cache. */
  responseCacheMaxAge: number;
  /** Bounds of the in-memory cache (without Redis): entries, and bytes of their bodies. */
  responseCacheMaxEntries: number;
  responseCacheMaxBytes: number;
  /** `include`: most values, and most segments in one value (`a.b.c` is 3). */
  includeMaxCount: number;
  includeMaxDepth: number;
  /** GraphQL document limits: field depth, cost (graphql-armor's measure), aliases, tokens. */
  graphqlMaxDepth: number;
  graphqlMaxCost: number;
  graphqlMaxAliases: number;
  graphqlMaxTokens: number;
  /**
   * Budget of `/graphql`'s worst-case estimate: rows an operation may load, each list counted as its `first`/`limit`
   * (or the default page size) and a list that takes no size as `graphqlListEstimate`, multiplied through every level.
   */
  graphqlMaxComplexity: number;
  /** Rows the cost model assumes for a nested list that takes no size argument (a to-many relation). */
  graphqlListEstimate: number;
  /** Rows of a GraphQL connection when the client gives neither `first` nor `last` (GRAPHQL_DEFAULT_FIRST). */
  graphqlDefaultFirst: number;
  /** Rows one request (GraphQL operation or REST call) may read from the database before it is refused with a 422. */
  maxRowsPerRequest: number;
  /**
   * When true, `/graphql` runs only trusted documents (sent by `documentId`) for keys without the `graphql:arbitrary`
   * scope (or `*`); a `query` text from such a key is a 403. REST routes are unaffected.
   */
  graphqlTrustedDocumentsOnly: boolean;
  /**
   * Read operations run on the planned executor (src/graphql/planned-execution.ts) when every field allows it; false
   * (GRAPHQL_PLANNED_EXECUTION=false) runs everything on graphql-js, the reference the planned executor is tested against.
   */
  graphqlPlannedExecution: boolean;
  /** An operation running longer is answered 503; write transactions are rolled back after it. */
  executionTimeoutMs: number;
  /** Read operations (GraphQL and REST requests) one process runs at once; the rest wait their turn, in order. */
  maxConcurrentOperations: number;
  /** Write operations (mutations, REST writes) one process runs at once, in a line of their own. */
  maxConcurrentWrites: number;
  /**
   * Origins the operator allows by CORS (`*`: any), besides those of enabled OAuth clients (src/http/cors.ts). None
   * by default.
   */
  corsOrigins: string[];
  /** Server processes sharing the port (`npm start` with node:cluster); 1 runs in this process. */
  workers: number;
  /** On SIGTERM, how long requests already received may take to be answered before the process exits anyway (exit 1). */
  shutdownGraceMs: number;
  /** A client has this long to send a request's headers (node:http's `headersTimeout`); then it is answered 408. */
  headersTimeoutMs: number;
  /** A client has this long to send a whole request, body included (`requestTimeout`); then it is answered 408. */
  requestTimeoutMs: number;
  /** How the client address of a request is found (logs, rate limits without a key): see `trustProxy`. */
  trustProxy: boolean | number;
  /** pino level of the JSON log on stdout: fatal, error, warn, info, debug, trace or silent. */
  logLevel: LogLevel;
  /** When set, `GET /metrics` requires `Authorization: Bearer <token>`. */
  metricsToken: string | null;
  /** OpenTelemetry tracing: one span per request (and per GraphQL operation); the trace id is the one answered. */
  tracing: boolean;
  /** OTLP/HTTP URL spans are sent to (`…/v1/traces`); null keeps them in the process (tests read them). */
  otlpTracesUrl: string | null;
  /** `service.name` of the spans. */
  serviceName: string;
  /** Days events are kept in the outbox (change feed, redelivery) before they are pruned. */
  eventRetentionDays: number;
  /** Webhook deliveries run in this process (false: it only records events; another instance delivers). */
  webhookDispatch: boolean;
  /** Attempts at one event before a webhook gives up on it and moves on. */
  webhookMaxAttempts: number;
  /** Time a receiver has to answer one delivery. */
  webhookTimeoutMs: number;
  /** First retry delay; each next one doubles, with jitter. */
  webhookRetryBaseMs: number;
  /** A webhook whose deliveries have failed for this long is disabled (and says why). */
  webhookDisableAfterMs: number;
  /** How often the dispatcher looks for work it was not told about (another instance's events, due retries). */
  webhookPollMs: number;
  /** Allows webhook URLs that resolve to private, loopback or link-local addresses (tests, private networks). */
  webhooksAllowPrivate: boolean;
  /** Automations run in this process (false: it only records events; another instance runs them). */
  automationRun: boolean;
  /** Attempts at one run (an action failing) before it is recorded failed and the automation moves on. */
  automationMaxAttempts: number;
  /** First retry delay of a failed run; each next one doubles, with jitter. */
  automationRetryBaseMs: number;
  /** How often the runner looks for work it was not told about (another instance's events, due retries and schedules). */
  automationPollMs: number;
  /** GraphQL subscriptions one API key may hold open at once. */
  subscriptionsPerKey: number;
  /**
   * The SMTP server password reset emails go through (`smtp://user:pass@host:587`, `smtps://...`: nodemailer's URL);
   * null: resets by email are off (the forgot-password page says so).
   */
  smtpUrl: string | null;
  /** The From of the emails the service sends (`Muster <no-reply@example.org>`). */
  mailFrom: string;
  /**
   * Public form submissions must carry a captcha token this server verifies (CAPTCHA_VERIFY_URL + CAPTCHA_SECRET, set
   * together): the siteverify endpoint Turnstile, hCaptcha and reCAPTCHA share; null: no captcha is asked for.
   */
  captcha: { verifyUrl: string; secret: string } | null;
  /** Time the captcha verifier has to answer; a submission it has not answered by then is a 503 (nothing stored). */
  captchaTimeoutMs: number;
  /** Public form submissions one client address may make per window, whatever the form. */
  publicSubmissionsPerAddress: number;
  /** Public form submissions one form may take per window, from every address together. */
  publicSubmissionsPerForm: number;
  /** The window of those two limits, in minutes. */
  publicSubmissionWindowMinutes: number;
}

export const storageDrivers = ["disk", "database"] as const;
export type StorageDriver = (typeof storageDrivers)[number];

function storageDriver(value: string | undefined): StorageDriver {
  if (value === undefined || value === "") return "disk";
  if (!(storageDrivers as readonly string[]).includes(value))
    throw new ConfigError(`STORAGE_DRIVER must be one of ${storageDrivers.join(", ")}, got "${value}"`);
  return value as StorageDriver;
}

export const logLevels = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof logLevels)[number];

function logLevel(value: string | undefined): LogLevel {
  if (value === undefined || value === "") return "info";
  const level = value.toLowerCase() as LogLevel;
  if (!logLevels.includes(level))
    throw new ConfigError(`LOG_LEVEL must be one of ${logLevels.join(", ")}, got "${value}"`);
  return level;
}

/** `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as is, or `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces` (OpenTelemetry's rule). */
function otlpTracesUrl(env: NodeJS.ProcessEnv): string | null {
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT) return `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, "")}/v1/traces`;
  return null;
}

/** A setting that cannot be used as given: its message names the variable, the value and what is expected. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** The positive integer in `env[name]`, or `fallback` when unset; at most `max`. */
function int(env: NodeJS.ProcessEnv, name: string, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = env[name];
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n <= 0 || n > max) {
    throw new ConfigError(
      `${name} must be a positive integer${max < Number.MAX_SAFE_INTEGER ? ` up to ${max}` : ""}, got "${value}"`,
    );
  }
  return n;
}

/** `true`/`1` or `false`/`0` in `env[name]`, `unset` when unset; anything else is an error rather than a silent "off". */
function flag(env: NodeJS.ProcessEnv, name: string, unset = false): boolean {
  const value = env[name];
  if (value === undefined || value === "") return unset;
  if (value === "false" || value === "0") return false;
  if (value === "true" || value === "1") return true;
  throw new ConfigError(`${name} must be true or false, got "${value}"`);
}

/**
 * `TRUST_PROXY`: how the client address of a request is found. Unset or `false`: the connection's own address.
 * `true`: the first (left-most) address of `X-Forwarded-For`. A number N: the address N hops back from the
 * connection (`1` behind one load balancer), so a client cannot choose its address by sending the header itself.
 */
function trustProxy(value: string | undefined): boolean | number {
  if (value === undefined || value === "" || value === "false" || value === "0") return false;
  if (value === "true") return true;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n))
    throw new ConfigError(`TRUST_PROXY must be true, false or a number of proxies, got "${value}"`);
  return n;
}

/** `REDIS_PREFIX`: letters, digits and `:_.-`, up to 64; unset, `muster`. */
function redisPrefix(value: string | undefined): string {
  if (value === undefined || value === "") return "muster";
  if (!/^[\w:.-]{1,64}$/.test(value))
    throw new ConfigError(`REDIS_PREFIX must be 1 to 64 letters, digits or ":_.-", got "${value}"`);
  return value;
}

/**
 * `HEADERS_TIMEOUT_MS` and `REQUEST_TIMEOUT_MS`: how long a slow client may hold a connection before its request is
 * whole. node:http refuses a headers timeout longer than the request timeout, so that is a start-up error here.
 */
function clientTimeouts(env: NodeJS.ProcessEnv): { headersTimeoutMs: number; requestTimeoutMs: number } {
  const headersTimeoutMs = int(env, "HEADERS_TIMEOUT_MS", 15_000);
  const requestTimeoutMs = int(env, "REQUEST_TIMEOUT_MS", 60_000);
  if (headersTimeoutMs > requestTimeoutMs)
    throw new ConfigError(
      `HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not be longer than REQUEST_TIMEOUT_MS (${requestTimeoutMs})`,
    );
  return { headersTimeoutMs, requestTimeoutMs };
}

/** A database URL as it may be shown: the password masked. */
export function maskedUrl(url: string): string {
  return url.replace(/^([a-z][\w+.-]*:\/\/[^:/@]*):[^@/]*@/i, "$1:***@");
}

function smtpUrl(value: string | undefined): string | null {
  if (value === undefined || value === "") return null;
  if (!/^smtps?:\/\/[^/\s]+/i.test(value))
    throw new ConfigError(`SMTP_URL must be an smtp:// or smtps:// URL, got "${maskedUrl(value)}"`);
  return value;
}

/** CAPTCHA_VERIFY_URL and CAPTCHA_SECRET: both (an http(s) URL and the secret) or neither. */
function captcha(env: NodeJS.ProcessEnv): Config["captcha"] {
  const verifyUrl = env.CAPTCHA_VERIFY_URL || null;
  const secret = env.CAPTCHA_SECRET || null;
  if (!verifyUrl && !secret) return null;
  if (!verifyUrl || !secret)
    throw new ConfigError("CAPTCHA_VERIFY_URL and CAPTCHA_SECRET must be set together (or neither, for no captcha)");
  if (!/^https?:\/\/[^/\s]+/i.test(verifyUrl))
    throw new ConfigError(`CAPTCHA_VERIFY_URL must be an http:// or https:// URL, got "${maskedUrl(verifyUrl)}"`);
  return { verifyUrl, secret };
}

function databaseUrl(value: string | undefined): string {
  const url = value || defaultDatabaseUrl();
  if (!/^file:/i.test(url) && !/^postgres(ql)?:\/\//i.test(url)) {
    throw new ConfigError(
      `DATABASE_URL must be a file: URL (SQLite) or a postgresql:// URL (PostgreSQL), got "${maskedUrl(url)}"`,
    );
  }
  return url;
}

export function defaultDatabaseUrl(cwd = process.cwd()): string {
  return `file:${path.join(cwd, "data", "muster.db")}`;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const maxPageSize = int(env, "MAX_PAGE_SIZE", 100);
  return {
    port: int(env, "PORT", 8080, 65535),
    host: env.HOST ?? "0.0.0.0",
    databaseUrl: databaseUrl(env.DATABASE_URL),
    storageDir: env.STORAGE_DIR || path.join(process.cwd(), "data", "files"),
    storageDriver: storageDriver(env.STORAGE_DRIVER),
    publicUrl: env.PUBLIC_URL || null,
    defaultPageSize: int(env, "DEFAULT_PAGE_SIZE", 15),
    maxPageSize,
    subscriptionsEnforced: env.SUBSCRIPTIONS_ENFORCED === "true" || env.SUBSCRIPTIONS_ENFORCED === "1",
    uploadMaxBytes: int(env, "UPLOAD_MAX_BYTES", 10 * 1024 * 1024),
    bodyMaxBytes: int(env, "BODY_MAX_BYTES", 2 * 1024 * 1024),
    bodyMaxDepth: int(env, "BODY_MAX_DEPTH", 64),
    bodyReadTimeoutMs: int(env, "BODY_READ_TIMEOUT_MS", 10_000),
    batchMaxItems: int(env, "BATCH_MAX_ITEMS", 1000),
    rateLimitPerMinute: int(env, "RATE_LIMIT_PER_MINUTE", 1000),
    publicRateLimitPerMinute: int(env, "PUBLIC_RATE_LIMIT_PER_MINUTE", 300),
    signInFailuresPerPerson: int(env, "SIGN_IN_FAILURES_PER_PERSON", 5),
    signInFailuresPerAddress: int(env, "SIGN_IN_FAILURES_PER_ADDRESS", 20),
    signInFailureWindowMinutes: int(env, "SIGN_IN_FAILURE_WINDOW_MINUTES", 15, 24 * 60),
    redisUrl: env.REDIS_URL || null,
    redisPrefix: redisPrefix(env.REDIS_PREFIX),
    responseCache: flag(
      { RESPONSE_CACHE: env.RESPONSE_CACHE?.replace(/^on$/, "true").replace(/^off$/, "false") },
      "RESPONSE_CACHE",
      true,
    ),
    responseCacheMaxAge: int(env, "RESPONSE_CACHE_MAX_AGE", 60, 86_400),
    responseCacheMaxEntries: int(env, "RESPONSE_CACHE_MAX_ENTRIES", 10_000),
    responseCacheMaxBytes: int(env, "RESPONSE_CACHE_MAX_BYTES", 64 * 1024 * 1024),
    includeMaxCount: int(env, "INCLUDE_MAX_COUNT", 20),
    includeMaxDepth: int(env, "INCLUDE_MAX_DEPTH", 4),
    graphqlMaxDepth: int(env, "GRAPHQL_MAX_DEPTH", 10),
    graphqlMaxCost: int(env, "GRAPHQL_MAX_COST", 10000),
    graphqlMaxAliases: int(env, "GRAPHQL_MAX_ALIASES", 30),
    graphqlMaxTokens: int(env, "GRAPHQL_MAX_TOKENS", 5000),
    graphqlMaxComplexity: int(env, "GRAPHQL_MAX_COMPLEXITY", 50_000),
    graphqlListEstimate: int(env, "GRAPHQL_LIST_ESTIMATE", 50),
    // A default page over the maximum would refuse every connection queried without `first`.
    graphqlDefaultFirst: int(env, "GRAPHQL_DEFAULT_FIRST", Math.min(20, maxPageSize), maxPageSize),
    maxRowsPerRequest: int(env, "MAX_ROWS_PER_REQUEST", 10_000),
    graphqlTrustedDocumentsOnly: flag(env, "GRAPHQL_TRUSTED_DOCUMENTS_ONLY"),
    graphqlPlannedExecution: flag(env, "GRAPHQL_PLANNED_EXECUTION", true),
    executionTimeoutMs: int(env, "EXECUTION_TIMEOUT_MS", 30000),
    maxConcurrentOperations: int(env, "MAX_CONCURRENT_OPERATIONS", 8),
    maxConcurrentWrites: int(env, "MAX_CONCURRENT_WRITES", 16),
    workers: int(env, "WORKERS", 1),
    shutdownGraceMs: int(env, "SHUTDOWN_GRACE_MS", 30_000),
    ...clientTimeouts(env),
    corsOrigins: (env.CORS_ORIGINS ?? "")
      .split(",")
      .map((o) => o.trim())
      .filter(Boolean),
    trustProxy: trustProxy(env.TRUST_PROXY),
    logLevel: logLevel(env.LOG_LEVEL),
    metricsToken: env.METRICS_TOKEN || null,
    tracing: env.OTEL_TRACING === "1" || env.OTEL_TRACING === "true" || otlpTracesUrl(env) !== null,
    otlpTracesUrl: otlpTracesUrl(env),
    serviceName: env.OTEL_SERVICE_NAME || "muster",
    eventRetentionDays: int(env, "EVENT_RETENTION_DAYS", 30, 36_500),
    webhookDispatch: flag(env, "WEBHOOK_DISPATCH", true),
    webhookMaxAttempts: int(env, "WEBHOOK_MAX_ATTEMPTS", 5, 100),
    webhookTimeoutMs: int(env, "WEBHOOK_TIMEOUT_MS", 5000),
    webhookRetryBaseMs: int(env, "WEBHOOK_RETRY_BASE_MS", 1000),
    webhookDisableAfterMs: int(env, "WEBHOOK_DISABLE_AFTER_MS", 24 * 60 * 60 * 1000),
    webhookPollMs: int(env, "WEBHOOK_POLL_MS", 1000),
    webhooksAllowPrivate: flag(env, "WEBHOOKS_ALLOW_PRIVATE"),
    automationRun: flag(env, "AUTOMATION_RUN", true),
    automationMaxAttempts: int(env, "AUTOMATION_MAX_ATTEMPTS", 5, 100),
    automationRetryBaseMs: int(env, "AUTOMATION_RETRY_BASE_MS", 1000),
    automationPollMs: int(env, "AUTOMATION_POLL_MS", 1000),
    subscriptionsPerKey: int(env, "SUBSCRIPTIONS_PER_KEY", 20),
    smtpUrl: smtpUrl(env.SMTP_URL),
    mailFrom: env.MAIL_FROM || "Muster <no-reply@localhost>",
    captcha: captcha(env),
    captchaTimeoutMs: int(env, "CAPTCHA_TIMEOUT_MS", 5000),
    publicSubmissionsPerAddress: int(env, "PUBLIC_SUBMISSIONS_PER_ADDRESS", 10),
    publicSubmissionsPerForm: int(env, "PUBLIC_SUBMISSIONS_PER_FORM", 100),
    publicSubmissionWindowMinutes: int(env, "PUBLIC_SUBMISSION_WINDOW_MINUTES", 10, 24 * 60),
  };
}
