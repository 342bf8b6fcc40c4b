import { pino } from "pino";
import { logLevels, type LogLevel } from "../../core/config.ts";
import { flushNow, standardOutput } from "./logger.ts";

/**
 * The lines the process itself writes (migrations applied, listening, shutting down, start-up failures), as opposed
 * to the request log. With `NODE_ENV=production` they are JSON lines like the request log's, so standard output is
 * JSON only; otherwise plain text for a person at a terminal. They are written at any `LOG_LEVEL` but `silent`: a
 * level that hides request lines should not hide that the process started or stopped.
 */
export interface ProcessLog {
  info(message: string): void;
  warn(message: string): void;
  /** `error`'s stack is written only with `LOG_LEVEL=debug` (or `trace`). */
  error(message: string, error?: unknown): void;
}

export function processLog(env: NodeJS.ProcessEnv = process.env): ProcessLog {
  const requested = (env.LOG_LEVEL ?? "").toLowerCase() as LogLevel;
  const level: LogLevel = logLevels.includes(requested) ? requested : "info";
  const stacks = level === "debug" || level === "trace";
  const detail = (error: unknown) => (stacks && error instanceof Error ? error : undefined);
  if (level === "silent") return { info() {}, warn() {}, error() {} };
  if (env.NODE_ENV === "production") {
    const logger = pino(
      {
        level: "info",
        base: { service: "muster", pid: process.pid },
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label: string) => ({ level: label }) },
      },
      standardOutput(),
    );
    // The process's own lines (started, listening, stopping) do not wait for more lines: they go with any request
    // lines before them, at once or, while a write is in flight, with the next periodic flush.
    return {
      info: (message) => (logger.info(message), flushNow()),
      warn: (message) => (logger.warn(message), flushNow()),
      error: (message, error) => {
        const err = detail(error);
        if (err) logger.error({ err }, message);
        else logger.error(message);
        flushNow();
      },
    };
  }
  return {
    info: (message) => console.log(message),
    warn: (message) => console.warn(message),
    error: (message, error) => {
      console.error(message);
      const err = detail(error);
      if (err?.stack) console.error(err.stack);
    },
  };
}
