import { createReadStream } from "node:fs";
import { mkdir, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import type { FileStorage, FileToStore, StoredFileContent } from "./store.ts";
import { contentTypeOf } from "./store.ts";

/** Resolves a stored relative path inside the storage directory, refusing anything that escapes it. */
export function storedFilePath(storageDir: string, relative: string): string | null {
  const root = path.resolve(storageDir);
  const full = path.resolve(root, relative);
  return full.startsWith(root + path.sep) ? full : null;
}

/** What a path that names no readable file fails with. */
const missing = new Set(["ENOENT", "ENOTDIR", "EISDIR", "ENAMETOOLONG", "EINVAL"]);

/** Files under `STORAGE_DIR` on this instance's disk: one instance, or several sharing a volume. */
export class DiskFileStorage implements FileStorage {
  readonly transactional = false;

  constructor(readonly storageDir: string) {}

  async put(file: FileToStore): Promise<void> {
    const full = storedFilePath(this.storageDir, file.path);
    if (!full) throw new Error(`A stored file's path must stay inside the storage directory: ${file.path}`);
    await mkdir(path.dirname(full), { recursive: true });
    await writeFile(full, file.bytes);
  }

  async get(relative: string): Promise<StoredFileContent | null> {
    const full = storedFilePath(this.storageDir, relative);
    if (!full) return null;
    try {
      const found = await stat(full);
      if (!found.isFile()) return null;
      return {
        contentType: contentTypeOf(full),
        size: found.size,
        body: () => Readable.toWeb(createReadStream(full)) as ReadableStream<Uint8Array>,
      };
    } catch (error) {
      if (missing.has((error as NodeJS.ErrnoException).code ?? "")) return null;
      throw error;
    }
  }

  async delete(paths: readonly string[]): Promise<void> {
    for (const relative of paths) {
      const full = storedFilePath(this.storageDir, relative);
      if (full) await rm(full, { force: true });
    }
  }
}
