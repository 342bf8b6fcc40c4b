import { randomUUID } from "node:crypto";
import path from "node:path";
import type { Config } from "../core/config.ts";
import { ApiError } from "../core/errors.ts";
import { DatabaseFileStorage } from "./database-storage.ts";
import { DiskFileStorage, storedFilePath as pathInside } from "./disk-storage.ts";
import { contentTypeOf, type FileStorage, type FileStoreClient, type FileToStore } from "./store.ts";

export type { FileStorage, FileStoreClient, StoredFileContent } from "./store.ts";
export { FileChanges } from "./changes.ts";

/** The store `STORAGE_DRIVER` names: `disk` (under `STORAGE_DIR`) or `database` (through `prisma`). */
export function fileStorage(config: Config, prisma: FileStoreClient): FileStorage {
  return config.storageDriver === "database" ? new DatabaseFileStorage(prisma) : new DiskFileStorage(config.storageDir);
}

const imageTypes: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/bmp": "bmp",
};

/**
 * An uploaded file, whichever class carries it: Node's `File`, or the ponyfill Yoga's multipart
 * parser hands to GraphQL variables.
 */
export const isFile = (value: unknown): value is File =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as File).arrayBuffer === "function" &&
  typeof (value as File).size === "number" &&
  typeof (value as File).type === "string";

/** Where the disk driver keeps a stored relative path, or null when it would escape `STORAGE_DIR`. */
export const storedFilePath = (config: Config, relative: string): string | null =>
  pathInside(config.storageDir, relative);

/** Where an upload is kept and who owns it. */
export interface UploadTarget {
  /** Directory of the path (`images`, `attachments`...). */
  dir: string;
  /** The input field, named in errors. */
  field: string;
  /** Whether the file must be an image whose bytes match its declared type. */
  image: boolean;
  accountId: number;
}

/**
 * Checks an upload (size; for images the declared type and the file's own signature) and stores it through `store`
 * under `dir` with a random name; returns its relative path and the client's file name.
 */
export async function storeFile(
  config: Config,
  store: { put(file: FileToStore): Promise<void> },
  file: File,
  { dir, field, image, accountId }: UploadTarget,
): Promise<{ path: string; filename: string }> {
  const human = field.replace(/_/g, " ");
  if (file.size > config.uploadMaxBytes) {
    throw new ApiError(
      "PAYLOAD_TOO_LARGE",
      `The ${human} field must not be greater than ${Math.floor(config.uploadMaxBytes / 1024)} kilobytes.`,
    );
  }
  if (file.size === 0)
    throw new ApiError("VALIDATION", `The ${human} field must not be empty.`, {
      [field]: [`The ${human} field must not be empty.`],
    });
  const bytes = Buffer.from(await file.arrayBuffer());
  let ext = safeExtension(file.name);
  if (image) {
    const declared = imageTypes[file.type.split(";")[0].trim().toLowerCase()];
    const sniffed = sniffImage(bytes);
    if (!declared || !sniffed || (declared !== sniffed && !(declared === "jpg" && sniffed === "jpg"))) {
      throw new ApiError("VALIDATION", `The ${human} field must be an image.`, {
        [field]: [`The ${human} field must be an image.`],
      });
    }
    ext = sniffed;
  }
  const relative = `${dir}/${randomUUID()}${ext ? `.${ext}` : ""}`;
  await store.put({ path: relative, bytes, contentType: contentTypeOf(relative), accountId });
  // The client's file name is kept for display: control characters and lone surrogates (unstorable on PostgreSQL) dropped.
  const name = (file.name ?? "").replace(
    /[\u0000-\u001f\u007f]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,
    "",
  );
  return { path: relative, filename: name || path.basename(relative) };
}

const safeExtension = (name: string) => /\.([A-Za-z0-9]{1,10})$/.exec(name)?.[1]?.toLowerCase() ?? "";

/** The image format a file's first bytes announce, so a renamed text file is not taken for an image. */
function sniffImage(bytes: Buffer): string | null {
  const starts = (...sig: number[]) => sig.every((b, i) => bytes[i] === b);
  if (starts(0x89, 0x50, 0x4e, 0x47)) return "png";
  if (starts(0xff, 0xd8, 0xff)) return "jpg";
  if (starts(0x47, 0x49, 0x46, 0x38)) return "gif";
  if (starts(0x52, 0x49, 0x46, 0x46) && bytes.subarray(8, 12).toString("latin1") === "WEBP") return "webp";
  if (starts(0x42, 0x4d)) return "bmp";
  return null;
}

/** Turns a `data:` URI into a File, for JSON clients that cannot send multipart. */
export function fileFromDataUri(uri: string, name = "upload"): File | null {
  const m = /^data:([^;,]+)(;base64)?,(.*)$/s.exec(uri);
  if (!m) return null;
  const bytes = m[2] ? Buffer.from(m[3], "base64") : Buffer.from(decodeURIComponent(m[3]));
  const ext = imageTypes[m[1].toLowerCase()] ?? "bin";
  return new File([bytes], `${name}.${ext}`, { type: m[1] });
}
