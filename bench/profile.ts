import { readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code lives: an npm package, a folder of ours, Node itself, or V8's pseudo-frames. */
function areaOf(url: string, functionName: string, root: string): string {
  if (!url) return functionName.startsWith("(") ? functionName : "(native)";
  const modules = url.lastIndexOf("node_modules/");
  if (modules >= 0) {
    const parts = url.slice(modules + "node_modules/".length).split("/");
    return parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  if (url.startsWith("node:")) return "node (built-in modules)";
  const local = url.replace(/^file:\/\//, "").replace(root + "/", "");
  const src = local.match(/^src\/(generated\/prisma|[^/]+)/);
  return src ? `src/${src[1]}` : local;
}

const sourceMaps = new Map<string, SourceMap | null>();

/**
 * A frame in the built bundle (dist/*.mjs, which `--cpu-prof` reports as is) → the source file and line it was built
 * from, through the bundle's source map; other frames unchanged.
 */
function original(callFrame: ProfileNode["callFrame"]): { url: string; lineNumber: number } {
  const { url, lineNumber, columnNumber } = callFrame;
  if (!url.startsWith("file://") || !url.endsWith(".mjs") || url.includes("/node_modules/")) return { url, lineNumber };
  const file = fileURLToPath(url);
  let map = sourceMaps.get(file);
  if (map === undefined) {
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, "utf8")));
    } catch {
      map = null;
    }
    sourceMaps.set(file, map);
  }
  const entry = map?.findEntry(lineNumber, columnNumber);
  if (!entry || !("originalSource" in entry)) return { url, lineNumber };
  return { url: pathToFileURL(path.resolve(path.dirname(file), entry.originalSource)).href, lineNumber: entry.originalLine };
}

/**
 * Self time of a V8 CPU profile by package or source folder and by function, skipping the first
 * `skipMs` (start-up and warm-up) and the idle samples: a Markdown summary.
 */
export function summariseProfile(file: string, root: string, skipMs = 0): string {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let elapsed = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = (profile.timeDeltas[i] ?? 0) / 1000;
    elapsed += delta;
    if (elapsed < skipMs) continue;
    self.set(profile.samples[i]!, (self.get(profile.samples[i]!) ?? 0) + delta);
  }
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  for (const [id, ms] of self) {
    const { callFrame } = byId.get(id)!;
    if (callFrame.functionName === "(idle)") {
      idle += ms;
      continue;
    }
    busy += ms;
    const { url, lineNumber } = original(callFrame);
    const area = areaOf(url, callFrame.functionName, root);
    areas.set(area, (areas.get(area) ?? 0) + ms);
    const fn = `${callFrame.functionName || "(anonymous)"} — ${area}${url ? `:${lineNumber + 1}` : ""}`;
    functions.set(fn, (functions.get(fn) ?? 0) + ms);
  }
  const top = (m: Map<string, number>, n: number) =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, ms]) => `| ${k} | ${ms.toFixed(0)} | ${((100 * ms) / busy).toFixed(1)}% |`);
  return [
    `Busy ${(busy / 1000).toFixed(1)} s of CPU on the main thread, idle ${(idle / 1000).toFixed(1)} s (after the first ${(skipMs / 1000).toFixed(0)} s).`,
    "",
    "| Self time by package / folder | ms | share |",
    "|---|---:|---:|",
    ...top(areas, 14),
    "",
    "| Self time by function | ms | share |",
    "|---|---:|---:|",
    ...top(functions, Number(process.env.TOPN ?? 15)),
  ].join("\n");
}
