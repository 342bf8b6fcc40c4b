import {
  chmodSync,
  copyFileSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  statSync,
  symlinkSync,
} from "node:fs";
import path from "node:path";

/**
 * `source` (a folder tree such as node_modules) again at `target`, readable by every user: new folders (mode 755),
 * each file hard-linked when others may already read it (no bytes copied: node_modules's 73,000 files take about 2-3 s)
 * and copied, then made readable, otherwise or when `target` is on another filesystem; symbolic links as they are.
 * A linked file is the source's own file: never change the mirror's files, only delete the mirror.
 */
export function mirrorTree(source: string, target: string): { linked: number; copied: number } {
  const counts = { linked: 0, copied: 0 };
  let canLink = true;
  const walk = (from: string, to: string) => {
    mkdirSync(to);
    chmodSync(to, 0o755);
    for (const entry of readdirSync(from, { withFileTypes: true })) {
      const src = path.join(from, entry.name);
      const dest = path.join(to, entry.name);
      if (entry.isDirectory()) walk(src, dest);
      else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(src), dest);
      else if (entry.isFile()) {
        const { mode } = lstatSync(src);
        if (canLink && mode & 0o004) {
          try {
            linkSync(src, dest);
            counts.linked++;
            continue;
          } catch (error) {
            const code = (error as NodeJS.ErrnoException).code;
            if (code !== "EXDEV" && code !== "EPERM" && code !== "EMLINK") throw error;
            canLink = code === "EMLINK";
          }
        }
        copyFileSync(src, dest);
        chmodSync(dest, (mode & 0o777) | 0o444 | (mode & 0o100 ? 0o111 : 0));
        counts.copied++;
      }
    }
  };
  walk(source, target);
  return counts;
}

/** The first of `dir` and the folders above it that users other than its owner cannot enter, or null if none. */
export function closedToOthers(dir: string): string | null {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    if (!(statSync(at).mode & 0o001)) return at;
    if (at === path.dirname(at)) return null;
  }
}
