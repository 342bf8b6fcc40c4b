import type { CodegenConfig } from "@graphql-codegen/cli";

// Typed documents for the operations the tests send through /graphql.
const config: CodegenConfig = {
  schema: "schema/schema.graphql",
  documents: ["test/operations/**/*.graphql"],
  generates: {
    "src/generated/graphql.ts": {
      plugins: ["typescript-operations"],
      config: { enumsAsTypes: true, useTypeImports: true, scalars: { DateTime: "string", JSON: "unknown", File: "File" } },
    },
  },
};
export default config;
