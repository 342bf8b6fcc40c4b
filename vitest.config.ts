import { defineConfig } from "vitest/config";

export default defineConfig({
  // graphql ships CJS and ESM builds; one realm for all of them avoids "another module or realm" errors.
  resolve: { alias: [{ find: /^graphql$/, replacement: "graphql/index.js" }] },
  test: {
    include: ["test/**/*.test.ts"],
    // Tests that start the server or the CLI as a process run the built bundle (dist/), built once per run here.
    globalSetup: ["test/support/built.ts"],
    fileParallelism: false,
    // The files run one after another in one worker that keeps its imported modules: the schema, the registry and
    // Prisma's clients are built once per run instead of once per file. Each file still makes its own databases and
    // servers; nothing a file leaves behind is read by the next.
    isolate: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
