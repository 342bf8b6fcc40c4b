import { spawnSync } from "node:child_process";
import path from "node:path";

/**
 * The built JavaScript that production runs (`npm start`: `node --enable-source-maps dist/server.mjs`, see
 * scripts/build.mjs). Tests that start the server or the CLI as a process run these; vitest's global setup
 * (`buildOnce` below) rebuilds them from the current sources first, so they are never stale.
 */
const root = path.resolve(import.meta.dirname, "../..");
export const serverArgs = ["--enable-source-maps", path.join(root, "dist/server.mjs")];
export const cliArgs = ["--enable-source-maps", path.join(root, "dist/cli.mjs")];

/** vitest globalSetup: one build per test run (about a second). */
export default function buildOnce() {
  const build = spawnSync(process.execPath, [path.join(root, "scripts/build.mjs"), "--quiet"], {
    cwd: root,
    encoding: "utf8",
  });
  if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}${build.stderr}`);
}
