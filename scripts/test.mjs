#!/usr/bin/env node
// `npm test`: the whole suite on SQLite, then again on PostgreSQL (MUSTER_TEST_DATABASE=postgresql; each harness
// creates and drops a database of its own). When PostgreSQL is unreachable the second pass is skipped with a note,
// or fails under MUSTER_REQUIRE_SERVICES=1 (CI). Arguments go to both vitest runs.
import { spawnSync } from "node:child_process";
import pg from "pg";

const args = process.argv.slice(2);
const postgresUrl = process.env.MUSTER_TEST_POSTGRES_URL || "postgresql://postgres@127.0.0.1:5432/postgres";
const required = process.env.MUSTER_REQUIRE_SERVICES === "1";

function vitest(env) {
  const run = spawnSync("npx", ["vitest", "run", ...args], { stdio: "inherit", env: { ...process.env, ...env } });
  return run.status ?? 1;
}

async function reachable() {
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

const only = process.env.MUSTER_TEST_DATABASE;
let failed = false;
if (only !== "postgresql") {
  console.log("\n== Test pass 1/2: SQLite ==\n");
  failed = vitest({ MUSTER_TEST_DATABASE: "sqlite" }) !== 0;
}
if (only !== "sqlite") {
  const why = await reachable();
  if (why) {
    const message = `PostgreSQL at ${postgresUrl.replace(/\/\/[^@]*@/, "//***@")} is unreachable (${why})`;
    if (required) {
      console.error(`\n== Test pass 2/2: PostgreSQL FAILED: ${message}; MUSTER_REQUIRE_SERVICES=1 requires it. ==\n`);
      failed = true;
    } else {
      console.warn(
        `\n== Test pass 2/2: PostgreSQL SKIPPED: ${message}. Set MUSTER_REQUIRE_SERVICES=1 to make this a failure. ==\n`,
      );
    }
  } else {
    console.log("\n== Test pass 2/2: PostgreSQL ==\n");
    failed = vitest({ MUSTER_TEST_DATABASE: "postgresql" }) !== 0 || failed;
  }
}
process.exit(failed ? 1 : 0);
