import type { FileStorage, FileToStore } from "./store.ts";
import type { StoreTransaction } from "../db/transaction.ts";

/**
 * The files one write transaction stores and deletes, kept in step with its rows whichever the driver. A
 * transactional store (the database) writes and deletes with the transaction itself. Otherwise (the disk) a file is
 * written at once and deleted again if the transaction fails, and a delete waits for the commit: a write rolled back
 * never loses a file its rows still name.
 */
export class FileChanges {
  readonly #stored: string[] = [];
  readonly #doomed: string[] = [];

  constructor(
    readonly storage: FileStorage,
    readonly tx: StoreTransaction,
  ) {}

  async put(file: FileToStore): Promise<void> {
    if (this.storage.transactional) return this.storage.put(file, this.tx);
    this.#stored.push(file.path);
    await this.storage.put(file);
  }

  async delete(paths: readonly string[]): Promise<void> {
    if (this.storage.transactional) await this.storage.delete(paths, this.tx);
    else this.#doomed.push(...paths);
  }

  /** Once the transaction has committed: the deletes it asked for. */
  async committed(): Promise<void> {
    if (this.#doomed.length) await this.storage.delete(this.#doomed);
  }

  /** Once the transaction has failed: the files it stored. */
  async rolledBack(): Promise<void> {
    if (this.#stored.length) await this.storage.delete(this.#stored);
  }
}
