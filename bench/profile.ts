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
    return parts[0].startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0];
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
  return {
    url: pathToFileURL(path.resolve(path.dirname(file), entry.originalSource)).href,
    lineNumber: entry.originalLine,
  };
}

/** The parts of one request's budget (issue 17, item 2), in the order the summary lists them. */
const budgetParts = [
  "admission (key, account, maintenance flag, rate limit)",
  "logging and metrics",
  "data access (reader planning, SQL drivers, row decoding)",
  "serialisation (JSON of the answer)",
  "document lookup (GraphQL parse, validation, cost)",
  "GraphQL execution (graphql-js, Pothos, our resolvers)",
  "REST routing and shaping (src/rest)",
  "HTTP and Yoga (node:http, sockets, @whatwg-node, graphql-yoga)",
  "garbage collection",
  "promise and microtask machinery (runMicrotasks, task queues)",
  "async context (AsyncLocalStorage's promise hooks, node:async_hooks)",
  "V8 / native, unattributed ((program))",
  "other",
] as const;
type BudgetPart = (typeof budgetParts)[number];

/** What one frame says about a sample's purpose, or null; `area` is areaOf() of its (source-mapped) url. */
function frameTag(fn: string, url: string, area: string): BudgetPart | null {
  const local = url.replace(/^file:\/\//, "");
  if (
    /\/src\/server\/observability\//.test(local) ||
    /^(pino|pino-std-serializers|sonic-boom|fast-redact|thread-stream|prom-client|@opentelemetry\/.*)$/.test(area)
  )
    return "logging and metrics";
  if (/\/src\/auth\//.test(local) || /\/src\/server\/(maintenance|rate-limit)\.ts$/.test(local))
    return "admission (key, account, maintenance flag, rate limit)";
  if (
    /\/src\/(db|data)\//.test(local) ||
    /^(pg|pg-protocol|pg-types|pg-pool|pg-cloudflare|postgres-array|postgres-date|libsql|@libsql\/.*|@prisma\/.*|@neon-rs\/.*|src\/generated\/prisma)$/.test(
      area,
    )
  )
    return "data access (reader planning, SQL drivers, row decoding)";
  if (/stringify|^json$/i.test(fn) && /^(graphql-yoga|@whatwg-node\/.*)$/.test(area))
    return "serialisation (JSON of the answer)";
  if (area === "graphql" && /\/(language|validation)\//.test(local))
    return "document lookup (GraphQL parse, validation, cost)";
  if (
    /^@escape\.tech\//.test(area) ||
    /\/src\/server\/trusted-documents\.ts$/.test(local) ||
    /\/src\/graphql\/cost\.ts$/.test(local)
  )
    return "document lookup (GraphQL parse, validation, cost)";
  if (
    area === "graphql" ||
    area.startsWith("@pothos/") ||
    area.startsWith("@graphql-tools/") ||
    area.startsWith("@envelop/") ||
    /\/src\/(graphql|resources)\//.test(local) ||
    /\/src\/server\/executor\.ts$/.test(local) ||
    area === "dataloader"
  )
    return "GraphQL execution (graphql-js, Pothos, our resolvers)";
  if (/\/src\/rest\//.test(local)) return "REST routing and shaping (src/rest)";
  if (
    area === "graphql-yoga" ||
    area.startsWith("@whatwg-node/") ||
    (area === "node (built-in modules)" &&
      /^node:(_http|http|net|stream|internal\/(http|streams|stream_base|net|url|webstreams)|buffer|zlib|events)/.test(
        url,
      )) ||
    /\/src\/server\//.test(local)
  )
    return "HTTP and Yoga (node:http, sockets, @whatwg-node, graphql-yoga)";
  return null;
}

/** Parts that claim a sample wherever their frame is on its stack, strongest first; the rest go by the innermost frame that has a part. */
const claimAnywhere: BudgetPart[] = [
  "logging and metrics",
  "admission (key, account, maintenance flag, rate limit)",
  "data access (reader planning, SQL drivers, row decoding)",
  "serialisation (JSON of the answer)",
  "document lookup (GraphQL parse, validation, cost)",
];

/**
 * Self time of a V8 CPU profile by package or source folder and by function, skipping the first
 * `skipMs` (start-up and warm-up) and the idle samples: a Markdown summary. With `requests` (answered after `skipMs`),
 * also the budget of one request: each sample's whole stack put in one part (budgetParts), in ms per request.
 */
export function summariseProfile(file: string, root: string, skipMs = 0, requests = 0): string {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  /** A function as the tables name it: its package, or for our own code its file, and its line. */
  const label = (callFrame: ProfileNode["callFrame"]) => {
    const { url, lineNumber } = original(callFrame);
    const area = areaOf(url, callFrame.functionName, root);
    const local = url.replace(/^file:\/\//, "").replace(root + "/", "");
    const where = area.startsWith("src/") || !url ? (area.startsWith("src/") ? local : area) : area;
    return `${callFrame.functionName || "(anonymous)"} — ${where}${url ? `:${lineNumber + 1}` : ""}`;
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  const self = new Map<number, number>();
  let elapsed = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = (profile.timeDeltas[i] ?? 0) / 1000;
    elapsed += delta;
    if (elapsed < skipMs) continue;
    self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + delta);
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
    const { url } = original(callFrame);
    const area = areaOf(url, callFrame.functionName, root);
    areas.set(area, (areas.get(area) ?? 0) + ms);
    const fn = label(callFrame);
    functions.set(fn, (functions.get(fn) ?? 0) + ms);
  }
  // The budget: a sample goes to the strongest claimAnywhere part on its stack, else to its innermost frame's part.
  const parts = new Map<BudgetPart, number>();
  const partLeaves = new Map<BudgetPart, Map<string, number>>();
  const tagOf = new Map<number, BudgetPart | null>();
  const tag = (id: number) => {
    if (!tagOf.has(id)) {
      const { callFrame } = byId.get(id)!;
      const { url } = original(callFrame);
      tagOf.set(id, frameTag(callFrame.functionName, url, areaOf(url, callFrame.functionName, root)));
    }
    return tagOf.get(id)!;
  };
  for (const [id, ms] of self) {
    const leaf = byId.get(id)!.callFrame.functionName;
    if (leaf === "(idle)") continue;
    let part: BudgetPart | undefined;
    if (leaf === "(garbage collector)") part = "garbage collection";
    else if (leaf === "(program)") part = "V8 / native, unattributed ((program))";
    else if (/^node:(internal\/)?async_hooks/.test(byId.get(id)!.callFrame.url))
      part = "async context (AsyncLocalStorage's promise hooks, node:async_hooks)";
    else {
      const tags: BudgetPart[] = [];
      for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
        const t = tag(at);
        if (t) tags.push(t);
      }
      part =
        claimAnywhere.find((p) => tags.includes(p)) ??
        tags[0] ??
        (/^(runMicrotasks|processTicksAndRejections|processPromiseRejections)$/.test(leaf)
          ? "promise and microtask machinery (runMicrotasks, task queues)"
          : "other");
    }
    parts.set(part, (parts.get(part) ?? 0) + ms);
    const leaves = partLeaves.get(part) ?? new Map<string, number>();
    partLeaves.set(part, leaves);
    const leafLabel = label(byId.get(id)!.callFrame);
    leaves.set(leafLabel, (leaves.get(leafLabel) ?? 0) + ms);
  }
  const budget =
    requests > 0
      ? [
          "",
          `Budget of one request (${requests} requests answered in the profiled round, main thread only; a sample counts for the logging, admission, data, serialisation or document part when one of that part's frames is anywhere on its stack, in that order, else for its innermost frame's part; stacks end at each await, so work resumed after one counts where it resumes):`,
          "",
          "| Part | ms per request | share |",
          "|---|---:|---:|",
          ...budgetParts
            .filter((p) => parts.has(p))
            .map(
              (p) =>
                `| ${p} | ${(parts.get(p)! / requests).toFixed(2)} | ${((100 * parts.get(p)!) / busy).toFixed(1)}% |`,
            ),
          `| total (main thread busy) | ${(busy / requests).toFixed(2)} | 100% |`,
          "",
          "| Part: its functions with the most self time | ms per request |",
          "|---|---:|",
          ...budgetParts
            .filter((p) => parts.has(p))
            .flatMap((p) =>
              [...partLeaves.get(p)!]
                .sort((a, b) => b[1] - a[1])
                .slice(0, 4)
                .map(([fn, ms]) => `| ${p.split(" (")[0]}: ${fn} | ${(ms / requests).toFixed(3)} |`),
            ),
        ]
      : [];
  const top = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, ms]) => `| ${k} | ${ms.toFixed(0)} | ${((100 * ms) / busy).toFixed(1)}% |`);
  return [
    `Busy ${(busy / 1000).toFixed(1)} s of CPU on the main thread, idle ${(idle / 1000).toFixed(1)} s (after the first ${(skipMs / 1000).toFixed(0)} s).`,
    ...budget,
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
