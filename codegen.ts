import type { CodegenConfig } from "@graphql-codegen/cli";

const scalars = { DateTime: "string", JSON: "unknown", File: "File" };

// Typed documents for the operations first-party clients and the tests send through /graphql.
const config: CodegenConfig = {
  schema: "schema/schema.graphql",
  documents: ["test/operations/**/*.graphql"],
  generates: {
    // Result and variable types of the named operations above.
    "src/generated/graphql.ts": {
      plugins: ["typescript-operations"],
      config: { enumsAsTypes: true, useTypeImports: true, scalars },
    },
    // The client preset: `graphql()` from src/generated/client/ turns a document string into a TypedDocumentNode.
    // It also writes persisted-documents.json (id → document) beside it: `npm run generate` copies it to
    // schema/persisted-documents.json, the trusted documents the server runs by `documentId`.
    "src/generated/client/": {
      documents: ["test/operations/**/*.graphql", "test/typed-client.test.ts"],
      preset: "client",
      presetConfig: { fragmentMasking: false, persistedDocuments: { hashAlgorithm: "sha256" } },
      config: {
        enumsAsTypes: true,
        useTypeImports: true,
        scalars,
        emitLegacyCommonJSImports: false,
        documentMode: "string",
      },
    },
  },
};
export default config;
