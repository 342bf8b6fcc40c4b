import { afterEach, expect, test } from "vitest";
import { spawn } from "node:child_process";
import { appendFileSync, chmodSync, chownSync, cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { createTestDatabase } from "./harness.ts";
import { freePort } from "./support/spawn-server.ts";

/**
 * `npm start` on a checkout the server's user cannot write (a container image, a read-only deploy): with dist/
 * current it starts without writing; with dist/ stale it says so in one line and exits 1. The checkout is a copy of
 * this one (node_modules linked). As root, the server runs as `nobody`, since root writes through any mode bits.
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
  symlinkSync(path.join(root, "node_modules"), path.join(checkout, "node_modules"));
  execFileSync(process.execPath, ["scripts/build.mjs", "--quiet"], { cwd: checkout });
  change?.(checkout);
  execFileSync("chmod", ["-R", "a-w", checkout]);
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
    cwd: checkout, detached: true, stdio: ["ignore", "pipe", "pipe"],
    ...(asRoot ? { uid: NOBODY, gid: NOBODY } : {}),
    env: {
      ...process.env, HOME: writable, npm_config_cache: path.join(writable, ".npm"), PORT: String(await freePort()), HOST: "127.0.0.1",
      DATABASE_URL: database.url, STORAGE_DIR: path.join(writable, "files"), NODE_ENV: "production", LOG_LEVEL: "warn",
    },
  });
  let out = "";
  child.stdout!.on("data", (chunk) => (out += chunk));
  child.stderr!.on("data", (chunk) => (out += chunk));
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

test("with dist/ current, npm start serves from a checkout it cannot write", { timeout: 90_000 }, async () => {
  const { checkout, writable } = readOnlyCheckout();
  const { child, exited, output } = await npmStart(checkout, writable);
  const deadline = Date.now() + 60_000;
  let listening: RegExpExecArray | null = null;
  while (!(listening = /listening on (http:\/\/\S+)/.exec(output()))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not start the server:\n${output()}`);
    await sleep(50);
  }
  expect(output()).toContain("dist/ is current");
  expect((await fetch(`${listening[1]}/health`)).status).toBe(200);
  process.kill(-child.pid!, "SIGTERM");
  await exited;
});

test("with dist/ stale and the checkout read-only, npm start says what to do in one line and exits non-zero", { timeout: 90_000 }, async () => {
  const { checkout, writable } = readOnlyCheckout((dir) => appendFileSync(path.join(dir, "src/server/ids.ts"), "\n// edited after the build\n"));
  const { exited, output } = await npmStart(checkout, writable);
  expect(await exited).not.toBe(0);
  const lines = output().split("\n").filter((l) => l.includes("dist/"));
  expect(lines.some((l) => /dist\/ is out of date and cannot be rebuilt here .*npm run build/.test(l))).toBe(true);
  expect(output()).not.toMatch(/\n\s+at /);
});
