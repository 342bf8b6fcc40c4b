import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { ErrorObject } from "ajv";
import type { Reply } from "./organisation.ts";

/** What happened to one reference operation. */
export interface Outcome {
  key: string;
  method: string;
  path: string;
  url?: string;
  status?: number;
  served: boolean;
  /** Grouping key of the failure. */
  cause?: string;
  /** The error body, the Ajv errors, or the setup failure. */
  detail?: unknown;
  /** Where the request body this suite sent does not match the reference request schema (a fault of this suite). */
  requestProblems?: string[];
  /** The request body and the answer (verbose reports only). */
  exchange?: { request: unknown; response: unknown };
}

/** Numbers and quoted values vary between operations that fail for the same reason. */
export const normalise = (text: string) =>
  text
    .replace(/\d+/g, "N")
    .replace(/"[^"]{0,80}"/g, '"…"')
    .slice(0, 300);

export function ajvErrors(errors: ErrorObject[] | null | undefined, limit = 12): string[] {
  return (errors ?? []).slice(0, limit).map((e) => {
    const params =
      e.keyword === "required" || e.keyword === "additionalProperties" || e.keyword === "enum" || e.keyword === "type"
        ? ` ${JSON.stringify(e.params)}`
        : "";
    return `${e.instancePath || "/"} ${e.message ?? e.keyword}${params}`;
  });
}

/** Cause of a reply that is not the expected success: status, error type and message. */
export function replyCause(r: Reply, expected: number, routeKnown?: boolean): string {
  if (r.status >= 200 && r.status < 300) return `status ${r.status} instead of ${expected}`;
  const error = r.body?.error;
  if (!error) return `${r.status} body without an error object`;
  const keys =
    error.errors && typeof error.errors === "object" ? ` [${Object.keys(error.errors).map(normalise).join(", ")}]` : "";
  const route = r.status === 404 && routeKnown === false ? " (no such route)" : "";
  return `${r.status} ${error.type ?? "?"}${route}: ${normalise(String(error.message ?? ""))}${keys}`;
}

/** The first Ajv error, with array indexes folded, as a grouping key. */
export function schemaCause(errors: ErrorObject[] | null | undefined): string {
  const first = errors?.[0];
  if (!first) return "schema: invalid";
  const params = first.keyword === "required" ? ` ${JSON.stringify(first.params)}` : "";
  return `schema: ${first.instancePath.replace(/\/\d+(?=\/|$)/g, "/*") || "/"} ${first.message ?? first.keyword}${params}`;
}

export interface CauseGroup {
  cause: string;
  count: number;
  operations: Array<Pick<Outcome, "method" | "path" | "url" | "status" | "detail">>;
}

export function groupByCause(outcomes: Outcome[]): CauseGroup[] {
  const groups = new Map<string, CauseGroup>();
  for (const o of outcomes) {
    if (o.served) continue;
    const cause = o.cause ?? "unknown";
    const group = groups.get(cause) ?? { cause, count: 0, operations: [] };
    group.count++;
    group.operations.push({ method: o.method, path: o.path, url: o.url, status: o.status, detail: o.detail });
    groups.set(cause, group);
  }
  return [...groups.values()].sort((a, b) => b.count - a.count || a.cause.localeCompare(b.cause));
}

export function writeReport(file: string, report: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
}
