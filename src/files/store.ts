import path from "node:path";
import type { Store } from "../db/store.ts";
import type { StoreTransaction } from "../db/transaction.ts";

/** A file to store: where it is served (`/files/<path>`), its bytes and the type it is served with. */
export interface FileToStore {
  /** Relative path, `<dir>/<random name>.<ext>`, as the owning row stores it. */
  path: string;
  bytes: Uint8Array<ArrayBuffer>;
  contentType: string;
  /** The account whose row refers to the file. */
  accountId: number | null;
}

/** A stored file, as it is served. */
export interface StoredFileContent {
  contentType: string;
  size: number;
  /** The bytes, read only when called (a HEAD request does not). */
  body(): ReadableStream<Uint8Array> | Uint8Array<ArrayBuffer>;
}

/** The data store the database driver reads and deletes with outside a write. */
export type FileStoreClient = Pick<Store, "findUnique" | "prisma">;

/**
 * Where uploads live: the local disk of one instance (`disk`), or the database every instance shares (`database`),
 * chosen by `STORAGE_DRIVER`. Paths are the ones rows store; a path outside the store is simply not found.
 */
export interface FileStorage {
  /**
   * True when `put` and `delete` given the write's transaction take effect with it and are undone with it (the
   * database). Otherwise (the disk) what a failed transaction put must be deleted, and deletes wait for the commit:
   * src/files/changes.ts does both.
   */
  readonly transactional: boolean;
  put(file: FileToStore, tx?: StoreTransaction): Promise<void>;
  /** The file at `path`, or null when there is none. */
  get(path: string): Promise<StoredFileContent | null>;
  /** Deletes the files at `paths`; a path with no file is no error. */
  delete(paths: readonly string[], tx?: StoreTransaction): Promise<void>;
}

const contentTypes: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".svg": "image/svg+xml",
  ".bmp": "image/bmp",
};

/**
 * The type a stored file is served with, from the extension its path was given: images as themselves, anything else
 * as a download (never a client's declared type, which could make an upload a page of this origin).
 */
export const contentTypeOf = (relative: string): string =>
  contentTypes[path.extname(relative).toLowerCase()] ?? "application/octet-stream";
