import { readFileSync } from "node:fs";
import path from "node:path";
import { ESLint } from "eslint";
import * as prettier from "prettier";
import { describe, expect, it } from "vitest";

/*
 * `npm run lint` (run by `npm test` before the suites) applies eslint.config.js and Prettier to the tree. Here the same
 * configurations meet a file that breaks them once, so a rule that stopped catching its case fails this file. The
 * files are real ones of the tree with one line added, linted as text under their own paths. Each case lints a file no
 * other case lints: typescript-eslint's project service keeps one program per process, and a file linted again with
 * other text was seen (once, in CI) to be type-checked as its earlier text, so a type-aware rule found nothing.
 */

const root = path.resolve(import.meta.dirname, "..");
const eslint = new ESLint({ cwd: root });

async function reports(file: string, addition: string): Promise<string[]> {
  const source = readFileSync(path.join(root, file), "utf8");
  const [result] = await eslint.lintText(`${source}\n${addition}\n`, { filePath: path.join(root, file) });
  return result.messages.map((m) => `${m.ruleId ?? "parse"}: ${m.message}`);
}

describe("eslint.config.js", () => {
  it("an explicit any outside the Pothos adapter is an error", async () => {
    const found = await reports("src/core/names.ts", "export const probe: any = 1;");
    expect(found).toEqual([expect.stringMatching(/^@typescript-eslint\/no-explicit-any: /)]);
  }, 120_000);

  it("an explicit any in a test is an error too", async () => {
    const found = await reports("test/support/raw-http.ts", "export const probe = (value: any) => value;");
    expect(found).toEqual([expect.stringMatching(/^@typescript-eslint\/no-explicit-any: /)]);
  }, 120_000);

  it("the Pothos adapter is the one module that may hold any", async () => {
    expect(await reports("src/graphql/pothos-dynamic.ts", "export const probe: any = 1;")).toEqual([]);
  }, 120_000);

  it("a type-checked rule runs: a floating promise is an error", async () => {
    const found = await reports("src/core/dates.ts", "export function probe() { Promise.resolve(1); }");
    expect(found).toEqual([expect.stringMatching(/^@typescript-eslint\/no-floating-promises: /)]);
  }, 120_000);

  it("the files as they are pass", async () => {
    expect(await reports("src/core/errors.ts", "")).toEqual([]);
  }, 120_000);
});

describe("Prettier", () => {
  const file = path.join(root, "src/core/names.ts");
  const source = readFileSync(file, "utf8");

  it("a file of the tree is formatted at 120 columns", async () => {
    const options = await prettier.resolveConfig(file);
    expect(options?.printWidth).toBe(120);
    expect(await prettier.check(source, { ...options, filepath: file })).toBe(true);
  });

  it("the same file with one line left unformatted fails the check", async () => {
    const options = await prettier.resolveConfig(file);
    expect(await prettier.check(`${source}export const probe = {a:1,  b : 2}\n`, { ...options, filepath: file })).toBe(
      false,
    );
  });

  it("generated and vendored files are not checked", async () => {
    for (const ignored of ["src/generated/pothos-types.ts", "schema/openapi.json", "package-lock.json", "README.md"]) {
      expect(
        (await prettier.getFileInfo(path.join(root, ignored), { ignorePath: path.join(root, ".prettierignore") }))
          .ignored,
        ignored,
      ).toBe(true);
    }
  });
});
