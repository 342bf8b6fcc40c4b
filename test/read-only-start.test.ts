import { afterAll, afterEach, beforeAll, expect, test } from "vitest";
import { spawn, spawnSync } from "node:child_process";
import {
  appendFileSync,
  chmodSync,
  chownSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { createTestDatabase } from "./harness.ts";
import { closedToOthers, mirrorTree } from "./support/mirror.ts";
import { freePort } from "./support/spawn-server.ts";

/**
 * `npm start` on a checkout the server's user cannot write (a container image, a read-only deploy): with dist/
 * current it starts without writing; with dist/ stale it says so in one line and exits 1. The checkout is a copy of
 * this one, in a temporary folder. As root, the server runs as `nobody`, since root writes through any mode bits.
 *
 * `nobody` may not reach this checkout's node_modules: a private folder anywhere above it (/root, every `mktemp -d`)
 * closes it, and a symbolic link does not open it. So as root the copies' node_modules is a mirror of it, made once
 * for this file in a temporary folder of its own that all may enter (support/mirror.ts: hard links, 2-3 s to make and
 * as long to delete here; copies where links cannot be made), and the test does not depend on where the checkout
 * lives. Run as another user, the server runs as that user, who can reach node_modules; the copies link to it.
 */
const root = path.resolve(import.meta.dirname, "..");
const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

let nodeModules = path.join(root, "node_modules");
let mirrorDir: string | undefined;
/** Why the server cannot run as `nobody` here, when it cannot (the tests then skip, saying so). */
let unavailable: string | null = null;
beforeAll(() => {
  if (!asRoot) return;
  unavailable = mirrorNodeModules();
  if (unavailable) console.warn(`read-only-start.test.ts skips its tests: ${unavailable}`);
}, 300_000);
afterAll(() => {
  if (mirrorDir) rmSync(mirrorDir, { recursive: true, force: true });
}, 120_000);

function mirrorNodeModules(): string | null {
  const closed = closedToOthers(tmpdir());
  if (closed)
    return `the temporary folder ${tmpdir()} is closed to nobody (${closed} has no search bit for others): set TMPDIR to a folder all may enter`;
  mirrorDir = mkdtempSync(path.join(tmpdir(), "muster-ro-modules-"));
  chmodSync(mirrorDir, 0o755);
  const probe = spawnSync("npm", ["--version"], {
    cwd: mirrorDir,
    uid: NOBODY,
    gid: NOBODY,
    encoding: "utf8",
    env: { ...process.env, HOME: mirrorDir },
  });
  if (probe.status !== 0)
    return `npm does not run as nobody here (${probe.error?.message ?? `exit ${probe.status}: ${probe.stderr.trim()}`})`;
  nodeModules = path.join(mirrorDir, "node_modules");
  mirrorTree(path.join(root, "node_modules"), nodeModules);
  return null;
}

function readOnlyCheckout(change?: (checkout: string) => void): { checkout: string; writable: string } {
  const dir = mkdtempSync(path.join(tmpdir(), "muster-ro-"));
  cleanup.push(() => {
    execFileSync("chmod", ["-R", "u+w", dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  chmodSync(dir, 0o755);
  const checkout = path.join(dir, "checkout");
  mkdirSync(checkout);
  for (const part of ["src", "scripts", "schema", "prisma", "prisma-pg", "bin", "package.json", "package-lock.json"]) {
    cpSync(path.join(root, part), path.join(checkout, part), { recursive: true });
  }
  symlinkSync(nodeModules, path.join(checkout, "node_modules"));
  execFileSync(process.execPath, ["scripts/build.mjs", "--quiet"], { cwd: checkout });
  change?.(checkout);
  // Readable by all (a checkout cloned under umask 077 has files only their owner may read), writable by none.
  execFileSync("chmod", ["-R", "a+rX,a-w", checkout]);
  // The database, uploads and npm's own cache and logs live outside the checkout, writable by the server's user.
  const writable = path.join(dir, "writable");
  mkdirSync(writable, { mode: 0o777 });
  if (asRoot) chownSync(writable, NOBODY, NOBODY);
  return { checkout, writable };
}

async function npmStart(checkout: string, writable: string) {
  const database = await createTestDatabase(writable);
  cleanup.push(() => database.drop());
  const child = spawn("npm", ["start"], {
    cwd: checkout,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    ...(asRoot ? { uid: NOBODY, gid: NOBODY } : {}),
    env: {
      ...process.env,
      HOME: writable,
      npm_config_cache: path.join(writable, ".npm"),
      PORT: String(await freePort()),
      HOST: "127.0.0.1",
      DATABASE_URL: database.url,
      STORAGE_DIR: path.join(writable, "files"),
      NODE_ENV: "production",
      LOG_LEVEL: "warn",
    },
  });
  let out = "";
  child.stdout.on("data", (chunk) => (out += chunk));
  child.stderr.on("data", (chunk) => (out += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  cleanup.push(() => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // already gone
    }
  });
  return { child, exited, output: () => out };
}

test("with dist/ current, npm start serves from a checkout it cannot write", { timeout: 90_000 }, async (context) => {
  if (unavailable) context.skip(unavailable);
  const { checkout, writable } = readOnlyCheckout();
  const { child, exited, output } = await npmStart(checkout, writable);
  const deadline = Date.now() + 60_000;
  let listening: RegExpExecArray | null = null;
  while (!(listening = /listening on (http:\/\/\S+)/.exec(output()))) {
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`npm start did not start the server:\n${output()}`);
    await sleep(50);
  }
  expect(output()).toContain("dist/ is current");
  expect((await fetch(`${listening[1]}/health`)).status).toBe(200);
  process.kill(-child.pid!, "SIGTERM");
  await exited;
});

test(
  "with dist/ stale and the checkout read-only, npm start says what to do in one line and exits non-zero",
  { timeout: 90_000 },
  async (context) => {
    if (unavailable) context.skip(unavailable);
    // One of the files the bundles were built from (dist/build-stamp.json lists them), whatever the layout of src/.
    const { checkout, writable } = readOnlyCheckout((dir) => {
      const inputs = Object.keys(
        (
          JSON.parse(readFileSync(path.join(dir, "dist/build-stamp.json"), "utf8")) as {
            inputs: Record<string, string>;
          }
        ).inputs,
      );
      appendFileSync(
        path.join(dir, inputs.find((input) => input.startsWith("src/"))!),
        "\n// edited after the build\n",
      );
    });
    const { exited, output } = await npmStart(checkout, writable);
    expect(await exited).not.toBe(0);
    const lines = output()
      .split("\n")
      .filter((l) => l.includes("dist/"));
    expect(lines.some((l) => /dist\/ is out of date and cannot be rebuilt here .*npm run build/.test(l))).toBe(true);
    expect(output()).not.toMatch(/\n\s+at /);
  },
);
