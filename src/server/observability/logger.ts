import { pino, type DestinationStream, type Logger } from "pino";
import type { Config } from "../../config.ts";

export type { Logger };

/** Paths pino censors wherever they appear in a log object: keys never reach the log. */
const redacted = [
  "authorization", "headers.authorization", "req.headers.authorization", "request.headers.authorization",
  "apikey", "key", "*.authorization", "*.apikey",
];

/** The service's JSON logger: one object per line on `destination` (stdout by default), at `config.logLevel`. */
export function createLogger(config: Pick<Config, "logLevel">, destination?: DestinationStream): Logger {
  const options = {
    level: config.logLevel,
    // The pid tells the workers of one instance apart (WORKERS>1).
    base: { service: "muster", pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
    redact: { paths: redacted, censor: "[Redacted]" },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** A URL as it may be logged: the `apikey` query parameter (PERSCOM's key in the URL) censored. */
export function safeUrl(url: URL | string): string {
  const copy = new URL(url);
  if (copy.searchParams.has("apikey")) copy.searchParams.set("apikey", "[Redacted]");
  return `${copy.pathname}${copy.search}`;
}
