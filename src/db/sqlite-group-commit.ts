import type { Client, InArgs } from "@libsql/client";
import { LibsqlError } from "@libsql/client";
import type { ReadDriver } from "./driver.ts";
import type { WriteQueue } from "./locks.ts";
import { isBusyError } from "./sqlite-rows.mjs";

/** What group commit needs of the client whose connection it commits on (`SqliteClient`, src/db/sqlite.ts). */
export interface GroupCommitConnection {
  /** The connection's transactions, Prisma's and direct ones, one at a time. */
  readonly transactions: WriteQueue;
  /** BEGIN IMMEDIATE on the connection, pragmas applied, waiting while another process writes; the connection. */
  beginImmediate(): Promise<Client>;
  /** Lets the event loop run when statements have kept it busy. */
  breathe(): Promise<void>;
  /** Closes `connection` and opens a new one (after a busy failure or a failed COMMIT). */
  replace(connection: Client): void;
}

/**
 * The app's own write transactions on SQLite's one write connection, committed in groups (see `directTransaction`).
 * The client (src/db/sqlite.ts, `SqliteClient`) holds every statement Prisma sends while a group is open
 * (`holding`), and ends an open group before a Prisma transaction begins (`end`).
 */
export class GroupCommit {
  /** The group of direct transactions in progress (see `directTransaction`); null when none is. */
  #group: CommitGroup | null = null;
  /** Settles when the group holding the connection has ended; null when none does. */
  holding: Promise<void> | null = null;
  readonly commits: CommitCounts = { transactions: 0, commits: 0 };

  constructor(private readonly connection: GroupCommitConnection) {}

  /**
   * A write transaction of the app's own on the connection, without Prisma's interactive transaction (whose machinery
   * costs more than a small write's statements): it waits for the connection's other transactions, and every statement
   * Prisma sends meanwhile waits for it. BEGIN IMMEDIATE waits while another process writes; after a busy failure the
   * connection is replaced, as in `transaction`.
   *
   * Group commit: direct transactions that queue behind one another share one BEGIN … COMMIT, each but the first in
   * a savepoint of its own (rolled back alone when it fails; the first rolls back the group, which holds only it), and each one's `end("COMMIT")` resolves once that COMMIT has. The
   * driver is synchronous, so each COMMIT stops the event loop for the WAL's write and fsync (0.4–0.5 ms here): under
   * concurrent writes one COMMIT now covers up to `GROUP_COMMIT_MAX` of them. A transaction's statements run within
   * one turn of the event loop, so another rarely waits when it ends: with `awaitCompany` (requests' writes) the first
   * of a group, finding none waiting, lets the loop turn once, and the writes of requests read meanwhile join it.
   * The group commits when no other direct transaction waits, when it is full, or when a Prisma transaction waits;
   * it is rolled back instead, its transactions failing busy (so `inTransaction` runs them again), when one of them
   * would commit after its `timeoutMs`, as a transaction never commits once its request has been answered 503.
   */
  async directTransaction(timeoutMs?: number, awaitCompany = false): Promise<DirectSqliteTransaction> {
    const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
    const release = await this.connection.transactions.acquire();
    let group: CommitGroup;
    // The first transaction of a group runs alone in it until it ends (the others join after it), so undoing it is
    // undoing the group: it needs no savepoint.
    const first = this.#group === null;
    try {
      group = this.#group ?? (await this.#beginGroup());
    } catch (error) {
      release();
      throw error;
    }
    const { connection } = group;
    if (!first) {
      try {
        await connection.execute("SAVEPOINT direct");
      } catch (error) {
        await this.end(error);
        release();
        throw error;
      }
    }
    let open = true;
    let left = false;
    let busy = false;
    const run = async (sql: string, params: unknown[]) => {
      if (!open) throw new LibsqlError("The transaction is closed", "TRANSACTION_CLOSED");
      await this.connection.breathe();
      try {
        return await connection.execute({ sql, args: params as InArgs });
      } catch (error) {
        busy ||= isBusyError(error);
        throw error;
      }
    };
    /** Ends this transaction's savepoint, commits the group when it is this one's turn to, and lets the next one in. */
    const leave = async (outcome: "COMMIT" | "ROLLBACK") => {
      open = false;
      left = true;
      let failure: unknown;
      if (!first) {
        try {
          if (outcome === "ROLLBACK") await connection.execute("ROLLBACK TO direct");
          await connection.execute("RELEASE direct");
        } catch (error) {
          // The savepoint is gone only when SQLite has rolled back the whole transaction: the group with it.
          failure = error;
        }
      }
      if (outcome === "COMMIT" && failure === undefined) {
        group.members++;
        group.commitBy = Math.min(group.commitBy, deadline);
      }
      group.replace ||= busy;
      // Once per group: the transactions that join it run within the turn it ends, one after another.
      if (first && awaitCompany && outcome === "COMMIT" && !busy && this.connection.transactions.waiting === 0) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      if (first && outcome === "ROLLBACK") {
        await this.end(undefined, "ROLLBACK");
      } else if (
        failure !== undefined ||
        busy ||
        group.members >= GROUP_COMMIT_MAX ||
        this.connection.transactions.waiting === 0
      ) {
        await this.end(failure);
      }
      release();
      if (outcome === "COMMIT") await group.committed;
    };
    return {
      driver: {
        dialect: "sqlite",
        all: async (sql, params) => (await run(sql, params)).rows.map((row) => Array.from(row as ArrayLike<unknown>)),
        close: async () => {},
      },
      end: async (sql) => {
        if (left) throw new LibsqlError("The transaction is closed", "TRANSACTION_CLOSED");
        await leave(sql);
      },
      release: () => {
        // Never left open: a transaction released without COMMIT or ROLLBACK (its work threw before either) rolls back.
        if (!left) void leave("ROLLBACK").catch(() => undefined);
      },
    };
  }

  /** BEGIN IMMEDIATE of a new group; every statement Prisma sends waits until the group ends. */
  async #beginGroup(): Promise<CommitGroup> {
    let done!: () => void;
    this.holding = new Promise<void>((resolve) => (done = resolve));
    try {
      const connection = await this.connection.beginImmediate();
      let settle!: (error?: unknown) => void;
      const committed = new Promise<void>(
        (resolve, reject) => (settle = (error) => (error === undefined ? resolve() : reject(error as Error))),
      );
      // Awaited by the transactions that committed into it only.
      committed.catch(() => undefined);
      return (this.#group = { connection, members: 0, commitBy: Infinity, committed, settle, replace: false, done });
    } catch (error) {
      this.holding = null;
      done();
      throw error;
    }
  }

  /**
   * COMMIT of the open group, or ROLLBACK after `failure` or past a transaction's deadline; then Prisma's turn.
   * `"ROLLBACK"`: the group's only transaction (the first, without a savepoint) rolled back; nothing failed, so the
   * connection is kept unless a statement of it failed busy.
   */
  async end(failure?: unknown, end: "COMMIT" | "ROLLBACK" = "COMMIT"): Promise<void> {
    const group = this.#group;
    if (!group) return;
    this.#group = null;
    let error = failure;
    if (end === "COMMIT" && error === undefined && Date.now() > group.commitBy) {
      error = new LibsqlError(
        "A transaction committing with this one ran past its time, and the group was rolled back",
        "SQLITE_BUSY",
        5,
      );
    }
    if (end === "COMMIT" && error === undefined) {
      try {
        await group.connection.execute("COMMIT");
        this.commits.commits++;
        this.commits.transactions += group.members;
      } catch (commitError) {
        error = commitError;
      }
    }
    let rolledBack = true;
    if (end === "ROLLBACK" || error !== undefined)
      rolledBack = await group.connection.execute("ROLLBACK").then(
        () => true,
        () => false,
      );
    if (error !== undefined || !rolledBack || group.replace) this.connection.replace(group.connection);
    this.holding = null;
    group.done();
    group.settle(error);
  }
}

/** Direct transactions committed, and the COMMITs they took (fewer under concurrent writes: group commit). */
export interface CommitCounts {
  transactions: number;
  commits: number;
}

/** Direct transactions that commit together: each `end("COMMIT")` resolves when their one COMMIT has. */
const GROUP_COMMIT_MAX = 16;

/** Direct transactions sharing one BEGIN IMMEDIATE … COMMIT, each in a savepoint of its own. */
interface CommitGroup {
  connection: Client;
  /** Transactions released into it (committed when it commits). */
  members: number;
  /** The earliest deadline of its members: past it, the group is rolled back rather than committed. */
  commitBy: number;
  /** Settles with the group's COMMIT, or rejects with what ended it otherwise. */
  committed: Promise<void>;
  settle(error?: unknown): void;
  /** A statement failed busy in it: the connection is replaced once it ends. */
  replace: boolean;
  /** Lets Prisma's statements have the connection again. */
  done(): void;
}

/** A direct transaction on `SqliteClient`'s connection: statements, then `end`, then `release` (always). */
export interface DirectSqliteTransaction {
  driver: ReadDriver;
  /** COMMIT or ROLLBACK; a failed COMMIT is rolled back. */
  end(sql: "COMMIT" | "ROLLBACK"): Promise<void>;
  /** Gives the connection back to Prisma and the next transaction. */
  release(): void;
}
