// typescript-eslint's recommended and type-checked rules over src, test, scripts and bench.
// Off, with the reason: the no-unsafe-* family follows values typed `any` by Prisma's dynamic delegates and JSON
// bodies, and reports each use of one rather than the place it came from; no-explicit-any (on) is where those
// places are caught. The other rules turned off report patterns this code uses on purpose.
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["src/generated/**", "dist/**", "node_modules/**", "test-artifacts/**", "test/fixtures/**"] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/restrict-template-expressions": "off",
      "@typescript-eslint/no-base-to-string": "off",
      "@typescript-eslint/unbound-method": "off",
      "@typescript-eslint/require-await": "off",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_", ignoreRestSiblings: true },
      ],
      "@typescript-eslint/no-explicit-any": "error",
    },
  },
  {
    files: ["**/*.js", "**/*.mjs", "**/*.cjs"],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { process: "readonly", console: "readonly", URL: "readonly" },
    },
  },
  { files: ["**/*.cjs"], rules: { "@typescript-eslint/no-require-imports": "off" } },
  // The Pothos adapter (issue 41): the one module that bridges Pothos's compile-time-typed builder to the types and
  // fields the registry makes at run time; where a bridge needs `any`, it is there and nowhere else.
  { files: ["src/graphql/pothos-dynamic.ts"], rules: { "@typescript-eslint/no-explicit-any": "off" } },
);
