import { defineConfig } from "vitest/config";

/**
 * Files that must start from fresh modules: test/round-trips.test.ts pins the PostgreSQL round trips of a write, which
 * depend on src/db/pg-pipeline.ts's process-wide named statements (500 at most); after the rest of the suite in the
 * same process they differ (a shared run on PostgreSQL: 5 of its 11 tests failed; alone it passes).
 */
const fresh = ["test/round-trips.test.ts"];

export default defineConfig({
  // graphql ships CJS and ESM builds; one realm for all of them avoids "another module or realm" errors.
  resolve: { alias: [{ find: /^graphql$/, replacement: "graphql/index.js" }] },
  test: {
    // Tests that start the server or the CLI as a process run the built bundle (dist/), built once per run here.
    globalSetup: ["test/support/built.ts"],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      // The files run one after another in one worker that keeps its imported modules: the schema, the registry and
      // Prisma's clients are built once per run instead of once per file. Each file makes its own databases and servers.
      { extends: true, test: { name: "shared", include: ["test/**/*.test.ts"], exclude: fresh, isolate: false } },
      { extends: true, test: { name: "fresh", include: fresh, isolate: true } },
    ],
  },
});
