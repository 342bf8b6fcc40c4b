/**
 * `npm run bench` — throughput, latency, SQL statements and memory of the service against a floor.
 *
 * Seeds a fresh SQLite file (bench/seed.ts), starts the service as a real child process as production
 * runs it (`npm start`: the esbuild bundle, run by node with package.json's start flags, rebuilt first)
 * and the floor (bench/floor.ts, under tsx: better-sqlite3 on SQLite, `pg` named statements on PostgreSQL) beside it,
 * checks that the floor answers the same JSON, then loads both with autocannon (32 connections, a warm-up, then
 * rounds; medians reported). Then the same again on a scratch PostgreSQL database when one is reachable
 * (BENCH_POSTGRES_URL or 127.0.0.1:5432), with PostGraphile 4 (bench/postgraphile.ts) as a third system for W2:
 *
 *   W1  GET  /v2/users/{random}/rank-records?include=author,rank.image,document&limit=20
 *   W2  POST /graphql  100 users × 20 rank records with rank { name image { path } } and author { name } (bench/w2.ts)
 *   W3  GET  /v2/comments?include=author&page={random}&limit=25
 *   W4  POST /v2/users/{random}/rank-records  (a fixed number of requests; new rows must equal 2xx answers); then
 *       again on the service with one webhook subscribed to `rankrecord.created` delivering to a sink in this process
 *       (throughput against W4 without it; every row created must reach the sink once); then again with three
 *       automations on `rankrecord.created` (webhook, message, update): throughput and CPU per request against W4
 *       without them, the time to drain their backlog, and every effect once per row (exit 1 otherwise)
 *
 * Prints a table and writes it to bench/RESULTS.md (bench/RESULTS-quick.md with --quick, bench/RESULTS-partial.md with
 * --only=W1,…, --postgres-only or --sqlite-only).
 *
 *   npm run bench                 full run (about 9 minutes on 2 cores with PostgreSQL)
 *   npm run bench -- --quick      smoke run: smaller organisation, one short round
 *   npm run bench -- --profile    also CPU-profile the service under W1 and W2 (with --only, under each workload named) and summarise where time goes
 *   npm run bench -- --keep       keep the temporary database directory and server logs
 *   npm run bench -- --wait-idle  first wait (up to 15 min) for the 1-minute load average to fall below 1
 *   npm run bench -- --workers    scale-out only: W1 and W3 on PostgreSQL against WORKERS=1 and WORKERS=2 (and the
 *                                 floor), with the CPU of the service, PostgreSQL and autocannon per request
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import {
  closeSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { connect, type AddressInfo } from "node:net";
import { createServer } from "node:http";
import { availableParallelism, tmpdir, totalmem, userInfo } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";
import autocannon, { type Result } from "autocannon";
import { createClient } from "@libsql/client";
import { migrate } from "../src/db/migrate.ts";
import { openDatabase } from "../src/db/prisma.ts";
import { createApiKey } from "../src/auth/accounts.ts";
import { fullSize, postgresSink, prng, quickSize, seed, sqliteSink, type Seeded, type SeedSize } from "./seed.ts";
import { countStatements, summariseSql, type Counted, type Probe } from "./statements.ts";
import { summariseProfile } from "./profile.ts";
import { cursorUserId, w2cDocument, w2cVariables, w2Document, w2Variables } from "./w2.ts";
import { machineSpeedMs } from "./machine-speed.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = new Set(process.argv.slice(2));
const quick = args.has("--quick");
const profile = args.has("--profile");
const keep = args.has("--keep");
const waitIdle = args.has("--wait-idle");
/** `--only=W1,W4`: measure these workloads only; `--postgres-only` / `--sqlite-only`: one database. Any writes RESULTS-partial.md. */
const onlyArg = [...args].find((a) => a.startsWith("--only="));
const only = onlyArg ? new Set(onlyArg.slice("--only=".length).split(",")) : null;
const postgresOnly = args.has("--postgres-only");
const sqliteOnly = args.has("--sqlite-only");
const partial = !!only || postgresOnly || sqliteOnly;
/** `--workers`: the scale-out comparison (issue 17, item 4) instead of the usual run; writes RESULTS-workers.md. */
const workersMode = args.has("--workers");
/**
 * `--scale 10` (or `--scale=10`, issue 45 point 4): instead of the usual run, every workload on the service and the
 * floor at the full size and at that many times its users, rank records and comments, CPU per request side by side;
 * W3 at its last page too. With --quick the rounds are the quick run's, the sizes still the full one and N times it.
 * Writes RESULTS-scale.md (RESULTS-quick.md with --quick).
 */
const scaleFactor = (() => {
  const argv = process.argv.slice(2);
  const inline = argv.find((a) => a.startsWith("--scale="));
  const text = inline
    ? inline.slice("--scale=".length)
    : argv.includes("--scale")
      ? argv[argv.indexOf("--scale") + 1]
      : null;
  if (text === null) return null;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 2) throw new Error(`--scale needs a whole factor of 2 or more, not ${text}`);
  return n;
})();

const plan = quick
  ? { size: quickSize, warmup: 2, round: 3, rounds: 1 }
  : { size: fullSize, warmup: 15, round: 10, rounds: 3 };
const connections = 32;
/** The floor's SQLite driver: better-sqlite3, or @libsql/client with FLOOR_SQLITE=libsql (to compare the two). */
const floorSqliteDriver =
  process.env.FLOOR_SQLITE === "libsql"
    ? "@libsql/client (FLOOR_SQLITE=libsql)"
    : `better-sqlite3, statements prepared once, synchronous = FULL, reads on ${process.env.FLOOR_READ_THREADS ?? 2} read threads of their own (writes and key lookups on the main thread)`;

type WorkloadId = "W1" | "W2" | "W2c" | "W3" | "W3last" | "W4" | "W5";

/** W2 and W2c: the same GraphQL read, paged by offset and by cursor. */
const isW2 = (w: { id: WorkloadId }) => w.id === "W2" || w.id === "W2c";

interface Workload {
  id: WorkloadId;
  title: string;
  floor: boolean;
  method: "GET" | "POST";
  /** Headers of its own, replacing the API key's (W5: the publishable key and an Origin it names). */
  headers?: Record<string, string>;
  /** A request for the `n`th draw of a deterministic random stream. */
  next(rnd: ReturnType<typeof prng>): { path: string; body?: string };
}

const w2Query = w2Document;

/** A GraphQL peer (PostGraphile 4 or 5): its script, and W2 and W2c in its own spelling. */
interface PeerSpec {
  label: string;
  name: string;
  script: string;
  /** W2: a page of 100 users by offset, with `$offset`. */
  w2: string;
  /** W2c: the page after `$after`, one of its own cursors, with `pageInfo`. */
  w2c: string;
  /** The first user and its cursor: the shape of its cursors (`peerCursors`). */
  cursorProbe: string;
}

/**
 * PostGraphile's spellings of W2 and W2c: the page of users by primary key, each user's 20 newest rank records
 * (`createdAt` then `id`, descending, as the service orders them), their rank with its image (a computed column, see
 * bench/postgraphile.ts) and author. 4.14 with pg-simplify-inflector (`users`, `rank`, `author`, the column `id`); 5
 * with the Amber preset's names (`allUsers`, `rankByRankId`, `userByAuthorId`, the column as `rowId`), aliased to the
 * service's where they differ.
 */
const records4 =
  "rankRecordsByUserId(first: 20, orderBy: [CREATED_AT_DESC, ID_DESC]) { nodes { id type rank { name image { path } } author { name } } }";
const records5 =
  "rankRecordsByUserId(first: 20, orderBy: [CREATED_AT_DESC, ROW_ID_DESC]) { nodes { rowId type rank: rankByRankId { name image { path } } author: userByAuthorId { name } } }";
const peerSpecs: PeerSpec[] = [
  {
    label: "PostGraphile 4",
    name: "postgraphile-pg",
    script: "bench/postgraphile.ts",
    w2: `query W2($offset: Int) { users(first: 100, offset: $offset, orderBy: PRIMARY_KEY_ASC) { nodes { id name ${records4} } } }`,
    w2c: `query W2c($after: Cursor) { users(first: 100, after: $after, orderBy: PRIMARY_KEY_ASC) { pageInfo { endCursor hasNextPage } nodes { id name ${records4} } } }`,
    cursorProbe: "{ users(first: 1, orderBy: PRIMARY_KEY_ASC) { pageInfo { endCursor } nodes { id } } }",
  },
  {
    label: "PostGraphile 5",
    name: "postgraphile5-pg",
    script: "bench/postgraphile5.ts",
    w2: `query W2($offset: Int) { users: allUsers(first: 100, offset: $offset, orderBy: PRIMARY_KEY_ASC) { nodes { rowId name ${records5} } } }`,
    w2c: `query W2c($after: Cursor) { users: allUsers(first: 100, after: $after, orderBy: PRIMARY_KEY_ASC) { pageInfo { endCursor hasNextPage } nodes { rowId name ${records5} } } }`,
    cursorProbe: "{ users: allUsers(first: 1, orderBy: PRIMARY_KEY_ASC) { pageInfo { endCursor } nodes { rowId } } }",
  },
];

/**
 * A peer's cursor of any user, from one it gave: PostGraphile's cursors are base64 JSON naming the row's primary key
 * (4.14: `["primary_key_asc",[1]]`, 5: `["<digest of the order>",1]`); the first user's id in it is replaced.
 */
async function peerCursors(peer: Server, spec: PeerSpec): Promise<(id: number) => string> {
  const response = await fetch(`${peer.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ query: spec.cursorProbe }),
  });
  const text = await response.text();
  const users = (JSON.parse(text) as { data?: { users?: { pageInfo: { endCursor: string }; nodes: W2User[] } } }).data
    ?.users;
  if (!users?.nodes.length) throw new Error(`${spec.label}: no cursor (${text.slice(0, 300)})`);
  const firstId = Number(users.nodes[0].rowId ?? users.nodes[0].id);
  const shape = JSON.parse(Buffer.from(users.pageInfo.endCursor, "base64").toString("utf8")) as unknown;
  const replaced = (value: unknown, id: number): unknown =>
    Array.isArray(value) ? value.map((v) => replaced(v, id)) : value === firstId ? id : value;
  if (JSON.stringify(replaced(shape, -1)) === JSON.stringify(shape))
    throw new Error(`${spec.label}: its cursor ${JSON.stringify(shape)} does not name user ${firstId}`);
  return (id) => Buffer.from(JSON.stringify(replaced(shape, id))).toString("base64");
}

/** A W2 or W2c request of the service's, re-spelt for a peer: the same page of users. */
function peerAdapter(spec: PeerSpec, cursorOf: (id: number) => string) {
  return (request: { path: string; body?: string }, w: Workload) => {
    const variables = JSON.parse(request.body ?? "{}").variables as { offset?: number; after?: string | null };
    if (w.id === "W2")
      return { path: "/graphql", body: JSON.stringify({ query: spec.w2, variables: { offset: variables.offset } }) };
    const after = variables.after == null ? null : cursorOf(cursorUserId(variables.after));
    return { path: "/graphql", body: JSON.stringify({ query: spec.w2c, variables: { after } }) };
  };
}

/** The origin W5's publishable key names, and sends as a browser on the unit's site would. */
const w5Origin = "https://unit.example";

/** The keys the bench creates: a secret key of every scope, and W5's publishable key (`view:user,view:rank`). */
interface Keys {
  key: string;
  publishableKey: string;
}

/** Creates the bench's account with both keys. */
async function createKeys(databaseUrl: string): Promise<Keys & { accountId: number }> {
  const db = await openDatabase(databaseUrl);
  try {
    const { key, accountId } = await createApiKey(db.store, { account: "Bench", scopes: "*" });
    const publishable = await createApiKey(db.store, {
      account: "Bench",
      name: "Roster page",
      scopes: "view:user,view:rank",
      publishable: true,
      origins: [w5Origin],
    });
    return { key, publishableKey: publishable.key, accountId };
  } finally {
    await db.close();
  }
}

function workloads(s: Seeded, size: SeedSize, publishableKey: string): Workload[] {
  const commentPages = Math.ceil(size.comments / 25);
  const rosterPages = Math.ceil(s.userIds.length / 25);
  const byId = [...s.userIds].sort((a, b) => a - b);
  const userPages = Math.floor(s.userIds.length / 100);
  return [
    {
      id: "W1",
      title: "GET /v2/users/{id}/rank-records?include=author,rank.image,document&limit=20",
      floor: true,
      method: "GET",
      next: (rnd) => ({
        path: `/v2/users/${rnd.pick(s.userIds)}/rank-records?include=author,rank.image,document&limit=20`,
      }),
    },
    {
      id: "W2",
      title: `POST /graphql ${w2Query.replace(/^query W2\([^)]*\) /, "")}`,
      floor: true,
      method: "POST",
      next: (rnd) => ({
        path: "/graphql",
        body: JSON.stringify({ query: w2Query, variables: w2Variables(rnd.int(userPages)) }),
      }),
    },
    {
      id: "W2c",
      title: `POST /graphql ${w2cDocument.replace(/^query W2c\([^)]*\) /, "")}`,
      floor: true,
      method: "POST",
      next: (rnd) => {
        const page = rnd.int(userPages);
        return {
          path: "/graphql",
          body: JSON.stringify({
            query: w2cDocument,
            variables: w2cVariables(page === 0 ? null : byId[100 * page - 1]),
          }),
        };
      },
    },
    {
      id: "W3",
      title: "GET /v2/comments?include=author&page={1..N}&limit=25",
      floor: true,
      method: "GET",
      next: (rnd) => ({ path: `/v2/comments?include=author&page=${1 + rnd.int(commentPages)}&limit=25` }),
    },
    {
      id: "W4",
      title: "POST /v2/users/{id}/rank-records",
      floor: true,
      method: "POST",
      next: (rnd) => ({
        path: `/v2/users/${rnd.pick(s.userIds)}/rank-records`,
        body: JSON.stringify({ rank_id: rnd.pick(s.rankIds), type: rnd.int(4), text: "Bench promotion" }),
      }),
    },
    {
      id: "W5",
      title: "GET /v2/users?include=rank&limit=25&page={1..N} (publishable key, Origin: https://unit.example)",
      floor: true,
      method: "GET",
      headers: { authorization: `Bearer ${publishableKey}`, origin: w5Origin },
      next: (rnd) => ({ path: `/v2/users?include=rank&limit=25&page=${1 + rnd.int(rosterPages)}` }),
    },
  ];
}

// ---------------------------------------------------------------------------------------------- processes

interface Server {
  name: string;
  port: number;
  child: ChildProcess;
  url: string;
  /** Count the CPU of the process's descendants too (the workers of `WORKERS>1`). */
  tree?: boolean;
  /** A peer with its own API (PostGraphile): each workload request re-spelt for it, sent without the API key. */
  peer?: {
    /** Its name in the report ("PostGraphile 4"). */
    label: string;
    /** The workloads it answers (W2, W2c). */
    answers: ReadonlySet<WorkloadId>;
    adapt(request: { path: string; body?: string }, w: Workload): { path: string; body?: string };
  };
}

let portSeed = 20_000 + (process.pid % 20_000);
/** Where the servers' output goes: the run's temporary directory. */
let logDir = tmpdir();
const children = new Set<ChildProcess>();

/** The service as `npm start` runs it: the bundle scripts/build.mjs writes (main() rebuilds it first). */
const serviceScript = "dist/server.mjs";
/** `npm start`'s command line (package.json) as words, with `${VAR:-default}` at its default. */
const serviceStartWords = (JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")).scripts.start as string)
  .replace(/\$\{\w+:-([^}]*)\}/g, "$1")
  .split(/\s+/);
/** The node flags `npm start` gives the bundle. */
const serviceNodeFlags = serviceStartWords.filter((word) => word.startsWith("--"));
/** The environment `npm start` sets before node (its `NAME=value` words, e.g. MALLOC_ARENA_MAX). */
const serviceStartEnv: Record<string, string> = {};
for (const word of serviceStartWords) {
  const assignment = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(word);
  if (assignment) serviceStartEnv[assignment[1]] = assignment[2];
}
if (process.env.BENCH_SERVICE_FLAGS) serviceNodeFlags.push(...process.env.BENCH_SERVICE_FLAGS.split(" "));
const serviceCommand = () =>
  [
    ...Object.entries(serviceStartEnv).map(([name, value]) => `${name}=${value}`),
    "node",
    ...serviceNodeFlags,
    serviceScript,
  ].join(" ");

/**
 * Starts `script` as a child process on a free port (built `.mjs` with plain node, TypeScript through tsx); its
 * output goes to `<logDir>/<name>.log` (the service logs a line per request, as in production), and it is ready
 * once it answers HTTP.
 */
async function startServer(
  name: string,
  script: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
  tree = false,
): Promise<Server> {
  const port = portSeed++;
  const logFile = path.join(logDir, `${name}.log`);
  const out = openSync(logFile, "a");
  const loader =
    script === serviceScript
      ? serviceNodeFlags
      : script.endsWith(".mjs")
        ? ["--enable-source-maps"]
        : ["--import", "tsx"];
  const child = spawn(process.execPath, [...nodeArgs, ...loader, script], {
    cwd: root,
    env: {
      ...(script === serviceScript ? serviceStartEnv : {}),
      ...process.env,
      ...env,
      PORT: String(port),
      HOST: "127.0.0.1",
    },
    stdio: ["ignore", out, out],
  });
  closeSync(out);
  children.add(child);
  child.on("exit", () => children.delete(child));
  const server = { name, port, child, url: `http://127.0.0.1:${port}`, tree };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(
        `${name} exited (${child.exitCode}) before listening:\n${readFileSync(logFile, "utf8").slice(-2000)}`,
      );
    if (Date.now() > deadline)
      throw new Error(`${name} did not start in 60 s:\n${readFileSync(logFile, "utf8").slice(-2000)}`);
    try {
      await (await fetch(`${server.url}/`)).arrayBuffer();
      return server;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

async function stopServer(server: Server) {
  if (server.child.exitCode !== null) return;
  const exited = new Promise((resolve) => server.child.once("exit", resolve));
  server.child.kill("SIGTERM");
  await exited;
}

process.on("exit", () => {
  for (const child of children) child.kill("SIGKILL");
});
process.on("SIGINT", () => process.exit(130));

function rssKb(pid: number): number {
  const match = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+)\s+kB/m);
  return match ? Number(match[1]) : 0;
}

/** CPU time (user + system) a process has used, in clock ticks. */
function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** The pids of a process's children (all its threads'), from /proc. */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
      if (text) out.push(...text.split(/\s+/).map(Number));
    }
  } catch {}
  return out;
}

/** CPU ticks of a process and its live descendants, plus the children it has already reaped (cutime + cstime). */
function treeTicks(pid: number): number {
  let total = 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    total += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  } catch {
    return 0;
  }
  for (const child of childrenOf(pid)) total += treeTicks(child);
  return total;
}

/** The CPU ticks a server has used: its own, or with `tree` its whole process tree's (primary and workers). */
const serverTicks = (server: Server) => (server.tree ? treeTicks(server.child.pid!) : cpuTicks(server.child.pid!));

/**
 * CPU ticks of every `postgres` process on this machine (the server's backends, which live as long as the pools'
 * connections do, and its helpers), plus what the postmaster has reaped from backends that ended. 0 without PostgreSQL here.
 */
function postgresTicks(): number {
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    if (comm !== "postgres") continue;
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    total += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  }
  return total;
}

/** All CPUs' busy and total ticks since boot, from /proc/stat (busy = everything but idle and iowait). */
function machineTicks(): { busy: number; total: number } {
  const values = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  const total = values.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - values[3] - values[4], total };
}

/**
 * Waits until `server` is idle (under 10% of a core for 300 ms, at most 60 s): a duration-bound
 * autocannon run ends with requests still in flight, whose work would otherwise spill into the next run.
 */
async function settle(server: Server) {
  const deadline = Date.now() + 60_000;
  let last = serverTicks(server);
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const now = serverTicks(server);
    if (now - last <= 3) return;
    last = now;
  }
}

const loadAverage = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

/** Samples the resident set of `pid` every 200 ms until stopped; returns the peak in MB. */
function watchRss(pid: number) {
  let peak = rssKb(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssKb(pid));
    } catch {}
  }, 200);
  return { stop: () => (clearInterval(timer), peak / 1024) };
}

// ---------------------------------------------------------------------------------------------- load

interface Round {
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  bad: number;
  /** CPU time (user + system, all threads) the server process spent per answered request. */
  cpuMs: number;
  /** CPU time of this process (autocannon, which runs in it) per answered request. */
  loaderCpuMs: number;
  /** CPU time of the machine's `postgres` processes per answered request (0 on SQLite). */
  dbCpuMs: number;
  /** Share of the machine's CPUs busy during the round (all processes, ours and others'). */
  busy: number;
}

/** autocannon's own CPU time (it runs in this process) during the last `load`, in microseconds. */
let lastLoaderCpuUs = 0;
/** The share of the machine's CPUs busy while autocannon ran in the last `load`. */
let lastBusy = NaN;

async function load(
  server: Server,
  key: string,
  w: Workload,
  seedValue: number,
  run: { duration?: number; amount?: number },
  { settleAfter = true }: { settleAfter?: boolean } = {},
): Promise<Result> {
  const rnd = prng(seedValue);
  const next = server.peer ? () => server.peer!.adapt(w.next(rnd), w) : () => w.next(rnd);
  const cpuBefore = process.cpuUsage();
  const machineBefore = machineTicks();
  const result = await autocannon({
    // autocannon ends a run at its next sample tick: at its default of 1 s, a fixed-amount round of a few seconds was
    // measured as if it had lasted to the next whole second (W4 rates came out as the amount over 2, 3, 4 or 5 s).
    url: server.url,
    connections,
    timeout: 120,
    sampleInt: 50,
    ...run,
    headers: {
      ...(server.peer ? {} : { authorization: `Bearer ${key}`, ...w.headers }),
      "content-type": "application/json",
      accept: "application/json",
    },
    requests: [
      {
        method: w.method,
        setupRequest: (request) => ({ ...request, ...next() }),
      },
    ],
  });
  const cpuUsed = process.cpuUsage(cpuBefore);
  lastLoaderCpuUs = cpuUsed.user + cpuUsed.system;
  const machineAfter = machineTicks();
  lastBusy = (machineAfter.busy - machineBefore.busy) / Math.max(1, machineAfter.total - machineBefore.total);
  if (settleAfter) await settle(server);
  return result;
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const ticksPerSecond = 100;

const roundOf = (r: Result, ticks = NaN, extra: { loaderUs?: number; dbTicks?: number; busy?: number } = {}): Round => {
  const answered = r["2xx"] + r.non2xx;
  return {
    rps: answered / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    ok: r["2xx"],
    bad: r.non2xx + r.errors + r.timeouts,
    cpuMs: (ticks * 1000) / ticksPerSecond / answered,
    loaderCpuMs: (extra.loaderUs ?? NaN) / 1000 / answered,
    dbCpuMs: ((extra.dbTicks ?? NaN) * 1000) / ticksPerSecond / answered,
    busy: extra.busy ?? NaN,
  };
};

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const isPostgres = (url: string) => /^postgres(ql)?:\/\//i.test(url);

/** The rows of one statement (the same text on both databases: quoted identifiers, no parameters). */
async function queryRows(databaseUrl: string, sql: string): Promise<Array<Record<string, unknown>>> {
  if (isPostgres(databaseUrl)) {
    const { default: pg } = await import("pg");
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      return (await client.query(sql)).rows;
    } finally {
      await client.end();
    }
  }
  const client = createClient({ url: databaseUrl });
  try {
    return (await client.execute(sql)).rows as unknown as Array<Record<string, unknown>>;
  } finally {
    client.close();
  }
}

const countRows = async (databaseUrl: string, table: string, where = "") =>
  Number((await queryRows(databaseUrl, `SELECT COUNT(*) AS n FROM "${table}"${where ? ` WHERE ${where}` : ""}`))[0].n);

// ---------------------------------------------------------------------------------------------- fairness

/** The same JSON from both, once the origin (the ports differ) and request ids are set aside. */
function normalise(text: string, origins: string[], volatile: string[] = []): unknown {
  let t = text;
  for (const o of origins) t = t.split(o).join("ORIGIN");
  return JSON.parse(t, (k, v) => (k === "request_id" || k === "trace_id" || volatile.includes(k) ? undefined : v));
}

function firstDifference(a: unknown, b: unknown, at = "$"): string | null {
  if (isDeepStrictEqual(a, b)) return null;
  if (a && b && typeof a === "object" && typeof b === "object") {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${at}.${k}`);
      if (d) return d;
    }
  }
  return `${at}: service ${JSON.stringify(a)?.slice(0, 120)} / floor ${JSON.stringify(b)?.slice(0, 120)}`;
}

async function send(
  server: Server,
  key: string,
  method: string,
  p: string,
  body?: string,
  headers: Record<string, string> = {},
) {
  const response = await fetch(server.url + p, {
    method,
    body,
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json",
      ...headers,
    },
  });
  return {
    status: response.status,
    text: await response.text(),
    statements: Number(response.headers.get("x-statements") ?? NaN),
  };
}

/** Sample requests of each floor workload answered identically by both; returns the floor's statements per request. */
async function checkSameJson(
  service: Server,
  floor: Server,
  key: string,
  list: Workload[],
): Promise<Map<WorkloadId, number>> {
  const statements = new Map<WorkloadId, number>();
  for (const w of list.filter((x) => x.floor)) {
    const rnd = prng(7);
    for (let i = 0; i < 3; i++) {
      const { path: p, body } = w.next(rnd);
      const a = await send(service, key, w.method, p, body, w.headers);
      const b = await send(floor, key, w.method, p, body, w.headers);
      const volatile = w.id === "W4" ? ["id", "label", "created_at", "updated_at"] : [];
      const diff =
        a.status !== b.status
          ? `status: service ${a.status} / floor ${b.status}: ${a.text.slice(0, 300)}`
          : firstDifference(normalise(a.text, [service.url], volatile), normalise(b.text, [floor.url], volatile));
      if (a.status !== 200) throw new Error(`${w.id} ${p}: service answered ${a.status}: ${a.text.slice(0, 300)}`);
      if (diff) throw new Error(`${w.id} ${w.method} ${p}: the floor's JSON differs from the service's\n  ${diff}`);
      statements.set(w.id, b.statements);
    }
  }
  return statements;
}

/** A W2 record as either spelling returns it (PostGraphile's `rowId`, its enum names as strings). */
interface W2Record {
  rowId?: number;
  id?: number;
  type: string | number;
  rank: unknown;
  author: unknown;
}

/** A W2 user as either spelling returns it. */
interface W2User {
  rowId?: number;
  id?: number;
  name: string;
  rankRecords?: { nodes: W2Record[] };
  rankRecordsByUserId?: { nodes: W2Record[] };
}

/** W2's answer reduced to what the service's and PostGraphile's spellings share: users (id, name) and their records (id, type as a number, rank, author). */
function w2Essence(text: string): unknown {
  const types = ["PROMOTION", "DEMOTION", "LATERAL", "TRANSFER"];
  const json = JSON.parse(text) as { data?: { users?: { nodes?: W2User[] } }; errors?: unknown[] };
  if (json.errors?.length || !json.data?.users?.nodes) throw new Error(`not an answer: ${text.slice(0, 300)}`);
  return json.data.users.nodes.map((u) => {
    const records = u.rankRecords ?? u.rankRecordsByUserId;
    return {
      id: u.rowId ?? u.id,
      name: u.name,
      records: records!.nodes.map((r) => ({
        id: r.rowId ?? r.id,
        type: typeof r.type === "string" ? types.indexOf(r.type) : r.type,
        rank: r.rank,
        author: r.author,
      })),
    };
  });
}

/** A peer answers W2 samples with the same users, records, ranks and authors as the service (in its own spelling). */
async function checkPeer(service: Server, peer: Server, key: string, w: Workload) {
  const rnd = prng(7);
  for (let i = 0; i < 3; i++) {
    const request = w.next(rnd);
    const a = await send(service, key, w.method, request.path, request.body);
    const adapted = peer.peer!.adapt(request, w);
    const response = await fetch(peer.url + adapted.path, {
      method: w.method,
      body: adapted.body,
      headers: { "content-type": "application/json", accept: "application/json" },
    });
    const b = await response.text();
    if (response.status !== 200)
      throw new Error(`${w.id}: ${peer.name} answered ${response.status}: ${b.slice(0, 300)}`);
    const diff = firstDifference(w2Essence(a.text), w2Essence(b));
    if (diff)
      throw new Error(
        `${w.id} ${request.body}: ${peer.name}'s answer differs from the service's\n  ${diff.replace("/ floor", `/ ${peer.name}`)}`,
      );
  }
}

// ---------------------------------------------------------------------------------------------- measure

interface Measured {
  rounds: Round[];
  rps: number;
  p50: number;
  p99: number;
  cpuMs: number;
  loaderCpuMs: number;
  dbCpuMs: number;
  busy: number;
  bad: number;
  /** W4: rank record rows added minus 2xx answers, summed over the rounds (0 = no write lost or extra). */
  writeGap?: number;
}

const summarise = (rounds: Round[], writeGap?: number): Measured => ({
  rounds,
  rps: median(rounds.map((r) => r.rps)),
  p50: median(rounds.map((r) => r.p50)),
  p99: median(rounds.map((r) => r.p99)),
  cpuMs: median(rounds.map((r) => r.cpuMs)),
  loaderCpuMs: median(rounds.map((r) => r.loaderCpuMs)),
  dbCpuMs: median(rounds.map((r) => r.dbCpuMs)),
  busy: median(rounds.map((r) => r.busy)),
  bad: rounds.reduce((n, r) => n + r.bad, 0),
  writeGap,
});

const log = (line: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);

/**
 * Whether a workload runs a fixed number of requests (the warm-up's rate × the round length, at
 * least two per connection for W4 and one for W2) rather than for a fixed time: writes (W4), so that every answer is in
 * before the rows are counted, and W2, whose requests are slow enough that 32 of them interleaved
 * may all finish after a time-bound round has ended.
 */
const fixedAmount = (w: Workload) => isW2(w) || w.id === "W4";

/** Warm-up then `plan.rounds` rounds per target, interleaving targets round by round. */
async function measure(
  targets: Server[],
  key: string,
  w: Workload,
  databaseUrl: string | null,
  onRound?: (target: Server, phase: "start" | "stop") => void,
) {
  const rounds = new Map<Server, Round[]>(targets.map((t) => [t, []]));
  const gaps = new Map<Server, number>(targets.map((t) => [t, 0]));
  const warmRate = new Map<Server, number>();
  for (const t of targets) {
    // A warm-up of the same length for every target, long enough for the service's JIT: after 5 s (W4: 256 requests)
    // its first round still ran up to 30% below its next two, the floor's did not (bench/FINDINGS.md, "Warm-up"); 15 s
    // is the old warm-up and first round together. W2's requests take up to seconds each: one per connection.
    const warm = await load(t, key, w, 1, isW2(w) ? { amount: connections } : { duration: plan.warmup });
    warmRate.set(t, roundOf(warm).rps);
    log(`${w.id} ${t.name}: warm-up ${roundOf(warm).rps.toFixed(0)} req/s`);
  }
  for (let i = 0; i < plan.rounds; i++) {
    for (const t of targets) {
      const before = w.id === "W4" && databaseUrl ? await countRows(databaseUrl, "RankRecord") : 0;
      onRound?.(t, "start");
      const run = fixedAmount(w)
        ? { amount: Math.max(isW2(w) ? connections : 2 * connections, Math.round(warmRate.get(t)! * plan.round)) }
        : { duration: plan.round };
      const ticks = serverTicks(t);
      const dbTicks = postgresTicks();
      const result = await load(t, key, w, 100 + i, run);
      onRound?.(t, "stop");
      const round = roundOf(result, serverTicks(t) - ticks, {
        loaderUs: lastLoaderCpuUs,
        dbTicks: postgresTicks() - dbTicks,
        busy: lastBusy,
      });
      if (w.id === "W4" && databaseUrl)
        gaps.set(t, gaps.get(t)! + (await countRows(databaseUrl, "RankRecord")) - before - round.ok);
      rounds.get(t)!.push(round);
      log(
        `${w.id} ${t.name} round ${i + 1}: ${round.rps.toFixed(0)} req/s, p50 ${round.p50} ms, p99 ${round.p99} ms, ${round.cpuMs.toFixed(2)} CPU ms/request` +
          ` (autocannon ${round.loaderCpuMs.toFixed(2)}${round.dbCpuMs > 0 ? `, postgres ${round.dbCpuMs.toFixed(2)}` : ""}; machine ${(100 * round.busy).toFixed(0)}% busy)` +
          `${round.bad ? `, ${round.bad} failed` : ""}`,
      );
    }
  }
  return new Map(
    targets.map((t) => [t, summarise(rounds.get(t)!, w.id === "W4" && databaseUrl ? gaps.get(t) : undefined)]),
  );
}

/**
 * Every workload on the service, on the floor for those it answers, and W2 on the peer (PostGraphile) when there is
 * one; the service's resident set is watched during its rounds.
 */
async function measureAll(
  service: Server,
  floor: Server,
  key: string,
  list: Workload[],
  databaseUrl: string,
  counted: Counted[],
  floorSql: Map<WorkloadId, number>,
  storageDir: string,
  peers: Server[] = [],
) {
  const rows: Row[] = [];
  let w1Rss = 0;
  let peakRss = 0;
  for (const w of list) {
    if (only && !only.has(w.id)) continue;
    let watcher: ReturnType<typeof watchRss> | null = null;
    const loadBefore = loadAverage();
    const withPeers = peers.filter((p) => p.peer!.answers.has(w.id));
    // W5: the same build again with the shared response cache off, beside the one with it on (the default).
    const uncached =
      w.id === "W5"
        ? await startServer(`service-nocache${isPostgres(databaseUrl) ? "-pg" : ""}`, serviceScript, {
            ...serviceEnv(databaseUrl, storageDir),
            RESPONSE_CACHE: "off",
          })
        : null;
    if (uncached) {
      await checkSameJson(uncached, floor, key, [w]);
      log(`${w.id}: the floor answers the same JSON as the service with RESPONSE_CACHE=off`);
    }
    const targets = [service, ...(uncached ? [uncached] : []), ...(w.floor ? [floor] : []), ...withPeers];
    const commitsBefore = w.id === "W4" && !isPostgres(databaseUrl) ? await commitsOf(service) : null;
    const measured = await measure(targets, key, w, databaseUrl, (t, phase) => {
      if (t !== service) return;
      if (phase === "start") watcher = watchRss(service.child.pid!);
      else {
        const peak = watcher!.stop();
        peakRss = Math.max(peakRss, peak);
        if (w.id === "W1") w1Rss = Math.max(w1Rss, peak);
      }
    });
    rows.push({
      w,
      service: measured.get(service)!,
      floor: w.floor ? measured.get(floor) : undefined,
      peers: withPeers.map((p) => ({ name: p.peer!.label, m: measured.get(p)! })),
      serviceSql: counted[list.indexOf(w)].statements,
      floorSql: w.floor ? floorSql.get(w.id) : undefined,
      load: [loadBefore, loadAverage()],
      uncached: uncached ? measured.get(uncached) : undefined,
    });
    if (uncached) await stopServer(uncached);
    if (commitsBefore) {
      const after = await commitsOf(service);
      rows.at(-1)!.commits = {
        transactions: after.transactions - commitsBefore.transactions,
        commits: after.commits - commitsBefore.commits,
      };
    }
    if (w.id === "W4") {
      rows.at(-1)!.webhook = await measureWebhook(service, key, w, databaseUrl, measured.get(service)!);
      const automations = await measureAutomations(service, key, w, databaseUrl, measured.get(service)!);
      rows.at(-1)!.automations = automations;
      if (!automationEffectsOk(automations)) {
        automationEffectsWrong = true;
        console.error(
          `\nW4 with automations: AN EFFECT LOST, REPEATED OR NOT DONE: ${automationEffects(automations)}\n`,
        );
      } else log(`W4 + automations: ${automationEffects(automations)}`);
      log(`W4 + automations: ${automationTimings(automations)}`);
    }
  }
  return { rows, w1Rss, peakRss };
}

/** W4 again on the service with one webhook subscribed to `rankrecord.created`, delivering to a sink in this process. */
interface WebhookPass {
  rps: number;
  /** Rank records created during the pass, and the distinct deliveries the sink received for them. */
  created: number;
  delivered: number;
  /** Deliveries received more than once (the same `X-Muster-Delivery`). */
  repeated: number;
  /** From the last write's answer to the last delivery. */
  drainMs: number;
}

async function measureWebhook(
  service: Server,
  key: string,
  w: Workload,
  databaseUrl: string,
  plain: Measured,
): Promise<WebhookPass> {
  const seen = new Set<string>();
  let repeated = 0;
  let lastAt = 0;
  const sink = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      const id = String(request.headers["x-muster-delivery"]);
      if (request.headers["x-muster-event"] === "rankrecord.created") {
        if (seen.has(id)) repeated++;
        seen.add(id);
        lastAt = performance.now();
      }
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
  const port = (sink.address() as AddressInfo).port;
  const created = await send(
    service,
    key,
    "POST",
    "/v2/webhooks",
    JSON.stringify({ url: `http://127.0.0.1:${port}/hook`, events: ["rankrecord.created"] }),
  );
  if (created.status !== 200)
    throw new Error(`W4 webhook pass: creating the webhook answered ${created.status}: ${created.text.slice(0, 300)}`);
  const webhookId = JSON.parse(created.text).data.id as number;
  try {
    const before = await countRows(databaseUrl, "RankRecord");
    const rounds: Round[] = [];
    const amount = Math.max(2 * connections, Math.round(plain.rps * plan.round));
    for (let i = 0; i < plan.rounds; i++) {
      const result = await load(service, key, w, 200 + i, { amount });
      rounds.push(roundOf(result));
      log(
        `W4 + webhook round ${i + 1}: ${rounds.at(-1)!.rps.toFixed(0)} req/s (W4 alone: ${plain.rps.toFixed(0)}); ${seen.size} delivered so far`,
      );
    }
    const ended = performance.now();
    const added = (await countRows(databaseUrl, "RankRecord")) - before;
    const deadline = Date.now() + 180_000;
    while (seen.size < added && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    return {
      rps: median(rounds.map((r) => r.rps)),
      created: added,
      delivered: seen.size,
      repeated,
      drainMs: Math.max(0, lastAt - ended),
    };
  } finally {
    await send(service, key, "DELETE", `/v2/webhooks/${webhookId}`);
    await new Promise((resolve) => sink.close(resolve));
  }
}

/**
 * W4 again on the service with three enabled automations on `rankrecord.created` (issue 44): a `webhook` to a sink in
 * this process, a `message` to the event's person and an `update` setting the new record's `text`. The same number of
 * requests per round as the webhook pass, then a bounded wait until every automation has a finished run for every
 * record created; then every effect is counted.
 */
interface AutomationPass {
  rps: number;
  rounds: Round[];
  /** Server CPU per answered request during the rounds only, and over the rounds and the drain after them. */
  cpuMs: number;
  cpuWithDrainMs: number;
  created: number;
  /** From the end of the last round to the last automation's last run finished (NaN: not within the bound). */
  drainMs: number;
  drained: boolean;
  /** Per automation: runs by status. */
  runs: Array<{
    name: string;
    succeeded: number;
    other: Record<string, number>;
    /** Mean wall time of a run (its `duration_ms`), of its action (the outcome's), and runs finished per second. */
    meanRunMs: number;
    meanActionMs: number;
    runsPerS: number;
  }>;
  messages: number;
  delivered: number;
  repeated: number;
  /** Records of the pass whose text the update set, and `rankrecord.updated` events automations wrote for them. */
  updated: number;
  updateEvents: number;
  /** SQLite: the service's write transactions and COMMITs over the rounds and the drain (W4's and the runner's). */
  commits?: Commits;
}

/** How long the automation pass waits for the runs to cover every record (`BENCH_AUTOMATION_DRAIN_S`). */
const automationDrainS = Number(process.env.BENCH_AUTOMATION_DRAIN_S ?? 600);

const automatedText = "Bench promotion (automated)";

/** The counts of an automation pass's effects, as Targets and the log give them. */
function automationEffects(a: AutomationPass): string {
  const runs = a.runs
    .map(
      (r) =>
        `${r.name}: ${r.succeeded} runs succeeded${Object.entries(r.other)
          .map(([status, n]) => `, ${n} ${status}`)
          .join("")}`,
    )
    .join("; ");
  return (
    `${a.created} records created; ${runs}; ${a.messages} messages; ${a.delivered} webhooks received (distinct X-Muster-Delivery), ${a.repeated} repeated; ` +
    `${a.updated} records updated, ${a.updateEvents} update events; ` +
    (a.drained
      ? `the backlog drained ${f1(a.drainMs / 1000)} s after the last write`
      : `**not drained within ${automationDrainS} s**`)
  );
}

/** Where an automation pass's time went, per automation: runs per second, mean run and action wall time. */
const automationTimings = (a: AutomationPass) =>
  a.runs
    .map(
      (r) =>
        `${r.name}: ${f0(r.runsPerS)} runs/s, a run ${f1(r.meanRunMs)} ms of which its action ${f1(r.meanActionMs)} ms`,
    )
    .join("; ") +
  (a.commits
    ? `; the service's db_write_transactions_total grew by ${f1(a.commits.transactions / a.created)} per record created (plain W4: 1), its db_write_commits_total by ${f1(a.commits.commits / a.created)}`
    : "");

/** Whether an automation pass lost, repeated or left undone an effect: the run then exits 1 once its report is written. */
let automationEffectsWrong = false;

const automationEffectsOk = (a: AutomationPass) =>
  a.drained &&
  a.runs.every((r) => r.succeeded === a.created && Object.keys(r.other).length === 0) &&
  a.messages === a.created &&
  a.delivered === a.created &&
  a.repeated === 0 &&
  a.updated === a.created &&
  a.updateEvents === a.created;

async function measureAutomations(
  service: Server,
  key: string,
  w: Workload,
  databaseUrl: string,
  plain: Measured,
): Promise<AutomationPass> {
  const seen = new Set<string>();
  let repeated = 0;
  const sink = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      const id = String(request.headers["x-muster-delivery"]);
      if (seen.has(id)) repeated++;
      seen.add(id);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
  const port = (sink.address() as AddressInfo).port;
  const triggers = ["rankrecord.created"];
  const definitions = [
    {
      name: "Bench webhook",
      triggers,
      actions: [
        {
          type: "webhook",
          url: `http://127.0.0.1:${port}/automation`,
          body: { record: "{{ data.id }}", text: "{{ user.name }} received {{ data.text }}" },
        },
      ],
    },
    {
      name: "Bench message",
      triggers,
      actions: [{ type: "message", to: { kind: "person" }, text: "Congratulations, {{ user.name }}!" }],
    },
    {
      name: "Bench update",
      triggers,
      actions: [{ type: "update", target: "record", set: { text: automatedText } }],
    },
  ];
  const ids: number[] = [];
  try {
    for (const definition of definitions) {
      const created = await send(service, key, "POST", "/v2/automations", JSON.stringify(definition));
      if (created.status !== 200)
        throw new Error(
          `W4 automation pass: creating "${definition.name}" answered ${created.status}: ${created.text.slice(0, 300)}`,
        );
      ids.push(JSON.parse(created.text).data.id as number);
    }
    const [firstRecord] = await queryRows(databaseUrl, `SELECT COALESCE(MAX(id), 0) AS n FROM "RankRecord"`);
    const [firstEvent] = await queryRows(databaseUrl, `SELECT COALESCE(MAX(id), 0) AS n FROM "ChangeEvent"`);
    const recordsAfter = `id > ${Number(firstRecord.n)}`;
    const messagesBefore = await countRows(databaseUrl, "Message");
    const commitsBefore = isPostgres(databaseUrl) ? null : await commitsOf(service);
    const ticksBefore = serverTicks(service);
    const rounds: Round[] = [];
    const amount = Math.max(2 * connections, Math.round(plain.rps * plan.round));
    for (let i = 0; i < plan.rounds; i++) {
      const ticks = serverTicks(service);
      // No settling after a round: it would wait for the automations' backlog, which is what this pass measures.
      const result = await load(service, key, w, 300 + i, { amount }, { settleAfter: false });
      rounds.push(roundOf(result, serverTicks(service) - ticks));
      log(
        `W4 + automations round ${i + 1}: ${rounds.at(-1)!.rps.toFixed(0)} req/s, ${rounds.at(-1)!.cpuMs.toFixed(2)} CPU ms/request ` +
          `(W4 alone: ${plain.rps.toFixed(0)} req/s, ${plain.cpuMs.toFixed(2)} ms); ${seen.size} webhooks received so far`,
      );
    }
    const ended = performance.now();
    const created = await countRows(databaseUrl, "RankRecord", recordsAfter);
    const finished = `"automationId" IN (${ids.join(", ")}) AND status <> 'running'`;
    const deadline = ended + automationDrainS * 1000;
    let drained = false;
    let lastLog = ended;
    while (performance.now() < deadline) {
      const done = await countRows(databaseUrl, "AutomationRun", finished);
      if (done >= ids.length * created && seen.size >= created) {
        drained = true;
        break;
      }
      if (performance.now() - lastLog > 10_000) {
        lastLog = performance.now();
        log(`W4 + automations: ${done} of ${ids.length * created} runs finished, ${seen.size} webhooks received`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const drainMs = drained ? performance.now() - ended : NaN;
    const answered = rounds.reduce((n, r) => n + r.ok + r.bad, 0);
    const cpuWithDrainMs = ((serverTicks(service) - ticksBefore) * 1000) / ticksPerSecond / answered;
    const commitsAfter = commitsBefore ? await commitsOf(service) : null;
    // A moment for a repeat the runner might still send (there should be none).
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const statuses = await queryRows(
      databaseUrl,
      `SELECT "automationId" AS automation, status, COUNT(*) AS n FROM "AutomationRun" WHERE "automationId" IN (${ids.join(", ")}) GROUP BY "automationId", status`,
    );
    const timings = await queryRows(
      databaseUrl,
      `SELECT "automationId" AS automation, "durationMs" AS ms, outcomes, "createdAt" AS started, "updatedAt" AS ended FROM "AutomationRun" WHERE "automationId" IN (${ids.join(", ")})`,
    );
    const runs = definitions.map((d, i) => {
      const other: Record<string, number> = {};
      let succeeded = 0;
      for (const row of statuses.filter((r) => Number(r.automation) === ids[i]))
        if (row.status === "succeeded") succeeded = Number(row.n);
        else other[String(row.status)] = Number(row.n);
      const mine = timings.filter((r) => Number(r.automation) === ids[i]);
      const actionMs = mine.map((r) => {
        const outcomes = (typeof r.outcomes === "string" ? JSON.parse(r.outcomes) : r.outcomes) as Array<{
          duration_ms: number;
        }> | null;
        return outcomes?.reduce((n, o) => n + o.duration_ms, 0) ?? 0;
      });
      const time = (v: unknown) =>
        v instanceof Date ? v.getTime() : typeof v === "number" ? v : Date.parse(String(v).replace(" ", "T"));
      const span = Math.max(...mine.map((r) => time(r.ended))) - Math.min(...mine.map((r) => time(r.started)));
      return {
        name: d.name,
        succeeded,
        other,
        meanRunMs: mine.reduce((n, r) => n + Number(r.ms ?? 0), 0) / mine.length,
        meanActionMs: actionMs.reduce((n, x) => n + x, 0) / mine.length,
        runsPerS: (mine.length * 1000) / span,
      };
    });
    return {
      rps: median(rounds.map((r) => r.rps)),
      rounds,
      cpuMs: median(rounds.map((r) => r.cpuMs)),
      cpuWithDrainMs,
      created,
      drainMs,
      drained,
      runs,
      messages: (await countRows(databaseUrl, "Message")) - messagesBefore,
      delivered: seen.size,
      repeated,
      updated: await countRows(databaseUrl, "RankRecord", `${recordsAfter} AND text = '${automatedText}'`),
      updateEvents: await countRows(
        databaseUrl,
        "ChangeEvent",
        `id > ${Number(firstEvent.n)} AND type = 'rankrecord.updated' AND "automationRunId" IS NOT NULL`,
      ),
      commits:
        commitsBefore && commitsAfter
          ? {
              transactions: commitsAfter.transactions - commitsBefore.transactions,
              commits: commitsAfter.commits - commitsBefore.commits,
            }
          : undefined,
    };
  } finally {
    for (const id of ids) await send(service, key, "DELETE", `/v2/automations/${id}`);
    await new Promise((resolve) => sink.close(resolve));
  }
}

// ---------------------------------------------------------------------------------------------- report

interface Row {
  w: Workload;
  service: Measured;
  floor?: Measured;
  /** PostGraphile 4 and 5, W2 and W2c on PostgreSQL only. */
  peers?: Array<{ name: string; m: Measured }>;
  /** W5: the service with RESPONSE_CACHE=off (`service` is the one with the cache on). */
  uncached?: Measured;
  serviceSql: number;
  floorSql?: number;
  /** /proc/loadavg (1, 5, 15 min) when the workload started and ended: other work on the machine shows here. */
  load?: [string, string];
  /** W4 only: the same writes with a webhook subscribed to them. */
  webhook?: WebhookPass;
  /** W4 only: the same writes with three automations triggered by them. */
  automations?: AutomationPass;
  /** W4 on SQLite: the service's write transactions and the COMMITs they took (group commit), warm-up and rounds. */
  commits?: Commits;
}

interface Commits {
  transactions: number;
  commits: number;
}

/** The service's counts of write transactions and COMMITs, from its /metrics (they grow apart with group commit). */
async function commitsOf(server: Server): Promise<Commits> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const counter = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, "m").exec(text)?.[1] ?? NaN);
  return { transactions: counter("db_write_transactions_total"), commits: counter("db_write_commits_total") };
}

const f0 = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : "–");
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : "–");
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : "–");

/** CPU ms per request of one system: its server process, and on PostgreSQL the `postgres` processes' beside it. */
const cpuCell = (m: Measured, postgres: boolean) => (postgres ? `${f2(m.cpuMs)} / ${f2(m.dbCpuMs)}` : f2(m.cpuMs));

/**
 * The results table: req/s with CPU ms per request beside it for each system (server, and on PostgreSQL the database's
 * processes); a peer's columns (PostGraphile 4 and 5) only where one ran (W2 and W2c on PostgreSQL). W5 has a table
 * of its own (`w5Table`): its service ran twice, with the response cache on and off.
 */
function table(all: Row[], postgres = false): string {
  const rows = all.filter((r) => !r.uncached);
  const peerNames = [...new Set(rows.flatMap((r) => (r.peers ?? []).map((p) => p.name)))];
  const cpuHead = postgres ? "CPU ms per request (server / PostgreSQL)" : "CPU ms per request";
  const lines = [
    `| Workload | Service req/s | Service ${cpuHead} | Floor req/s | Floor ${cpuHead} | Service ÷ floor |` +
      peerNames.map((n) => ` ${n} req/s | ${n} ${cpuHead} | Service ÷ ${n} |`).join("") +
      " Service p50 / p99 (ms) | Floor p50 / p99 (ms) |" +
      peerNames.map((n) => ` ${n} p50 / p99 (ms) |`).join("") +
      " p99 service ÷ floor | SQL per request (service / floor) | Failed (service / floor" +
      peerNames.map((n) => ` / ${n}`).join("") +
      ") | Load avg (start → end) |",
    "|---|---:|---:|---:|---:|---:|" +
      peerNames.map(() => "---:|---:|---:|").join("") +
      "---:|---:|" +
      peerNames.map(() => "---:|").join("") +
      "---:|---:|---:|---|",
  ];
  const or = <T>(m: Measured | undefined, f: (m: Measured) => T) => (m ? f(m) : "–");
  for (const { w, service, floor, peers, serviceSql, floorSql, load } of rows) {
    const peerOf = (name: string) => peers?.find((p) => p.name === name)?.m;
    lines.push(
      `| ${w.id} | ${f0(service.rps)} | ${cpuCell(service, postgres)} | ${or(floor, (x) => f0(x.rps))} | ${or(floor, (x) => cpuCell(x, postgres))} | ${or(floor, (x) => f2(service.rps / x.rps))} |` +
        peerNames
          .map((n) => {
            const x = peerOf(n);
            return ` ${or(x, (m) => f0(m.rps))} | ${or(x, (m) => cpuCell(m, postgres))} | ${or(x, (m) => f2(service.rps / m.rps))} |`;
          })
          .join("") +
        ` ${f0(service.p50)} / ${f0(service.p99)} | ${or(floor, (x) => `${f0(x.p50)} / ${f0(x.p99)}`)} |` +
        peerNames.map((n) => ` ${or(peerOf(n), (x) => `${f0(x.p50)} / ${f0(x.p99)}`)} |`).join("") +
        ` ${or(floor, (x) => f1(service.p99 / x.p99))} | ${serviceSql} / ${floorSql ?? "–"} | ${service.bad} / ${or(floor, (x) => x.bad)}` +
        peerNames.map((n) => ` / ${or(peerOf(n), (x) => x.bad)}`).join("") +
        ` | ${load ? `${load[0]} → ${load[1]}` : "–"} |`,
    );
  }
  const w4 = all.find((r) => r.automations);
  if (w4) lines.push("", w4PassesTable(w4));
  const w5 = all.find((r) => r.uncached);
  if (w5) lines.push("", w5Table(w5, postgres));
  return lines.join("\n");
}

/** W4 on the service alone, with a webhook, and with three automations (the same number of requests per round). */
function w4PassesTable(r: Row): string {
  const plain = r.service;
  const a = r.automations!;
  const hook = r.webhook;
  const p = (rounds: Round[], at: "p50" | "p99") => f0(median(rounds.map((x) => x[at])));
  return [
    "| W4 on the service | req/s | CPU ms per request (rounds) | CPU ms per request (rounds + drain) | ÷ W4 req/s | W4 CPU ÷ its CPU (rounds + drain) | Drain after the last write (s) | p50 / p99 (ms) | Failed | Effects lost or repeated |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    `| W4 | ${f0(plain.rps)} | ${f2(plain.cpuMs)} | – | 1.00 | 1.00 | – | ${f0(plain.p50)} / ${f0(plain.p99)} | ${plain.bad} | writes: ${plain.writeGap ?? "–"} (rows − 2xx) |`,
    ...(hook
      ? [
          `| W4 + webhook | ${f0(hook.rps)} | – | – | ${f2(hook.rps / plain.rps)} | – | ${f1(hook.drainMs / 1000)} | – | – | ${hook.created - hook.delivered} lost, ${hook.repeated} repeated |`,
        ]
      : []),
    `| W4 + automations | ${f0(a.rps)} | ${f2(a.cpuMs)} | ${f2(a.cpuWithDrainMs)} | ${f2(a.rps / plain.rps)} | ${f2(plain.cpuMs / a.cpuWithDrainMs)} | ` +
      `${a.drained ? f1(a.drainMs / 1000) : `> ${automationDrainS}`} | ${p(a.rounds, "p50")} / ${p(a.rounds, "p99")} | ${a.rounds.reduce((n, x) => n + x.bad, 0)} | ` +
      `${automationEffectsOk(a) ? "none" : `**not shown to be none:** ${automationEffects(a).replaceAll("**", "")}`} |`,
  ].join("\n");
}

/** W5, the public roster page: the service with the shared response cache on, with it off, and the floor. */
function w5Table(r: Row, postgres: boolean): string {
  const cached = r.service;
  const uncached = r.uncached!;
  const floor = r.floor!;
  const cpuHead = postgres ? "CPU ms per request (server / PostgreSQL)" : "CPU ms per request";
  return [
    `| Workload | Cached req/s | Cached ${cpuHead} | Uncached req/s | Uncached ${cpuHead} | Floor req/s | Floor ${cpuHead} | Cached ÷ uncached req/s | Uncached ÷ cached CPU per request | Uncached ÷ floor req/s | p50 / p99 ms (cached / uncached / floor) | SQL per request (uncached / floor) | Failed (cached / uncached / floor) | Load avg (start → end) |`,
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    `| ${r.w.id} | ${f0(cached.rps)} | ${cpuCell(cached, postgres)} | ${f0(uncached.rps)} | ${cpuCell(uncached, postgres)} | ${f0(floor.rps)} | ${cpuCell(floor, postgres)} | ` +
      `${f2(cached.rps / uncached.rps)} | ${f2(uncached.cpuMs / cached.cpuMs)} | ${f2(uncached.rps / floor.rps)} | ` +
      `${f0(cached.p50)} / ${f0(cached.p99)} · ${f0(uncached.p50)} / ${f0(uncached.p99)} · ${f0(floor.p50)} / ${f0(floor.p99)} | ` +
      `${r.serviceSql} / ${r.floorSql ?? "–"} | ${cached.bad} / ${uncached.bad} / ${floor.bad} | ${r.load ? `${r.load[0]} → ${r.load[1]}` : "–"} |`,
  ].join("\n");
}

function targetsMet(rows: Row[], rssMb: number): string[] {
  const by = (id: WorkloadId) => rows.find((r) => r.w.id === id);
  const mark = (ok: boolean) => (ok ? "met" : "**missed**");
  /**
   * `a`'s throughput against `b`'s: the median ratio, then each round's (the two run one after the other in each
   * round, so their spread shows how far the median can be trusted), and against the floor the ratio of CPU per request.
   */
  const throughput = (a: Measured, b: Measured, min: number, against = "floor") => {
    const ratio = a.rps / b.rps;
    const rounds = a.rounds.map((r, i) => f2(r.rps / (b.rounds[i]?.rps ?? NaN))).join(", ");
    const cpu = against === "floor" ? ` (floor ÷ service CPU per request: ${f2(b.cpuMs / a.cpuMs)}×)` : "";
    return `throughput ≥ ${min}× ${against} — ${f2(ratio)}× (rounds ${rounds}) — ${mark(ratio >= min)}${cpu}`;
  };
  const out: string[] = [];
  for (const id of ["W1", "W3"] as const) {
    const r = by(id);
    if (!r) continue;
    const p99 = r.service.p99 / r.floor!.p99;
    out.push(`- ${id}: ${throughput(r.service, r.floor!, 0.6)}; p99 ≤ 3× floor — ${f1(p99)}× — ${mark(p99 <= 3)}`);
  }
  for (const id of ["W2", "W2c"] as const) {
    const w2 = by(id);
    if (!w2) continue;
    out.push(
      `- ${id}: ${throughput(w2.service, w2.floor!, 0.5)}; ≤ 5 SQL statements — ${w2.serviceSql} — ${mark(w2.serviceSql <= 5)}`,
    );
    for (const p of w2.peers ?? []) out.push(`- ${id}: ${throughput(w2.service, p.m, 1.5, p.name)}`);
  }
  const w4 = by("W4");
  if (w4) {
    out.push(
      `- W4: ${throughput(w4.service, w4.floor!, 0.5)}; no write lost (rows added − 2xx answers: service ${w4.service.writeGap}, floor ${w4.floor!.writeGap}) — ${mark(w4.service.writeGap === 0 && w4.floor!.writeGap === 0)}`,
    );
  }
  if (w4?.commits) {
    const { transactions, commits } = w4.commits;
    out.push(
      `- W4 on the service: ${f0(transactions)} write transactions in ${f0(commits)} COMMITs (group commit), ${f1(transactions / commits)} writes per COMMIT`,
    );
  }
  const hooked = w4?.webhook;
  if (hooked) {
    const ratio = hooked.rps / w4.service.rps;
    out.push(
      `- W4 with a webhook on \`rankrecord.created\`: throughput ≥ 0.8× W4 without — ${f2(ratio)}× (${f0(hooked.rps)} req/s) — ${mark(ratio >= 0.8)}; ` +
        `0 deliveries lost — ${hooked.delivered} of ${hooked.created} created delivered, ${hooked.repeated} repeated, the last ${f1(hooked.drainMs / 1000)} s after the last write — ${mark(hooked.delivered === hooked.created)}`,
    );
  }
  const automated = w4?.automations;
  if (automated) {
    const ratio = automated.rps / w4.service.rps;
    const rounds = automated.rounds.map((r, i) => f2(r.rps / (w4.service.rounds[i]?.rps ?? NaN))).join(", ");
    const cpu = w4.service.cpuMs / automated.cpuMs;
    const cpuWithDrain = w4.service.cpuMs / automated.cpuWithDrainMs;
    out.push(
      `- W4 with three automations on \`rankrecord.created\` (webhook, message, update): ≥ 0.8× W4 without, judged on req/s and on CPU per request — ` +
        `${f2(ratio)}× req/s (${f0(automated.rps)} against ${f0(w4.service.rps)}; rounds ${rounds}), ` +
        `${f2(cpu)}× on CPU per request during the rounds (${f2(automated.cpuMs)} against ${f2(w4.service.cpuMs)} ms), ` +
        `${f2(cpuWithDrain)}× with the drain after them (${f2(automated.cpuWithDrainMs)} ms) — ${mark(ratio >= 0.8 && cpuWithDrain >= 0.8)}`,
      `- W4 with automations: none lost or repeated — ${automationEffects(automated)} — ${mark(automationEffectsOk(automated))}`,
      `- W4 with automations, where the runs' time went (wall time, from the run log): ${automationTimings(automated)}`,
    );
  }
  const w5 = by("W5");
  if (w5?.uncached) {
    const [cached, uncached, floor] = [w5.service, w5.uncached, w5.floor!];
    const rps = cached.rps / uncached.rps;
    const cpu = uncached.cpuMs / cached.cpuMs;
    const rounds = cached.rounds.map((r, i) => f2(r.rps / (uncached.rounds[i]?.rps ?? NaN))).join(", ");
    out.push(
      `- W5 (publishable key): cached ≥ 5× uncached, judged on req/s and on CPU per request, both — ${f2(rps)}× req/s (rounds ${rounds}), ` +
        `${f2(cpu)}× less CPU per request (${f2(cached.cpuMs)} against ${f2(uncached.cpuMs)} ms) — ${mark(rps >= 5 && cpu >= 5)}`,
    );
    const w1 = by("W1");
    const ratio = uncached.rps / floor.rps;
    const w5Rounds = uncached.rounds.map((r, i) => f2(r.rps / (floor.rounds[i]?.rps ?? NaN))).join(", ");
    const cpuNote = `floor ÷ uncached CPU per request ${f2(floor.cpuMs / uncached.cpuMs)}×${w1 ? `, W1's ${f2(w1.floor!.cpuMs / w1.service.cpuMs)}×` : ""}`;
    out.push(
      w1
        ? `- W5: uncached ÷ floor ≥ W1's service ÷ floor (${f2(w1.service.rps / w1.floor!.rps)}×), judged on req/s — ${f2(ratio)}× (rounds ${w5Rounds}) — ${mark(ratio >= w1.service.rps / w1.floor!.rps)} (${cpuNote})`
        : `- W5: uncached ÷ floor — ${f2(ratio)}× (rounds ${w5Rounds}); W1 not measured in this run, so not judged (${cpuNote})`,
    );
  }
  if (by("W1")) out.push(`- Service RSS under W1 < 250 MB — peak ${f0(rssMb)} MB — ${mark(rssMb < 250)}`);
  out.push(...floorsSlower(rows));
  return out;
}

/**
 * Issue 45: a floor is the fastest server we can write, so one slower than the service (fewer req/s, or more CPU per
 * request, W5 against the uncached service) is a bug of the bench: said in Targets, logged, and the run exits 1.
 */
function floorsSlower(rows: Row[]): string[] {
  const slower: string[] = [];
  for (const r of rows) {
    if (!r.floor) continue;
    const service = r.uncached ?? r.service;
    if (r.floor.rps < service.rps || r.floor.cpuMs > service.cpuMs)
      slower.push(
        `${r.w.id} (floor ${f0(r.floor.rps)} req/s, ${f2(r.floor.cpuMs)} CPU ms per request; service${r.uncached ? " uncached" : ""} ${f0(service.rps)} req/s, ${f2(service.cpuMs)} ms)`,
      );
  }
  if (!slower.length)
    return [
      "- Every floor at least as fast as the service, in req/s and in CPU per request (W5: the uncached service) — met",
    ];
  floorSlowerSeen = true;
  const line = `- **FLOOR SLOWER THAN SERVICE**: ${slower.join("; ")} — **missed** (a bug of the bench: fix the floor)`;
  console.error(`\n${line}\n`);
  return [line];
}

/** Whether any floor was slower than the service in this run: the run then exits 1 once its report is written. */
let floorSlowerSeen = false;

/** The machine's facts; `startSpeed`: `machineSpeedMs()` when the run began, set beside its value now. */
function machine(startSpeed: number): string[] {
  const cpu =
    readFileSync("/proc/cpuinfo", "utf8")
      .match(/^model name\s*:\s*(.+)$/m)?.[1]
      ?.trim() ?? "unknown";
  return [
    `- Date: ${new Date().toISOString()}`,
    `- CPUs (nproc): ${availableParallelism()} — ${cpu}`,
    `- Memory: ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `- Node: ${process.version}; autocannon in the bench process on the same machine, ${connections} connections`,
    `- Machine speed: a fixed JavaScript task (bench/machine-speed.ts, lower is faster) took ${f1(startSpeed)} ms when the run began and ` +
      `${f1(machineSpeedMs())} ms when it ended. Compare two runs' figures only when these are close in both.`,
  ];
}

// ---------------------------------------------------------------------------------------------- main

/** A throwaway PostgreSQL client on `url` (the `pg` driver the service's adapter uses). */
async function pgQuery(url: string, sql: string): Promise<void> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Whether to bench PostgreSQL: a server given or listening locally, and a service that opens `postgresql://` URLs. */
async function postgresPlan(): Promise<{ base: string } | { skipped: string }> {
  const explicit = process.env.BENCH_POSTGRES_URL;
  const parsed = new URL(explicit || "postgresql://127.0.0.1:5432/test");
  // Like psql, the user defaults to PGUSER or the login name (the pg driver needs one).
  if (!parsed.username) parsed.username = process.env.PGUSER || userInfo().username;
  const base = parsed.toString();
  if (!explicit) {
    const listening = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: "127.0.0.1", port: 5432 });
      socket.setTimeout(1000, () => (socket.destroy(), resolve(false)));
      socket.on("connect", () => (socket.end(), resolve(true)));
      socket.on("error", () => resolve(false));
    });
    if (!listening)
      return { skipped: "PostgreSQL: skipped (no BENCH_POSTGRES_URL and nothing listening on 127.0.0.1:5432)" };
  }
  const prismaModule = (await import("../src/db/prisma.ts")) as Record<string, unknown>;
  if (typeof prismaModule.isPostgresUrl !== "function") return { skipped: "PostgreSQL: skipped (not supported yet)" };
  try {
    await pgQuery(base, "SELECT 1");
  } catch (error) {
    return {
      skipped: `PostgreSQL: skipped (${base.replace(/\/\/[^@]*@/, "//***@")} could not be reached: ${(error as Error).message.split("\n")[0]})`,
    };
  }
  return { base };
}

/** What the PostgreSQL pass reports: its section of the results, and its lines under Targets. */
interface PostgresReport {
  text: string;
  targets: string[];
}

/** PostgreSQL: a fresh database beside `base`, seeded the same way; the service and the floor side by side, as on SQLite. */
async function benchPostgres(base: string): Promise<PostgresReport> {
  return withSeededPostgres(base, async ({ databaseUrl, storageDir, key, publishableKey, seeded }) => {
    log(`PostgreSQL: seeded in ${(seeded.ms / 1000).toFixed(1)} s`);
    const list = workloads(seeded, plan.size, publishableKey);
    const counted = await countStatements(
      databaseUrl,
      key,
      storageDir,
      list.map((w) => ({ method: w.method, headers: w.headers, ...w.next(prng(3)) })),
    );
    for (const [i, c] of counted.entries()) {
      if (c.status !== 200) throw new Error(`${list[i].id} answered ${c.status} in-process on PostgreSQL`);
      log(`PostgreSQL ${list[i].id}: ${c.statements} SQL statements in the service`);
    }
    const service = await startServer("service-pg", serviceScript, serviceEnv(databaseUrl, storageDir));
    let floor: Server | null = null;
    const peers: Server[] = [];
    const peerNotes: string[] = [];
    try {
      floor = await startServer("floor-pg", "bench/floor.ts", { DATABASE_URL: databaseUrl });
      const idleRss = rssKb(service.child.pid!) / 1024;
      const floorSql = await checkSameJson(service, floor, key, list);
      log("PostgreSQL: the floor answers the same JSON as the service for every workload's samples");
      const graphqlLoads = list.filter((w) => isW2(w) && (!only || only.has(w.id)));
      for (const spec of graphqlLoads.length ? peerSpecs : []) {
        let started: Server | undefined;
        try {
          started = await startServer(spec.name, spec.script, { DATABASE_URL: databaseUrl, NODE_ENV: "production" });
          const peer: Server = {
            ...started,
            peer: {
              label: spec.label,
              answers: new Set<WorkloadId>(["W2", "W2c"]),
              adapt: peerAdapter(spec, await peerCursors(started, spec)),
            },
          };
          for (const w of graphqlLoads) await checkPeer(service, peer, key, w);
          peers.push(peer);
          log(
            `PostgreSQL: ${spec.label} answers ${graphqlLoads.map((w) => w.id).join(" and ")} samples with the same users, records, ranks and authors as the service`,
          );
        } catch (error) {
          const note = `${spec.label}: not measured (${String((error as Error).message || error).replace(/\s*\n\s*/g, " — ")})`;
          peerNotes.push(note);
          log(note);
          if (started) await stopServer(started);
        }
      }
      const { rows, w1Rss, peakRss } = await measureAll(
        service,
        floor,
        key,
        list,
        databaseUrl,
        counted,
        floorSql,
        storageDir,
        peers,
      );
      const profileText = profile ? await profileService(databaseUrl, storageDir, key, list) : "";
      return {
        text: [
          "Service, floor and PostGraphile on the same PostgreSQL database, seeded with the same data through `pg` multi-row inserts, then ANALYZE. " +
            "The floor is bench/floor.ts on a `pg` Pool (named prepared statements, lists as `= ANY($1)`), checked to answer the same JSON; its W4 write is BEGIN, three statements and COMMIT on one pooled connection. " +
            "PostGraphile 4.14 (bench/postgraphile.ts, pg-simplify-inflector, a computed column for a rank's image) and PostGraphile 5.1.5 (bench/postgraphile5.ts, the Amber preset, the same computed column) answer W2 and W2c in their own spellings, " +
            "checked to return the same users, records, ranks and authors; they authenticate nothing and scope no rows to an account. " +
            "CPU ms per request is given as server / PostgreSQL: the server process's, then every `postgres` process's on the machine over the same requests.",
          ...(peerNotes.length ? ["", ...peerNotes] : []),
          "",
          table(rows, true),
          "",
          `Service resident set: ${f0(idleRss)} MB idle after start, peak ${f0(w1Rss)} MB under W1, peak ${f0(peakRss)} MB over all workloads.`,
          "",
          "Service statements for each workload:",
          "",
          ...counted.map((c, i) => `- ${list[i].id} (${c.statements}): ${summariseSql(c.sql)}`),
          ...(profileText
            ? ["", profileText.replace("## Profile", "### Profile on PostgreSQL").replace(/^### (W\d)$/gm, "#### $1")]
            : []),
        ].join("\n"),
        targets: targetsMet(rows, w1Rss),
      };
    } finally {
      for (const peer of peers) await stopServer(peer);
      if (floor) await stopServer(floor);
      await stopServer(service);
    }
  });
}

/** The scratch PostgreSQL database beside `base` the PostgreSQL passes run on: migrated, keyed, seeded, analysed; dropped after `work`. */
async function withSeededPostgres<T>(
  base: string,
  work: (db: {
    databaseUrl: string;
    storageDir: string;
    key: string;
    publishableKey: string;
    seeded: Seeded;
  }) => Promise<T>,
  size: SeedSize = plan.size,
): Promise<T> {
  const name = `muster_bench_${process.pid}`;
  await pgQuery(base, `CREATE DATABASE "${name}"`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const storageDir = path.join(tmpdir(), name);
  try {
    await migrate(databaseUrl);
    const { key, publishableKey, accountId } = await createKeys(databaseUrl);
    const sink = await postgresSink(databaseUrl);
    const seeded = await seed(sink, accountId, size);
    await sink.close();
    await pgQuery(databaseUrl, "ANALYZE");
    return await work({ databaseUrl, storageDir, key, publishableKey, seeded });
  } finally {
    await pgQuery(base, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => {});
    rmSync(storageDir, { recursive: true, force: true });
  }
}

/** A fresh SQLite database in a directory of its own under `dir`, migrated, keyed and seeded at `size`; removed after `work`. */
async function withSeededSqlite<T>(
  dir: string,
  size: SeedSize,
  work: (db: {
    databaseUrl: string;
    storageDir: string;
    key: string;
    publishableKey: string;
    seeded: Seeded;
  }) => Promise<T>,
): Promise<T> {
  const own = mkdtempSync(path.join(dir, "scale-"));
  const databaseUrl = `file:${path.join(own, "bench.db")}`;
  try {
    await migrate(databaseUrl);
    const { key, publishableKey, accountId } = await createKeys(databaseUrl);
    const sink = sqliteSink(databaseUrl);
    const seeded = await seed(sink, accountId, size);
    await sink.close();
    return await work({ databaseUrl, storageDir: path.join(own, "files"), key, publishableKey, seeded });
  } finally {
    if (!keep) rmSync(own, { recursive: true, force: true });
  }
}

/** One system's figures for one workload at one size, in `--scale`'s report. */
interface ScaleResult {
  database: "SQLite" | "PostgreSQL";
  sized: number;
  workload: WorkloadId;
  system: string;
  m: Measured;
}

/**
 * `--scale N` (issue 45, point 4): on each database, at the plan's size and at N times its users, rank records and
 * comments (ranks and documents as they are), the service and the floor (and for W5 the service with RESPONSE_CACHE=off)
 * under every workload, W3 also at its last page (the deepest OFFSET); CPU per request at both sizes side by side.
 */
async function benchScale(factor: number, dir: string, startSpeed: number, startLoad: string, built: string) {
  // Always the full size and N times it: --quick here only shortens the rounds (a quick-size base would measure 1,000 users).
  const sizes: SeedSize[] = [
    fullSize,
    { ...fullSize, users: fullSize.users * factor, comments: fullSize.comments * factor },
  ];
  const results: ScaleResult[] = [];
  const seededLines: string[] = [];
  const pgPlan = sqliteOnly ? null : await postgresPlan();
  const databases: Array<"SQLite" | "PostgreSQL"> = [
    ...(postgresOnly ? [] : ["SQLite" as const]),
    ...(pgPlan && "base" in pgPlan ? ["PostgreSQL" as const] : []),
  ];
  if (pgPlan && "skipped" in pgPlan) seededLines.push(`- ${pgPlan.skipped}`);
  for (const database of databases) {
    for (const [index, size] of sizes.entries()) {
      const sized = index === 0 ? 1 : factor;
      const work = async ({
        databaseUrl,
        storageDir,
        key,
        publishableKey,
        seeded,
      }: {
        databaseUrl: string;
        storageDir: string;
        key: string;
        publishableKey: string;
        seeded: Seeded;
      }) => {
        seededLines.push(
          `- ${database} ×${sized}: ${seeded.userIds.length} users, ${seeded.rankRecords} rank records, ${seeded.comments} comments, seeded in ${(seeded.ms / 1000).toFixed(1)} s`,
        );
        log(`${database} ×${sized}: seeded in ${(seeded.ms / 1000).toFixed(1)} s`);
        const lastCommentPage = Math.ceil(seeded.comments / 25);
        const list: Workload[] = [
          ...workloads(seeded, size, publishableKey),
          {
            id: "W3last" as const,
            title: `GET /v2/comments?include=author&page=${lastCommentPage}&limit=25 (the last page)`,
            floor: true,
            method: "GET" as const,
            next: () => ({ path: `/v2/comments?include=author&page=${lastCommentPage}&limit=25` }),
          },
        ].filter((w) => !only || only.has(w.id));
        const suffix = `${database === "PostgreSQL" ? "-pg" : ""}-x${sized}`;
        const servers: Server[] = [];
        try {
          const service = await startServer(`service${suffix}`, serviceScript, serviceEnv(databaseUrl, storageDir));
          servers.push(service);
          const floor = await startServer(`floor${suffix}`, "bench/floor.ts", { DATABASE_URL: databaseUrl });
          servers.push(floor);
          await checkSameJson(service, floor, key, list);
          const w5 = list.find((w) => w.id === "W5");
          let uncached: Server | null = null;
          if (w5) {
            uncached = await startServer(`service-nocache${suffix}`, serviceScript, {
              ...serviceEnv(databaseUrl, storageDir),
              RESPONSE_CACHE: "off",
            });
            servers.push(uncached);
            await checkSameJson(uncached, floor, key, [w5]);
          }
          log(`${database} ×${sized}: the floor answers the same JSON as the service for every workload's samples`);
          for (const w of list) {
            const targets = [service, ...(w.id === "W5" && uncached ? [uncached] : []), floor];
            const measured = await measure(targets, key, w, databaseUrl);
            const names = new Map<Server, string>([
              [service, w.id === "W5" ? "service (cache on)" : "service"],
              [floor, "floor"],
            ]);
            if (uncached) names.set(uncached, "service (RESPONSE_CACHE=off)");
            for (const t of targets)
              results.push({ database, sized, workload: w.id, system: names.get(t)!, m: measured.get(t)! });
          }
        } finally {
          for (const server of servers.reverse()) await stopServer(server);
        }
      };
      if (database === "SQLite") await withSeededSqlite(dir, size, work);
      else await withSeededPostgres((pgPlan as { base: string }).base, work, size);
    }
  }
  const lines = [
    `# Scale (\`npm run bench -- --scale ${factor}\`${quick ? " --quick" : ""})`,
    "",
    `Written by bench/run.ts --scale ${factor}. Each database seeded twice: at the full size and at ${factor}× its users, rank records and comments ` +
      `(ranks and documents as they are). At each size the service as \`npm start\` runs it and the floor (and for W5 the service with RESPONSE_CACHE=off), ` +
      `each workload a ${plan.warmup} s warm-up per target then ${plan.rounds} round(s) of ${plan.round} s (W2, W2c and W4 a fixed number of requests), medians. ` +
      "W3last is W3 at its last page, the deepest OFFSET. CPU ms per request: the server process's (on PostgreSQL / every `postgres` process's on the machine).",
    "",
    "## Machine",
    "",
    ...machine(startSpeed),
    `- Service built from ${built}`,
    `- Load average when the run began: ${startLoad}`,
    "",
    "## Data",
    "",
    ...seededLines,
    "",
    "## CPU per request at both sizes",
    "",
    `| Database | Workload | System | req/s ×1 | CPU ms per request ×1 | req/s ×${factor} | CPU ms per request ×${factor} | CPU ×${factor} ÷ ×1 | Failed (×1 / ×${factor}) |`,
    "|---|---|---|---:|---:|---:|---:|---:|---:|",
  ];
  for (const r of results.filter((x) => x.sized === 1)) {
    const big = results.find(
      (x) => x.database === r.database && x.workload === r.workload && x.system === r.system && x.sized === factor,
    );
    const pgSide = r.database === "PostgreSQL";
    lines.push(
      `| ${r.database} | ${r.workload} | ${r.system} | ${f0(r.m.rps)} | ${cpuCell(r.m, pgSide)} | ${big ? f0(big.m.rps) : "–"} | ${big ? cpuCell(big.m, pgSide) : "–"} | ${big ? f2(big.m.cpuMs / r.m.cpuMs) : "–"} | ${r.m.bad} / ${big?.m.bad ?? "–"} |`,
    );
  }
  // Issue 45: a floor slower than the service at either size is a bug of the bench, as in the usual run.
  const slower = results
    .filter((r) => r.system === "floor")
    .flatMap((floor) => {
      const service = results.find(
        (x) =>
          x.database === floor.database &&
          x.sized === floor.sized &&
          x.workload === floor.workload &&
          x.system === (floor.workload === "W5" ? "service (RESPONSE_CACHE=off)" : "service"),
      );
      return service && (floor.m.rps < service.m.rps || floor.m.cpuMs > service.m.cpuMs)
        ? [
            `${floor.database} ×${floor.sized} ${floor.workload} (floor ${f0(floor.m.rps)} req/s, ${f2(floor.m.cpuMs)} CPU ms per request; ${service.system} ${f0(service.m.rps)} req/s, ${f2(service.m.cpuMs)} ms)`,
          ]
        : [];
    });
  lines.push("", "## Floors", "");
  if (slower.length) {
    floorSlowerSeen = true;
    const line = `- **FLOOR SLOWER THAN SERVICE**: ${slower.join("; ")} — **missed** (a bug of the bench: fix the floor)`;
    console.error(`\n${line}\n`);
    lines.push(line);
  } else
    lines.push("- Every floor at least as fast as the service at both sizes, in req/s and in CPU per request — met");
  lines.push("");
  return lines.join("\n");
}

/**
 * `--workers` (issue 17, item 4): the service with WORKERS=1 and with WORKERS=2 (the primary accepts connections and
 * hands each to a worker over IPC), and the floor (one process) for reference, side by side on one scratch PostgreSQL
 * database, round by round under W1 and W3. Reports req/s, the ratio, and CPU per request of the service (all its
 * processes), of PostgreSQL and of autocannon, which shares the same cores.
 */
async function benchWorkers(base: string): Promise<string> {
  return withSeededPostgres(base, async ({ databaseUrl, storageDir, key, seeded }) => {
    const servers: Server[] = [];
    try {
      log(
        `PostgreSQL: seeded ${seeded.userIds.length} users, ${seeded.rankRecords} rank records, ${seeded.comments} comments in ${(seeded.ms / 1000).toFixed(1)} s`,
      );
      const list = workloads(seeded, plan.size, "").filter(
        (w) => (w.id === "W1" || w.id === "W3") && (!only || only.has(w.id)),
      );
      const one = await startServer(
        "service-workers-1",
        serviceScript,
        { ...serviceEnv(databaseUrl, storageDir), WORKERS: "1" },
        [],
        true,
      );
      servers.push(one);
      const two = await startServer(
        "service-workers-2",
        serviceScript,
        { ...serviceEnv(databaseUrl, storageDir), WORKERS: "2" },
        [],
        true,
      );
      servers.push(two);
      const floor = await startServer("floor-pg", "bench/floor.ts", { DATABASE_URL: databaseUrl });
      servers.push(floor);
      const workerPids = childrenOf(two.child.pid!);
      log(`WORKERS=2: primary ${two.child.pid}, workers ${workerPids.join(", ")}`);
      await checkSameJson(one, floor, key, list);
      await checkSameJson(two, floor, key, list);
      log(`WORKERS=1, WORKERS=2 and the floor answer the same JSON for ${list.map((w) => w.id).join(" and ")} samples`);
      const rows: string[] = [];
      const detail: string[] = [];
      const startLoad = loadAverage();
      const startSpeed = machineSpeedMs();
      for (const w of list) {
        const loadBefore = loadAverage();
        const primaryBefore = cpuTicks(two.child.pid!);
        const twoBefore = treeTicks(two.child.pid!);
        const measured = await measure([one, two, floor], key, w, databaseUrl);
        const primaryShare =
          (cpuTicks(two.child.pid!) - primaryBefore) / Math.max(1, treeTicks(two.child.pid!) - twoBefore);
        const [a, b, c] = [measured.get(one)!, measured.get(two)!, measured.get(floor)!];
        const ratio = b.rps / a.rps;
        rows.push(
          `| ${w.id} | ${f0(a.rps)} | ${f0(b.rps)} | **${f2(ratio)}×** (${ratio >= 1.6 ? "met" : "**missed**"}) | ${f0(c.rps)} | ${f2(b.rps / c.rps)}× | ` +
            `${f0(a.p50)} / ${f0(a.p99)} | ${f0(b.p50)} / ${f0(b.p99)} | ${f0(c.p50)} / ${f0(c.p99)} | ` +
            `${f2(a.cpuMs)} / ${f2(b.cpuMs)} / ${f2(c.cpuMs)} | ${f2(a.dbCpuMs)} / ${f2(b.dbCpuMs)} / ${f2(c.dbCpuMs)} | ` +
            `${f2(a.loaderCpuMs)} / ${f2(b.loaderCpuMs)} / ${f2(c.loaderCpuMs)} | ${f0(100 * a.busy)} / ${f0(100 * b.busy)} / ${f0(100 * c.busy)} | ` +
            `${a.bad} / ${b.bad} / ${c.bad} | ${loadBefore} → ${loadAverage()} |`,
        );
        const perRound = (m: Measured) => m.rounds.map((r) => f0(r.rps)).join(", ");
        detail.push(
          `- ${w.id} rounds (req/s): WORKERS=1 ${perRound(a)}; WORKERS=2 ${perRound(b)}; floor ${perRound(c)}. ` +
            `The WORKERS=2 primary's own share of its instance's CPU: ${(100 * primaryShare).toFixed(1)}%.`,
        );
      }
      return [
        "# Scale-out (`npm run bench -- --workers`)",
        "",
        `Written by bench/run.ts --workers${quick ? " --quick (smaller organisation, one short round)" : ""}. ` +
          `${plan.size.users} users, ${seeded.rankRecords} rank records, ${seeded.comments} comments on a scratch PostgreSQL database (seeded through \`pg\`, then ANALYZE). ` +
          `The service as \`npm start\` runs it (\`${serviceCommand()}\`, NODE_ENV=production) with WORKERS=1 and with WORKERS=2, ` +
          "started side by side on the same database, and the floor (bench/floor.ts, one process) for reference. " +
          `Each workload: a ${plan.warmup} s warm-up per target, then ${plan.rounds} round(s) of ${plan.round} s per target, the targets interleaved round by round; medians. ${connections} connections (autocannon, keep-alive: the primary hands each connection to a worker once, in turn, so 16 go to each).`,
        "",
        "## Machine",
        "",
        ...machine(startSpeed),
        `- Load average when the workloads began: ${startLoad}`,
        "",
        "autocannon runs in the bench process on the same cores as the service and PostgreSQL: its CPU per request is in the table, " +
          "and so is the share of the machine's CPUs busy during the rounds. When that share nears 100%, the second worker competes with " +
          "autocannon and PostgreSQL for the same two cores, and the ratio measures the machine as much as the service.",
        "",
        "| Workload | WORKERS=1 req/s | WORKERS=2 req/s | 2 ÷ 1 (target ≥ 1.6×) | Floor req/s | WORKERS=2 ÷ floor | WORKERS=1 p50 / p99 (ms) | WORKERS=2 p50 / p99 (ms) | Floor p50 / p99 (ms) | " +
          "Service CPU ms per request (1 / 2 / floor) | PostgreSQL CPU ms per request (1 / 2 / floor) | autocannon CPU ms per request (1 / 2 / floor) | Machine busy % (1 / 2 / floor) | Failed (1 / 2 / floor) | Load avg (start → end) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
        ...rows,
        "",
        ...detail,
        "",
        "Service CPU: user + system time of the instance's whole process tree (for WORKERS=2 the primary and both workers) over the requests answered. " +
          "PostgreSQL CPU: every `postgres` process on the machine (backends, helpers, and what the postmaster reaped), so it includes other users' queries if any ran. " +
          "autocannon CPU: this process's own (process.cpuUsage) while autocannon ran.",
        "",
      ].join("\n");
    } finally {
      for (const server of servers.reverse()) await stopServer(server);
    }
  });
}

const serviceEnv = (databaseUrl: string, storageDir: string) => ({
  DATABASE_URL: databaseUrl,
  STORAGE_DIR: storageDir,
  RATE_LIMIT_PER_MINUTE: "1000000000",
  PUBLIC_RATE_LIMIT_PER_MINUTE: "1000000000",
  NODE_ENV: "production",
  // The W4 webhook pass delivers to a sink on this machine.
  WEBHOOKS_ALLOW_PRIVATE: "true",
});

/** The commit the build was made from, and whether src/ differed from it. */
function commitOfBuild(): string {
  const head =
    spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).stdout.trim() || "unknown";
  const dirty = spawnSync("git", ["status", "--porcelain", "--", "src", "scripts", "package.json"], {
    cwd: root,
    encoding: "utf8",
  }).stdout.trim();
  return `commit ${head}${dirty ? " with uncommitted changes in src/ or scripts/" : ""}`;
}

/** Other work on a shared machine skews every number: wait (up to 15 minutes) for it to calm down. */
async function waitForIdleMachine() {
  const deadline = Date.now() + 15 * 60_000;
  for (let first = true; Date.now() < deadline; first = false) {
    const one = Number(loadAverage().split(" ")[0]);
    if (one < 1) return;
    if (first) log(`waiting for the 1-minute load average (${one}) to fall below 1`);
    await new Promise((resolve) => setTimeout(resolve, 10_000));
  }
  log(`still busy (load average ${loadAverage()}); measuring anyway`);
}

async function main() {
  if (waitIdle) await waitForIdleMachine();
  const started = performance.now();
  const startLoad = loadAverage();
  const startSpeed = machineSpeedMs();
  const dir = mkdtempSync(path.join(tmpdir(), "muster-bench-"));
  const databaseUrl = `file:${path.join(dir, "bench.db")}`;
  const storageDir = path.join(dir, "files");
  logDir = dir;
  log(`${quick ? "quick" : "full"} run in ${dir}`);
  const build = spawnSync(process.execPath, [path.join(root, "scripts/build.mjs"), "--quiet"], {
    cwd: root,
    stdio: "inherit",
  });
  if (build.status !== 0) throw new Error("npm run build failed");
  const built = commitOfBuild();
  log(`built from ${built}`);

  if (scaleFactor !== null) {
    const report = `${await benchScale(scaleFactor, dir, startSpeed, startLoad, built)}Whole run: ${((performance.now() - started) / 1000).toFixed(0)} s.\n`;
    console.log(`\n${report}`);
    const out = path.join(root, "bench", quick ? "RESULTS-quick.md" : "RESULTS-scale.md");
    writeFileSync(out, report);
    log(`wrote ${path.relative(root, out)}`);
    if (!keep) rmSync(dir, { recursive: true, force: true });
    return;
  }

  if (workersMode) {
    const pgPlan = sqliteOnly ? { skipped: "PostgreSQL: not measured (--sqlite-only)" } : await postgresPlan();
    if ("skipped" in pgPlan) throw new Error(`--workers needs PostgreSQL: ${pgPlan.skipped}`);
    const report = `${await benchWorkers(pgPlan.base)}Built from ${built}. Whole run: ${((performance.now() - started) / 1000).toFixed(0)} s.\n`;
    console.log(`\n${report}`);
    const out = path.join(root, "bench", quick ? "RESULTS-quick.md" : "RESULTS-workers.md");
    writeFileSync(out, report);
    log(`wrote ${path.relative(root, out)}`);
    if (!keep) rmSync(dir, { recursive: true, force: true });
    return;
  }

  await migrate(databaseUrl);
  const { key, publishableKey, accountId } = await createKeys(databaseUrl);
  const sink = sqliteSink(databaseUrl);
  const seeded = await seed(sink, accountId, plan.size);
  await sink.close();
  const s = plan.size;
  log(
    `seeded ${s.ranks} ranks with images, ${seeded.userIds.length} users, ${seeded.rankRecords} rank records, ${s.documents} documents, ${seeded.comments} comments in ${(seeded.ms / 1000).toFixed(1)} s`,
  );

  const list = workloads(seeded, s, publishableKey);
  const probes: Probe[] = list.map((w) => ({ method: w.method, headers: w.headers, ...w.next(prng(3)) }));
  const counted = await countStatements(databaseUrl, key, storageDir, probes);
  for (const [i, c] of counted.entries()) {
    if (c.status !== 200) throw new Error(`${list[i].id} answered ${c.status} in-process`);
    log(`${list[i].id}: ${c.statements} SQL statements in the service`);
  }

  let sqlite = { rows: [] as Row[], w1Rss: NaN, peakRss: NaN, idleRss: NaN };
  if (!postgresOnly) {
    const service = await startServer("service", serviceScript, serviceEnv(databaseUrl, storageDir));
    const floor = await startServer("floor", "bench/floor.ts", { DATABASE_URL: databaseUrl });
    const idleRss = rssKb(service.child.pid!) / 1024;
    const floorSql = await checkSameJson(service, floor, key, list);
    log("the floor answers the same JSON as the service for every workload's samples");
    sqlite = { ...(await measureAll(service, floor, key, list, databaseUrl, counted, floorSql, storageDir)), idleRss };
    await stopServer(floor);
    await stopServer(service);
  }
  const { rows, w1Rss, peakRss, idleRss } = sqlite;

  let profileText = "";
  if (profile && !postgresOnly) profileText = await profileService(databaseUrl, storageDir, key, list);

  const pgPlan = sqliteOnly ? { skipped: "PostgreSQL: not measured (--sqlite-only)" } : await postgresPlan();
  let pg: PostgresReport;
  if ("skipped" in pgPlan) pg = { text: pgPlan.skipped, targets: [pgPlan.skipped] };
  else {
    try {
      pg = await benchPostgres(pgPlan.base);
    } catch (error) {
      console.error(error);
      const failed = `PostgreSQL: failed (${String((error as Error).message || error).split("\n")[0]})`;
      pg = { text: failed, targets: [failed] };
    }
  }
  if (!pg.text.startsWith("PostgreSQL")) log("PostgreSQL: measured");
  else log(pg.text);

  const report = [
    `# Bench results${quick ? " (quick run: smaller organisation, one short round — not comparable)" : ""}`,
    "",
    "Written by `npm run bench` (bench/run.ts). Medians of " +
      `${plan.rounds} round(s) of ${plan.round} s per target after a ${plan.warmup} s warm-up, ${connections} connections (autocannon). ` +
      `Service: \`${serviceCommand()}\` (the esbuild bundle, as \`npm start\` runs it), NODE_ENV=production, rate limit out of the way; first on SQLite (libsql), then on PostgreSQL. ` +
      `Floor: bench/floor.ts, the fastest hand-written node:http server we can write on each database, with direct SQL on the same database (${floorSqliteDriver} on SQLite; on PostgreSQL a \`pg\` Pool with named prepared statements and \`= ANY($1)\` batches), checked to answer the same JSON, W2 included. ` +
      "Peers for W2 and W2c on PostgreSQL: PostGraphile 4.14 (bench/postgraphile.ts) and PostGraphile 5.1.5 (bench/postgraphile5.ts) over the same database, checked to return the same rows. " +
      "W5 runs the service twice, with the shared response cache on (the default) and with RESPONSE_CACHE=off (a second process of the same build, started for W5 alone), against the floor. " +
      "W2 and W4 run a fixed number of requests (warm-up rate × round length, at least one per connection for W2 and two for W4) instead of a fixed time: " +
      "every W4 write is answered before rows are counted, and W2's slow requests are all counted.",
    "",
    "## Machine",
    "",
    ...machine(startSpeed),
    `- Service built from ${built}`,
    `- Load average when the run began: ${startLoad} (other engineers' test runs share these ${availableParallelism()} cores; see the last column)`,
    "",
    "## Data",
    "",
    `${s.ranks} ranks with an image row each, ${seeded.userIds.length} users, ${seeded.rankRecords} rank records (${s.recordsPerUser} per user), ` +
      `${s.documents} documents, ${seeded.comments} comments; seeded in ${(seeded.ms / 1000).toFixed(1)} s.`,
    "",
    "## Workloads",
    "",
    ...list.map((w) => `- ${w.id}: \`${w.title}\`${w.floor ? "" : " (no floor)"}`),
    "",
    "## Results (SQLite)",
    "",
    table(rows),
    "",
    `Service resident set: ${f0(idleRss)} MB idle after start, peak ${f0(w1Rss)} MB under W1, peak ${f0(peakRss)} MB over all workloads.`,
    "",
    "CPU ms per request: the server process's user + system time during a round (all its threads, from /proc/<pid>/stat) over the requests it answered; " +
      "it depends far less on other work on the machine than req/s does, and floor ÷ service CPU estimates the throughput ratio when the server is CPU-bound.",
    "",
    "SQL per request: the service's `db.statements.count` around one request (second of two) in-process; the floor's own count. " +
      "Service statements for each workload:",
    "",
    ...counted.map((c, i) => `- ${list[i].id} (${c.statements}): ${summariseSql(c.sql)}`),
    "",
    "## Targets",
    "",
    "SQLite:",
    "",
    ...targetsMet(rows, w1Rss),
    "",
    "PostgreSQL:",
    "",
    ...pg.targets,
    "",
    ...(profileText ? [profileText, ""] : []),
    "## Results (PostgreSQL)",
    "",
    pg.text,
    "",
    `Whole run: ${((performance.now() - started) / 1000).toFixed(0)} s.`,
    "",
  ].join("\n");

  console.log(
    `\nSQLite:\n\n${table(rows)}\n\nService RSS: idle ${f0(idleRss)} MB, peak under W1 ${f0(w1Rss)} MB\n\n${targetsMet(rows, w1Rss).join("\n")}\n\n` +
      (pg.text.startsWith("PostgreSQL") ? pg.text : `PostgreSQL:\n\n${pg.text}\n\n${pg.targets.join("\n")}`),
  );
  const out = path.join(root, "bench", partial ? "RESULTS-partial.md" : quick ? "RESULTS-quick.md" : "RESULTS.md");
  writeFileSync(out, report);
  log(`wrote ${path.relative(root, out)}`);
  if (!keep) rmSync(dir, { recursive: true, force: true });
  else log(`kept ${dir}`);
}

/** The service under --cpu-prof (W1 and W2, or the workloads --only names); where its time goes. */
async function profileService(databaseUrl: string, storageDir: string, key: string, list: Workload[]): Promise<string> {
  const sections: string[] = ["## Profile (service, --cpu-prof)", ""];
  // W1 and W2 in a full run; with --only, each workload named.
  for (const id of only ? list.map((w) => w.id).filter((id) => only.has(id)) : ["W1", "W2"]) {
    const profDir = mkdtempSync(path.join(tmpdir(), "muster-prof-"));
    const spawned = performance.now();
    const service = await startServer(`service-prof-${id}`, serviceScript, serviceEnv(databaseUrl, storageDir), [
      "--cpu-prof",
      `--cpu-prof-dir=${profDir}`,
    ]);
    const w = list.find((x) => x.id === id)!;
    const warm = await load(service, key, w, 1, fixedAmount(w) ? { amount: connections } : { duration: plan.warmup });
    const skipMs = performance.now() - spawned;
    const round = await load(
      service,
      key,
      w,
      2,
      fixedAmount(w)
        ? { amount: Math.max(connections, Math.round(roundOf(warm).rps * plan.round)) }
        : { duration: plan.round },
    );
    await stopServer(service);
    const file = readdirSync(profDir).find((f) => f.endsWith(".cpuprofile"));
    if (file && process.env.BENCH_PROFILE_KEEP) {
      mkdirSync(process.env.BENCH_PROFILE_KEEP, { recursive: true });
      copyFileSync(
        path.join(profDir, file),
        path.join(process.env.BENCH_PROFILE_KEEP, `${isPostgres(databaseUrl) ? "pg" : "sqlite"}-${id}.cpuprofile`),
      );
    }
    if (file)
      sections.push(
        `### ${id}`,
        "",
        summariseProfile(path.join(profDir, file), root, skipMs, round["2xx"] + round.non2xx),
        "",
      );
    rmSync(profDir, { recursive: true, force: true });
    log(`profiled ${id}`);
  }
  return sections.join("\n");
}

await main().then(
  () => process.exit(floorSlowerSeen || automationEffectsWrong ? 1 : 0),
  (error) => {
    console.error(error);
    console.error(`The run's database and server logs are kept in ${logDir}`);
    process.exit(1);
  },
);
