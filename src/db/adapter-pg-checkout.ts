import pg from "pg";
import { WriteQueue } from "./locks.ts";

/*
 * Library: @prisma/adapter-pg, with the pg pool it is given.
 * Checked against: @prisma/adapter-pg 6.19.3, pg 8.23.1, pg-pool 3.14.0
 *
 * The one module that assumes how Prisma's PostgreSQL adapter checks connections out of the pool it is handed
 * (`new PrismaPg(pool)`); test/library-contracts.test.ts checks each point:
 * - the adapter uses the pool it is given, not one of its own;
 * - it starts each interactive transaction with `pool.connect()` (the promise form, no callback), sends BEGIN and
 *   every statement of the transaction on that client, and releases it at the end; Prisma's `$transaction(fn)` does
 *   so before `fn` runs;
 * - its statements outside a transaction go through `pool.query`, which (pg-pool) checks a client out with
 *   `connect(callback)`, the callback form, and so never look like a transaction's checkout.
 *
 * Why no public API did: Prisma names no connection of an interactive transaction, and the store's direct SQL of a
 * transaction (src/db/reader.ts, writer.ts) must run on the transaction's connection. Through Prisma instead
 * (`tx.$queryRawUnsafe`), every statement pays Prisma's query engine: when concurrent transactions fell back to
 * Prisma for every statement, W4 cost 17 CPU ms per request instead of 4 (bench/FINDINGS.md, "W4 on PostgreSQL";
 * direct SQL inside transactions took W4 from 11.4 to 4.2 ms: "What changed").
 */

const listening = new WeakSet<pg.PoolClient>();

/**
 * `client`, with a listener for its `error` event. The pool listens to its clients only while they are idle: a
 * connection lost while one is checked out (PostgreSQL restarted, a backend terminated) emits an event nobody hears,
 * which ends the process. Its statements fail with the error all the same, and the client, released with it, is dropped.
 */
function heard(client: pg.PoolClient): pg.PoolClient {
  if (!listening.has(client)) {
    listening.add(client);
    client.on("error", () => {});
  }
  return client;
}

/** pg's callback form of `Pool.connect`: `done(release)` gives the client back (an error or true destroys it). */
type ConnectCallback = (
  err: Error | undefined,
  client: pg.PoolClient | undefined,
  done: (release?: unknown) => void,
) => void;

/**
 * The pool handed to Prisma's adapter, which checks a client out with `connect()` to start each transaction (its plain
 * queries go through `query`, whose own checkout passes a callback). Transactions start one at a time here
 * (`startTransaction`), so the client checked out while one starts is that transaction's; their bodies run side by side.
 */
export class TransactionTrackingPool extends pg.Pool {
  #starts = new WriteQueue();
  #connected: pg.PoolClient | null = null;

  connect(): Promise<pg.PoolClient>;
  connect(callback: ConnectCallback): void;
  connect(callback?: ConnectCallback): Promise<pg.PoolClient> | void {
    if (callback) return super.connect(callback);
    return super.connect().then((client) => (this.#connected = client));
  }

  /**
   * A client for a transaction of our own. Checked out with a callback, as the pool's own queries are, so that it is never
   * taken for the client of a Prisma transaction starting meanwhile.
   */
  checkout(): Promise<pg.PoolClient> {
    return new Promise((resolve, reject) =>
      super.connect((error, client) => (error ? reject(error) : resolve(heard(client!)))),
    );
  }

  /** Waits until no other transaction is starting; `client()` is then the client the starting one checked out. */
  async startTransaction(): Promise<{ client(): pg.PoolClient | null; started(): void }> {
    const started = await this.#starts.acquire();
    this.#connected = null;
    return { client: () => this.#connected, started };
  }
}
