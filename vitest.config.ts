import { defineConfig } from "vitest/config";

export default defineConfig({
  // graphql ships CJS and ESM builds; one realm for all of them avoids "another module or realm" errors.
  resolve: { alias: [{ find: /^graphql$/, replacement: "graphql/index.js" }] },
  // Tests that start the server or the CLI as a process run the built bundle (dist/), built once per run here.
  test: { include: ["test/**/*.test.ts"], globalSetup: ["test/support/built.ts"], fileParallelism: false, testTimeout: 60_000, hookTimeout: 60_000 },
});
