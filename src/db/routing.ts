import type { PrismaClient } from "../generated/prisma/client.ts";
import { SqlReader } from "./reader.ts";
import { FAILED, type SqlWriter } from "./writer.ts";

/** Where a Prisma call can go instead of Prisma: the SQL reader and writer, when they translate it. */
export interface Routes {
  reader: SqlReader;
  writer?: SqlWriter;
  /** Routes for an interactive transaction, asked for as its callback starts (null: all of it stays Prisma's). */
  transaction?: () => Routes | null;
}

const READS = new Set(["findMany", "findFirst", "findUnique", "count", "groupBy"]);
/** Found nothing: Prisma answers again, with its own not-found error. */
const OR_THROW = new Set(["findFirstOrThrow", "findUniqueOrThrow"]);
const WRITES = new Set(["create", "update"]);

type Call = (args?: Record<string, unknown>) => Promise<unknown>;

function routedCall(routes: Routes, model: string, method: string, prisma: Call): Call | null {
  if (READS.has(method)) return (args) => routes.reader.plan(model, method, args)?.() ?? prisma(args);
  if (OR_THROW.has(method)) {
    return (args) => {
      const planned = routes.reader.plan(model, method, args);
      return planned ? planned().then((row) => row ?? prisma(args)) : prisma(args);
    };
  }
  if (WRITES.has(method) && routes.writer) {
    const writer = routes.writer;
    return (args) => {
      const planned = writer.plan(model, method, args);
      return planned ? planned().then((row) => (row === FAILED ? prisma(args) : row)) : prisma(args);
    };
  }
  return null;
}

/**
 * `client` with its model delegates' calls routed per `routes`. Everything else (raw SQL, `$on`, batch operations)
 * is the client's own. Outside a transaction only reads are routed, to a connection that sees committed data.
 */
export function routed<T extends PrismaClient>(client: T, routes: Routes): T {
  const delegates = new Map<string, unknown>();
  const delegateOf = (delegate: Record<string, any>, model: string) => {
    const calls = new Map<string, Call | null>();
    return new Proxy(delegate, {
      get(target, method) {
        const value = target[method as string];
        if (typeof method !== "string" || typeof value !== "function") return value;
        if (!calls.has(method)) calls.set(method, routedCall(routes, model, method, (args) => value.call(target, args)));
        return calls.get(method) ?? value.bind(target);
      },
    });
  };
  return new Proxy(client, {
    get(target, property) {
      const cached = typeof property === "string" ? delegates.get(property) : undefined;
      if (cached) return cached;
      const value = Reflect.get(target, property, target) as any;
      if (property === "$transaction" && routes.transaction) {
        const inner = routes.transaction;
        return (work: unknown, options?: unknown) =>
          typeof work !== "function"
            ? value.call(target, work, options)
            : value.call(target, (tx: PrismaClient) => {
                const forTx = inner();
                return work(forTx ? routed(tx, forTx) : tx);
              }, options);
      }
      if (typeof property !== "string" || property.startsWith("$") || typeof value !== "object" || value === null) {
        return typeof value === "function" ? value.bind(target) : value;
      }
      const model = SqlReader.modelOf(property);
      if (!model) return value;
      const delegate = delegateOf(value, model);
      delegates.set(property, delegate);
      return delegate;
    },
  });
}
