import { Worker } from "node:worker_threads";
import { LibsqlError } from "@libsql/client";

interface Waiting {
  resolve(rows: unknown[][]): void;
  reject(error: unknown): void;
}

type Answer =
  | { id: number; json: string }
  | { id: number; rows: unknown[][] }
  | { id: number; error: { name?: string; message: string; code?: unknown; rawCode?: unknown } };

/** SQL texts the thread is told the number of, at most; past it, numbers are given from 0 again. */
const TEXTS_KEPT = 2000;

/** One started thread and the statements waiting on it. */
interface Thread {
  worker: Worker;
  waiting: Map<number, Waiting>;
  /** The number the thread knows each SQL text by: a text is sent once, then its number (cloning it cost more). */
  texts: Map<string, number>;
  /** Numbers given so far. */
  numbered: number;
  /** Statements not sent yet: `[id, number, args, sql?]`, the SQL text with the first statement that uses it. */
  outbox: Statement[];
}

type Statement = [id: number, number: number, args: unknown[], sql?: string];

/**
 * SQLite reads on a thread of their own (sqlite-read-worker.mjs): one connection that only reads, beside the main
 * thread's connection that writes. The driver is synchronous, so on the main thread every read held the event loop
 * for as long as SQLite and the driver took to make its rows (a REST page and its includes: 0.3–0.6 ms, a deep
 * `OFFSET` 2 ms); here the main thread only parses the rows' JSON, and the reads of one request run while it serves
 * others (bench/FINDINGS.md, "Reads on a thread"). Statements are answered in the order they are sent.
 *
 * The thread starts with the first statement and again after it has stopped; it keeps the process alive only while
 * a statement is waiting on it.
 */
export class SqliteReadThread {
  #thread: Thread | null = null;
  #next = 0;

  constructor(private readonly file: string) {}

  all(sql: string, args: unknown[]): Promise<unknown[][]> {
    const thread = (this.#thread ??= this.#start());
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      if (thread.waiting.size === 0) thread.worker.ref();
      thread.waiting.set(id, { resolve, reject });
      let number = thread.texts.get(sql);
      let text: string | undefined;
      if (number === undefined) {
        if (thread.texts.size >= TEXTS_KEPT) thread.texts.clear();
        number = thread.numbered++;
        thread.texts.set(sql, number);
        text = sql;
      }
      // Statements asked for in the same tick (a request's loaders dispatch together) go in one message.
      if (thread.outbox.push(text === undefined ? [id, number, args] : [id, number, args, text]) === 1)
        process.nextTick(flush, thread);
    });
  }

  async close(): Promise<void> {
    const thread = this.#thread;
    this.#thread = null;
    if (!thread) return;
    failAll(thread, new LibsqlError("The database connection is closed", "SQLITE_MISUSE", 21));
    await thread.worker.terminate();
  }

  #start(): Thread {
    const worker = new Worker(new URL("./sqlite-read-worker.mjs", import.meta.url), {
      workerData: { file: this.file },
    });
    const thread: Thread = { worker, waiting: new Map(), texts: new Map(), numbered: 0, outbox: [] };
    worker.unref();
    worker.on("message", (answers: Answer[]) => {
      for (const answer of answers) {
        const waiting = settled(thread, answer.id);
        if (!waiting) continue;
        if ("json" in answer) waiting.resolve(JSON.parse(answer.json) as unknown[][]);
        else if ("rows" in answer) waiting.resolve(answer.rows);
        else waiting.reject(errorOf(answer.error));
      }
    });
    const stopped = (error: unknown) => {
      if (this.#thread === thread) this.#thread = null;
      failAll(thread, error);
    };
    worker.on("error", stopped);
    worker.on("exit", (code) => stopped(new Error(`The SQLite read thread stopped (exit code ${code})`)));
    return thread;
  }
}

/** Sends the statements waiting in `thread`'s outbox, in one message. */
function flush(thread: Thread): void {
  const statements = thread.outbox.splice(0);
  try {
    thread.worker.postMessage(statements);
  } catch (error) {
    // An argument that cannot be sent (a function): that statement's own failure, as the driver's would be; the others go.
    for (const statement of statements) {
      try {
        thread.worker.postMessage([statement]);
      } catch {
        // The thread never learnt this statement's text: it is sent again with the next statement that uses it.
        if (statement[3] !== undefined) thread.texts.delete(statement[3]);
        settled(thread, statement[0])?.reject(
          new TypeError(`A statement argument cannot be sent to the read thread: ${(error as Error).message}`),
        );
      }
    }
  }
}

function settled(thread: Thread, id: number): Waiting | undefined {
  const waiting = thread.waiting.get(id);
  thread.waiting.delete(id);
  if (waiting && thread.waiting.size === 0) thread.worker.unref();
  return waiting;
}

function failAll(thread: Thread, error: unknown): void {
  const waiting = [...thread.waiting.values()];
  thread.waiting.clear();
  thread.worker.unref();
  for (const w of waiting) w.reject(error);
}

/** The thread's error as the driver's own: a LibsqlError with SQLite's code, or the JavaScript error it was. */
function errorOf({
  name,
  message,
  code,
  rawCode,
}: {
  name?: string;
  message: string;
  code?: unknown;
  rawCode?: unknown;
}): Error {
  if (typeof code === "string")
    return new LibsqlError(message, code, typeof rawCode === "number" ? rawCode : undefined);
  if (name === "RangeError") return new RangeError(message);
  if (name === "TypeError") return new TypeError(message);
  return new Error(message);
}
