import { randomUUID } from "node:crypto";
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Config } from "../config.ts";
import { ApiError } from "../errors.ts";

const imageTypes: Record<string, string> = {
  "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp", "image/svg+xml": "svg", "image/bmp": "bmp",
};

/** Resolves a stored relative path inside the storage directory, refusing anything that escapes it. */
export function storedFilePath(config: Config, relative: string): string | null {
  const root = path.resolve(config.storageDir);
  const full = path.resolve(root, relative);
  return full.startsWith(root + path.sep) ? full : null;
}

/** Checks an uploaded image (size, declared type) and stores it under `dir`; returns its relative path. */
export async function storeImage(config: Config, file: File, dir: string, field = "image"): Promise<{ path: string; filename: string }> {
  if (file.size > config.uploadMaxBytes) {
    throw new ApiError("PAYLOAD_TOO_LARGE", `The ${field} must not be greater than ${Math.floor(config.uploadMaxBytes / 1024)} kilobytes.`);
  }
  const ext = imageTypes[file.type.split(";")[0]!.trim().toLowerCase()];
  if (!ext || file.size === 0) {
    throw new ApiError("VALIDATION", `The ${field} field must be an image.`, { [field]: [`The ${field} field must be an image.`] });
  }
  const relative = `${dir}/${randomUUID()}.${ext}`;
  const full = storedFilePath(config, relative)!;
  await mkdir(path.dirname(full), { recursive: true });
  await writeFile(full, Buffer.from(await file.arrayBuffer()));
  return { path: relative, filename: file.name || path.basename(relative) };
}

export async function deleteStoredFile(config: Config, relative: string | null | undefined): Promise<void> {
  if (!relative) return;
  const full = storedFilePath(config, relative);
  if (full) await rm(full, { force: true });
}

/** Turns a `data:` URI into a File, for JSON clients that cannot send multipart. */
export function fileFromDataUri(uri: string, name = "upload"): File | null {
  const m = /^data:([^;,]+)(;base64)?,(.*)$/s.exec(uri);
  if (!m) return null;
  const bytes = m[2] ? Buffer.from(m[3]!, "base64") : Buffer.from(decodeURIComponent(m[3]!));
  const ext = imageTypes[m[1]!.toLowerCase()] ?? "bin";
  return new File([bytes], `${name}.${ext}`, { type: m[1] });
}
