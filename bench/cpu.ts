/**
 * In-process CPU per request, for quick before/after comparisons while optimising (not part of `npm run bench`):
 * seeds a fresh quick-size SQLite database, creates the app with `createApp`, and sends each
 * workload's requests sequentially through `yoga.fetch`, reporting CPU ms and SQL statements per request.
 *   tsx bench/cpu.ts [--db /tmp/x.db | --pg] [--n 300] [--rounds 1] [--sql] [W1 W3 ...]
 *   (--sql: print one request's statements; --rounds: batches of n, the median reported;
 *    --profile DIR: a CPU profile of each workload's measured batches only, DIR/<workload>.cpuprofile, summarised
 *    as bench/profile.ts does for the bench's --profile;
 *    --allocations: what the measured batches allocate, collected or not (V8's sampling heap profiler), in bytes per
 *    request by allocating function; with BENCH_HEAP_PROFILE=PREFIX the profile itself too, PREFIX-<workload>.heapprofile)
 * `--pg` uses a scratch database `muster_cpu` on the PostgreSQL server at 127.0.0.1:5432 instead.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { loadConfig } from "../src/core/config.ts";
import { openDatabase } from "../src/db/prisma.ts";
import { migrate } from "../src/db/migrate.ts";
import { createApiKey } from "../src/auth/accounts.ts";
import { createApp } from "../src/server/app.ts";
import pg from "pg";
import { postgresSink, prng, quickSize, seed, sqliteSink } from "./seed.ts";
import { w2Document, w2Variables } from "./w2.ts";
import { summariseProfile } from "./profile.ts";
import type { QueryEvents } from "./statements.ts";

const argv = process.argv.slice(2);
const option = (name: string) => (argv.includes(name) ? argv.splice(argv.indexOf(name), 2)[1] : undefined);
const file = option("--db") ?? "/tmp/muster-cpu.db";
const postgres = argv.includes("--pg") ? (argv.splice(argv.indexOf("--pg"), 1), true) : false;
const n = Number(option("--n") ?? 300);
/** Batches of `n` requests per workload; the median batch is reported. */
const rounds = Number(option("--rounds") ?? 1);
const profileDir = option("--profile");
const allocations = argv.includes("--allocations") ? (argv.splice(argv.indexOf("--allocations"), 1), true) : false;
const showSql = argv.includes("--sql") ? (argv.splice(argv.indexOf("--sql"), 1), true) : false;
const only = argv;
let databaseUrl = `file:${file}`;
if (postgres) {
  const admin = new pg.Client({ connectionString: "postgresql://postgres@127.0.0.1:5432/test" });
  await admin.connect();
  await admin.query("DROP DATABASE IF EXISTS muster_cpu WITH (FORCE)");
  await admin.query("CREATE DATABASE muster_cpu");
  await admin.end();
  databaseUrl = "postgresql://postgres@127.0.0.1:5432/muster_cpu";
} else {
  for (const suffix of ["", "-wal", "-shm"]) rmSync(file + suffix, { force: true });
}

await migrate(databaseUrl);
const db = await openDatabase(databaseUrl);
const { key, accountId } = await createApiKey(db.store, { account: `Cpu ${Date.now()}`, scopes: "*" });
await db.close();
const sink = postgres ? await postgresSink(databaseUrl) : sqliteSink(databaseUrl);
const { userIds, rankIds } = await seed(sink, accountId, quickSize);
await sink.close();
const db2 = await openDatabase(databaseUrl);
const app = createApp({
  db: db2,
  config: {
    ...loadConfig({
      LOG_LEVEL: process.env.LOG_LEVEL ?? "silent",
      GRAPHQL_PLANNED_EXECUTION: process.env.GRAPHQL_PLANNED_EXECUTION,
    }),
    databaseUrl,
    storageDir: "/tmp/muster-cpu-files",
    rateLimitPerMinute: 1e9,
  },
});
const rnd = prng(7);
/** CPU time of this (the main) thread, from /proc (10 ms ticks): the rest of the process's is V8's helpers' and the read thread's. */
const mainThreadMs = () => {
  const fields = readFileSync("/proc/thread-self/stat", "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
const workloads: Record<string, () => { method: string; path: string; body?: string }> = {
  W1: () => ({
    method: "GET",
    path: `/v2/users/${rnd.pick(userIds)}/rank-records?include=author,rank.image,document&limit=20`,
  }),
  W2: () => ({
    method: "POST",
    path: "/graphql",
    body: JSON.stringify({ query: w2Document, variables: w2Variables(rnd.int(9)) }),
  }),
  W3: () => ({ method: "GET", path: `/v2/comments?include=author&page=${1 + rnd.int(200)}&limit=25` }),
  W4: () => ({
    method: "POST",
    path: `/v2/users/${rnd.pick(userIds)}/rank-records`,
    body: JSON.stringify({ rank_id: rnd.pick(rankIds), type: rnd.int(4), text: "Bench promotion" }),
  }),
  RANK: () => ({ method: "GET", path: `/v2/ranks/${rnd.pick(rankIds)}` }),
};
for (const [id, next] of Object.entries(workloads)) {
  if (only.length && !only.includes(id)) continue;
  const count = id === "W2" ? Math.max(10, n / 20) : n;
  const send = async () => {
    const r = next();
    const res = await app.yoga.fetch(`http://127.0.0.1${r.path}`, {
      method: r.method,
      body: r.body,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    });
    const text = await res.text();
    if (res.status !== 200 || text.includes('"errors"')) throw new Error(`${id} ${res.status} ${text.slice(0, 300)}`);
  };
  for (let i = 0; i < Math.min(50, count); i++) await send();
  if (showSql) {
    const sql: string[] = [];
    const listener = (text: string) => void sql.push(`  direct: ${text}`);
    db2.onReaderStatement.add(listener);
    (db2.prisma as unknown as QueryEvents).$on("query", (e) => sql.push(`  prisma: ${e.query}`));
    await send();
    db2.onReaderStatement.delete(listener);
    console.log(`${id}:\n${sql.join("\n")}`);
  }
  const batches: Array<{ cpu: number; main: number; wall: number; statements: number }> = [];
  const inspector = profileDir || allocations ? new Session() : undefined;
  if (inspector) inspector.connect();
  if (profileDir) {
    await inspector!.post("Profiler.enable");
    await inspector!.post("Profiler.start");
  }
  if (allocations) {
    await inspector!.post("HeapProfiler.enable");
    await inspector!.post("HeapProfiler.startSampling", {
      samplingInterval: 4096,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    } as never);
  }
  for (let b = 0; b < rounds; b++) {
    const before = process.cpuUsage();
    const main0 = mainThreadMs();
    const s0 = db2.statements.count;
    const t0 = performance.now();
    for (let i = 0; i < count; i++) await send();
    const cpu = process.cpuUsage(before);
    batches.push({
      cpu: (cpu.user + cpu.system) / 1000 / count,
      main: (mainThreadMs() - main0) / count,
      wall: (performance.now() - t0) / count,
      statements: (db2.statements.count - s0) / count,
    });
  }
  if (allocations) {
    const { profile } = await inspector!.post("HeapProfiler.stopSampling");
    if (process.env.BENCH_HEAP_PROFILE)
      writeFileSync(`${process.env.BENCH_HEAP_PROFILE}-${id}.heapprofile`, JSON.stringify(profile));
    console.log(summariseAllocations(profile, count * rounds));
  }
  if (profileDir) {
    const { profile } = await inspector!.post("Profiler.stop");
    mkdirSync(profileDir, { recursive: true });
    const file = `${profileDir}/${id}.cpuprofile`;
    writeFileSync(file, JSON.stringify(profile));
    console.log(summariseProfile(file, process.cwd(), 0, count * rounds));
  }
  inspector?.disconnect();
  const median = batches.sort((a, b) => a.cpu - b.cpu)[Math.floor(batches.length / 2)];
  const spread = rounds > 1 ? ` (batches ${batches.map((b) => b.cpu.toFixed(2)).join(", ")})` : "";
  console.log(
    `${id}: ${median.cpu.toFixed(2)} ms CPU/request${spread}, ${median.main.toFixed(2)} of them on the main thread, ${median.wall.toFixed(2)} ms wall, ${median.statements.toFixed(1)} statements`,
  );
}
await db2.close();

/** Bytes allocated per request by each function (self), and in all, from a sampling heap profile. */
function summariseAllocations(profile: { head: AllocationNode }, requests: number): string {
  const byFunction = new Map<string, number>();
  let total = 0;
  const visit = (node: AllocationNode) => {
    const bytes = node.selfSize;
    if (bytes) {
      const { functionName, url, lineNumber } = node.callFrame;
      const where = `${functionName || "(anonymous)"} — ${url
        .replace(/^.*node_modules\//, "")
        .replace(process.cwd() + "/", "")
        .replace("file://", "")}:${lineNumber + 1}`;
      byFunction.set(where, (byFunction.get(where) ?? 0) + bytes);
      total += bytes;
    }
    node.children.forEach(visit);
  };
  visit(profile.head);
  const kb = (bytes: number) => (bytes / requests / 1024).toFixed(1);
  const top = [...byFunction]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 30)
    .map(([where, bytes]) => `  ${kb(bytes).padStart(8)} KB  ${where}`);
  return `Allocated per request: ${kb(total)} KB (sampled), by function:\n${top.join("\n")}`;
}

interface AllocationNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: AllocationNode[];
}
