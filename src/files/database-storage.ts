import type { FileStorage, FileStoreClient, FileToStore, StoredFileContent } from "./store.ts";
import type { StoreTransaction } from "../db/transaction.ts";

/**
 * Files in the database's `StoredFile` table (a PostgreSQL `bytea`, an SQLite blob), which every instance on that
 * database reads: behind a load balancer, any instance serves and deletes what another stored. Writes given the
 * write's transaction commit or roll back with its rows.
 */
export class DatabaseFileStorage implements FileStorage {
  readonly transactional = true;

  constructor(private readonly store: FileStoreClient) {}

  /** On the transaction's writer when it translates the INSERT (src/db/store.ts `create`), else Prisma's. */
  async put(file: FileToStore, tx: StoreTransaction): Promise<void> {
    await tx.create("StoredFile", {
      data: {
        path: file.path,
        accountId: file.accountId,
        contentType: file.contentType,
        size: file.bytes.byteLength,
        bytes: file.bytes,
      },
    });
  }

  async get(path: string): Promise<StoredFileContent | null> {
    const row = (await this.store.findUnique("StoredFile", {
      where: { path },
      select: { contentType: true, size: true, bytes: true },
    })) as { contentType: string; size: number; bytes: unknown } | null;
    if (!row) return null;
    const bytes = asBytes(row.bytes);
    return { contentType: row.contentType, size: bytes.byteLength, body: () => bytes };
  }

  async delete(paths: readonly string[], tx?: StoreTransaction): Promise<void> {
    if (paths.length) await (tx ?? this.store).prisma.storedFile.deleteMany({ where: { path: { in: [...paths] } } });
  }
}

/** A blob as the drivers hand it back: Prisma's Uint8Array, pg's Buffer or an ArrayBuffer from SQLite's reader. */
function asBytes(value: unknown): Uint8Array<ArrayBuffer> {
  if (value instanceof Uint8Array)
    return value.buffer instanceof ArrayBuffer ? (value as Uint8Array<ArrayBuffer>) : new Uint8Array(value);
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  throw new TypeError(`A stored file's bytes came back as ${typeof value}`);
}
