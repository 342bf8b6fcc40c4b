import { createHash, randomBytes } from "node:crypto";

/** Keys are shown once; only their SHA-256 is stored. */
export const hashKey = (key: string) => createHash("sha256").update(key).digest("hex");

export function generateKey(): { key: string; hash: string; prefix: string } {
  const key = `mst_${randomBytes(32).toString("base64url")}`;
  return { key, hash: hashKey(key), prefix: key.slice(0, 12) };
}

/** `*` or a list of `<ability>:<model>` scopes separated by commas or spaces. */
export function parseScopes(text: string): string[] {
  const scopes = text.split(/[\s,]+/).map((s) => s.trim()).filter(Boolean);
  for (const scope of scopes) {
    if (scope !== "*" && !/^[a-z_]+:[a-z_]+$/.test(scope)) throw new Error(`Invalid scope "${scope}": use <view|create|update|delete>:<model> or *`);
  }
  return [...new Set(scopes)];
}
