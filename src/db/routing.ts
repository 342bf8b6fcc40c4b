import type { PrismaClient } from "../generated/prisma/client.ts";
import { models, SqlReader } from "./reader.ts";
import { FAILED, type SqlWriter } from "./writer.ts";
import { hasRowBudget, takeRows } from "./row-budget.ts";

/** Where a Prisma call can go instead of Prisma: the SQL reader and writer, when they translate it. */
export interface Routes {
  reader: SqlReader;
  writer?: SqlWriter;
  /** Awaited before each interactive transaction starts: how to route it. */
  transaction?: () => Promise<TransactionStart>;
  /** A connection of our own for a transaction Prisma is kept out of (`$transaction(work, { direct: true })`). */
  direct?: () => Promise<DirectConnection>;
}

export interface DirectConnection {
  /** The reader and writer on the connection. */
  routes: Routes;
  /** Starts the transaction (BEGIN may go out with its first statement). */
  begin(): void;
  /** Ends it: COMMIT or ROLLBACK. */
  end(sql: "COMMIT" | "ROLLBACK"): Promise<void>;
  /** Gives the connection back; `broken`: it failed, and must be closed rather than reused. */
  release(broken?: Error): void;
}

/** A call in a direct transaction that only Prisma can answer: the transaction is rolled back and run under Prisma. */
class NeedsPrisma extends Error {}

/** The client behind a direct transaction: whatever the reader and writer do not translate needs Prisma. */
const prismaKeptOut = new Proxy({}, {
  get(_target, property) {
    if (typeof property === "symbol" || property === "then") return undefined;
    throw new NeedsPrisma(`${String(property)} needs Prisma`);
  },
}) as PrismaClient;

const NEEDS_PRISMA = Symbol("needs Prisma");

/**
 * `work` in a transaction on a connection of our own, with BEGIN and COMMIT sent directly: Prisma's interactive
 * transaction costs more than the statements of a small write. Anything the reader and writer do not translate rolls
 * it back, and NEEDS_PRISMA tells the caller to run `work` again under Prisma.
 */
async function directTransaction<T>(open: () => Promise<DirectConnection>, work: (tx: PrismaClient) => Promise<T>): Promise<T | typeof NEEDS_PRISMA> {
  const connection = await open();
  let broken: Error | undefined;
  const end = (sql: "COMMIT" | "ROLLBACK") => connection.end(sql).catch((error: Error) => {
    broken = error;
    throw error;
  });
  try {
    connection.begin();
    let value: T;
    try {
      value = await work(routed(prismaKeptOut, connection.routes));
    } catch (error) {
      await end("ROLLBACK").catch(() => undefined);
      if (error instanceof NeedsPrisma) return NEEDS_PRISMA;
      throw error;
    }
    await end("COMMIT");
    return value;
  } finally {
    connection.release(broken);
  }
}

export interface TransactionStart {
  /** The transaction's routes, asked for as its callback starts (null: all of it stays Prisma's). */
  routes(): Routes | null;
  /** Called once the callback has its routes, or the transaction failed to start. */
  started(): void;
}

/**
 * Counts the rows of a Prisma result (`model`'s rows and the related rows nested in them) against the budget, and
 * returns it. Only relation fields are walked: a JSON column's objects are values, not rows.
 */
function countRows<T>(model: string, result: T): T {
  if (!hasRowBudget()) return result;
  const pending: Array<[string, unknown]> = [[model, result]];
  let rows = 0;
  while (pending.length) {
    const [name, value] = pending.pop()!;
    const list = Array.isArray(value) ? value : value && typeof value === "object" ? [value] : [];
    const relations = models.get(name)?.relations;
    for (const row of list) {
      rows++;
      for (const rel of relations?.values() ?? []) if ((row as Record<string, unknown>)[rel.name] != null) pending.push([rel.target, (row as Record<string, unknown>)[rel.name]]);
    }
  }
  takeRows(rows);
  return result;
}

const READS = new Set(["findMany", "findFirst", "findUnique", "count", "groupBy"]);
/** Found nothing: Prisma answers again, with its own not-found error. */
const OR_THROW = new Set(["findFirstOrThrow", "findUniqueOrThrow"]);
const WRITES = new Set(["create", "update"]);

type Call = (args?: Record<string, unknown>) => Promise<unknown>;

function routedCall(routes: Routes, model: string, method: string, prisma: Call): Call | null {
  // What Prisma reads instead of the reader counts against the request's rows once it has arrived (the reader counts its own).
  const counted = (args?: Record<string, unknown>) => prisma(args).then((rows) => countRows(model, rows));
  if (READS.has(method)) return (args) => routes.reader.plan(model, method, args)?.() ?? (method === "count" ? prisma(args) : counted(args));
  if (OR_THROW.has(method)) {
    return (args) => {
      const planned = routes.reader.plan(model, method, args);
      return planned ? planned().then((row) => row ?? counted(args)) : counted(args);
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

/** The routes of each client `routed` made: what `routesOf` answers for a transaction's client. */
const routesByClient = new WeakMap<object, Routes>();

/** The reader and writer a client (a transaction's `tx`) runs its translated statements on; undefined when it has none. */
export const routesOf = (client: object): Routes | undefined => routesByClient.get(client);

/**
 * `client` with its model delegates' calls routed per `routes`. Everything else (raw SQL, `$on`, batch operations)
 * is the client's own. Outside a transaction only reads are routed, to a connection that sees committed data.
 */
export function routed<T extends PrismaClient>(client: T, routes: Routes): T {
  const delegates = new Map<string, unknown>();
  // Prisma's own delegate is fetched only when a call needs it: its client is a stack of proxies, costly to walk.
  const delegateOf = (property: string, model: string) => {
    let prisma: Record<string, any> | undefined;
    const own = () => (prisma ??= Reflect.get(client, property, client) as Record<string, any>);
    const calls = new Map<string, Call | null>();
    return new Proxy({}, {
      get(_target, method) {
        if (typeof method !== "string") return own()[method as any];
        if (!calls.has(method)) calls.set(method, routedCall(routes, model, method, (args) => own()[method](args)));
        const call = calls.get(method);
        if (call) return call;
        const value = own()[method];
        return typeof value === "function" ? value.bind(own()) : value;
      },
    });
  };
  const proxy = new Proxy(client, {
    get(target, property) {
      if (typeof property === "string" && !property.startsWith("$")) {
        let delegate = delegates.get(property);
        if (delegate) return delegate;
        const model = SqlReader.modelOf(property);
        if (model) {
          delegates.set(property, (delegate = delegateOf(property, model)));
          return delegate;
        }
      }
      const value = Reflect.get(target, property, target) as any;
      if (property === "$transaction" && routes.transaction) {
        const begin = routes.transaction;
        return async (work: unknown, { direct, ...options }: { direct?: boolean } & Record<string, unknown> = {}) => {
          if (direct && routes.direct && typeof work === "function") {
            const result = await directTransaction(routes.direct, work as (tx: PrismaClient) => Promise<unknown>);
            if (result !== NEEDS_PRISMA) return result;
          }
          const start = await begin();
          // A batch transaction's connection is never routed; it holds the start until it ends, so it pairs with no other.
          if (typeof work !== "function") {
            try {
              return await value.call(target, work, options);
            } finally {
              start.started();
            }
          }
          let started = false;
          const done = () => (started ? undefined : ((started = true), start.started()));
          try {
            return await value.call(target, (tx: PrismaClient) => {
              const forTx = start.routes();
              done();
              return work(forTx ? routed(tx, forTx) : tx);
            }, options);
          } finally {
            done();
          }
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  routesByClient.set(proxy, routes);
  return proxy;
}
