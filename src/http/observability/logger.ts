import { pino, type DestinationStream, type Logger } from "pino";
import type { Config } from "../../core/config.ts";

export type { Logger };

/** Paths pino censors wherever they appear in a log object: keys never reach the log. */
const redacted = [
  "authorization",
  "headers.authorization",
  "req.headers.authorization",
  "request.headers.authorization",
  "apikey",
  "key",
  "*.authorization",
  "*.apikey",
];

let stdout: DestinationStream | undefined;

/**
 * Standard output, one stream for every logger of the process (the request log, the process log), written in batches:
 * lines wait until 3 KB of them have gathered or a quarter of a second has passed (the process log asks for its lines
 * to go at once: `flushNow`), so a busy instance makes one write for about ten requests instead of one each. A write holds
 * whole lines, no more than PIPE_BUF (4,096) bytes of them unless one line is longer, and a pipe takes such a write
 * whole: the lines of the workers of one instance, which share its standard output, do not cut into each other. pino
 * writes what is left synchronously as the process exits; a process killed outright (SIGKILL) loses the lines of its
 * last quarter of a second.
 */
export const standardOutput = (): DestinationStream =>
  (stdout ??= pino.destination({ dest: 1, sync: false, minLength: 3072, maxWrite: 4096, periodicFlush: 250 }));

/** Writes what `standardOutput` holds now, without waiting for more lines (while a write is in flight, with the next periodic flush). */
export const flushNow = (): void => (stdout as { flush?: () => void } | undefined)?.flush?.();

/** The service's JSON logger: one object per line on `destination` (`standardOutput` by default), at `config.logLevel`. */
export function createLogger(config: Pick<Config, "logLevel">, destination?: DestinationStream): Logger {
  const options = {
    level: config.logLevel,
    // The pid tells the workers of one instance apart (WORKERS>1).
    base: { service: "muster", pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
    redact: { paths: redacted, censor: "[Redacted]" },
  };
  return pino(options, destination ?? standardOutput());
}

/** Query parameters that carry a secret: `apikey` (PERSCOM's key in the URL), `token` (a one-time sign-in link's). */
const secretParameters = ["apikey", "token"];

/** A URL as it may be logged: the query parameters that carry a secret censored. */
export function safeUrl(url: URL | string): string {
  const copy = new URL(url);
  for (const name of secretParameters) if (copy.searchParams.has(name)) copy.searchParams.set(name, "[Redacted]");
  return `${copy.pathname}${copy.search}`;
}
