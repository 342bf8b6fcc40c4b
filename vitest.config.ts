import { defineConfig } from "vitest/config";

export default defineConfig({
  // graphql ships CJS and ESM builds; one realm for all of them avoids "another module or realm" errors.
  resolve: { alias: [{ find: /^graphql$/, replacement: "graphql/index.js" }] },
  test: { include: ["test/**/*.test.ts"], fileParallelism: false, testTimeout: 60_000, hookTimeout: 60_000 },
});
