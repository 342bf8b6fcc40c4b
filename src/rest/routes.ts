import { isOneToOne, operations, type Operation } from "../resources/operations.ts";
import { alsoMethods } from "./kinds.ts";

export interface Route {
  method: string;
  op: Operation;
  segments: string[];
  /** Literal segments first: `/fields/batch` wins over `/fields/{field}`. */
  literals: number;
}

export interface Match {
  route: Route;
  version: string;
  /** Row ids, and the text of a route's text parameters (`Operation.textParams`: a slug). */
  params: Record<string, number | string>;
}

/** A text path parameter: letters, digits, `-` and `_` (a slug, or an id); nothing escaped, no dot segment. */
const TEXT_PARAM = /^[A-Za-z0-9_-]{1,255}$/;

export const versions = ["v1", "v2"];

function routesOf(op: Operation): Route[] {
  const make = (method: string, path: string): Route => {
    const segments = path.split("/").filter(Boolean);
    return { method, op, segments, literals: segments.filter((s) => !s.startsWith("{")).length };
  };
  const methods = [op.method, ...(alsoMethods[op.kind] ?? [])];
  const paths = [op.path];
  if (isOneToOne(op) && op.path.endsWith(`/{${op.parent!.route.param}}`))
    paths.push(op.path.slice(0, op.path.lastIndexOf("/")));
  return methods.flatMap((m) => paths.map((p) => make(m, p)));
}

/** The route table, generated from the operation catalogue. */
export const routes: Route[] = operations.flatMap(routesOf).sort((a, b) => b.literals - a.literals);

const bySize = new Map<number, Route[]>();
for (const route of routes) bySize.set(route.segments.length, [...(bySize.get(route.segments.length) ?? []), route]);

/**
 * Finds the route of a path below the version segment, the path as sent: segments are compared undecoded, so a
 * percent-encoded literal (`%72anks`), an encoded slash or a dot segment (`..`, `%2e%2e`) matches nothing. Ids must
 * be positive integers written in digits; anything else cannot name a record and so matches no route.
 * `methodMismatch` tells 405 from 404.
 */
export function matchRoute(method: string, pathname: string): Match | { methodMismatch: boolean } {
  const [version, ...segments] = pathname.split("/").filter(Boolean);
  let methodMismatch = false;
  // Any other first segment is a version PERSCOM does not offer (400); one that is escaped or a dot segment names nothing.
  if (!version || version.includes("%") || version === "." || version === "..") return { methodMismatch };
  for (const route of bySize.get(segments.length) ?? []) {
    const params: Record<string, number | string> = {};
    let ok = true;
    for (let i = 0; i < segments.length && ok; i++) {
      const pattern = route.segments[i];
      if (pattern.startsWith("{")) {
        const value = segments[i];
        const name = pattern.slice(1, -1);
        if (route.op.textParams?.includes(name)) {
          if (TEXT_PARAM.test(value)) params[name] = value;
          else ok = false;
        } else if (/^[1-9]\d{0,15}$/.test(value) && Number(value) <= 2147483647) params[name] = Number(value);
        else ok = false;
      } else ok = pattern === segments[i];
    }
    if (!ok) continue;
    if (route.method !== method) {
      methodMismatch = true;
      continue;
    }
    return { route, version, params };
  }
  return { methodMismatch };
}
