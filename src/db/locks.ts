/**
 * Write transactions one at a time, as SQLite runs them, on a database that would run them side by
 * side (PostgreSQL). Link tables have no unique constraints (`duplicates: true` must be able to link
 * a row twice) and `order` is computed from the rows already there, so the check-then-insert of an
 * attach, a sync or a computed order is only correct when no other write runs between the check and
 * the insert. Inside a process the writes queue here, so a waiting write holds no pooled connection;
 * across processes the first statement of each write transaction takes a transaction-scoped advisory
 * lock (`advisoryWriteLock`), released by the database at commit or rollback. Writes that check nothing another
 * write could change skip both (src/data/independent-writes.ts).
 */
export class WriteQueue {
  #tail: Promise<unknown> = Promise.resolve();
  /** Holders that have asked and not yet released, the one holding included. */
  #pending = 0;

  /** How many wait behind the holder (asked and not yet let in). */
  get waiting(): number {
    return Math.max(0, this.#pending - 1);
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await work();
    } finally {
      release();
    }
  }

  /** Resolves once every earlier holder has released; call the function it gives to let the next one in. */
  async acquire(): Promise<() => void> {
    const previous = this.#tail;
    let resolve!: () => void;
    this.#tail = new Promise<void>((r) => (resolve = r));
    this.#pending++;
    let released = false;
    await previous;
    return () => {
      if (released) return;
      released = true;
      this.#pending--;
      resolve();
    };
  }
}

/** PostgreSQL: the statement that makes a transaction wait for every other write transaction ("muster" in hex). */
export const advisoryWriteLock = "SELECT pg_advisory_xact_lock(120109953295730)";
