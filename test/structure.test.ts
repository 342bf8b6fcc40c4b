import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cruise, type ICruiseResult, type IForbiddenRuleType } from "dependency-cruiser";

/*
 * The layer rules of .dependency-cruiser.cjs (docs/architecture.md, "Layers"), which `npm run lint` applies to src/:
 * here applied to the real tree, and to small trees that break each rule once, so a rule that stopped catching its
 * case fails this file.
 */

const root = path.resolve(import.meta.dirname, "..");
const { forbidden } = createRequire(import.meta.url)(path.join(root, ".dependency-cruiser.cjs")) as {
  forbidden: IForbiddenRuleType[];
};
const made: string[] = [];
afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** The rules' violations in `baseDir`'s src/, as `rule: from → to` lines. */
async function violations(baseDir: string): Promise<string[]> {
  const { output } = await cruise(["src"], {
    validate: true,
    ruleSet: { forbidden },
    baseDir,
    tsPreCompilationDeps: true,
    exclude: { path: "^src/generated/" },
    doNotFollow: { path: ["node_modules", "^src/generated/"] },
  });
  const result = output as ICruiseResult;
  return result.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
}

/** A tree of the given files (path → source) under a fresh folder. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "muster-layers-"));
  made.push(dir);
  for (const [file, source] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), source);
  }
  return dir;
}

describe("layers", () => {
  it("src/ imports one way, with no cycle", async () => {
    expect(await violations(root)).toEqual([]);
  });

  it("an import of a layer above fails", async () => {
    const dir = tree({
      "src/db/store.ts": 'import { schema } from "../graphql/schema.ts";\nexport const store = schema;\n',
      "src/graphql/schema.ts": "export const schema = 1;\n",
    });
    expect(await violations(dir)).toEqual(["layer-db: src/db/store.ts → src/graphql/schema.ts"]);
  });

  it("a type-only import of a layer above fails too", async () => {
    const dir = tree({
      "src/resources/define.ts":
        'import type { Context } from "../graphql/context.ts";\nexport type Hook = (ctx: Context) => void;\n',
      "src/graphql/context.ts": "export interface Context { id: number }\n",
    });
    expect(await violations(dir)).toEqual(["layer-resources: src/resources/define.ts → src/graphql/context.ts"]);
  });

  it("an import of a layer below passes", async () => {
    const dir = tree({
      "src/graphql/schema.ts": 'import { store } from "../db/store.ts";\nexport const schema = store;\n',
      "src/db/store.ts": "export const store = 1;\n",
    });
    expect(await violations(dir)).toEqual([]);
  });

  it("a cycle within one layer fails, type imports included", async () => {
    const dir = tree({
      "src/core/a.ts": 'import type { B } from "./b.ts";\nexport interface A { b: B }\n',
      "src/core/b.ts": 'import type { A } from "./a.ts";\nexport interface B { a?: A }\n',
    });
    const found = await violations(dir);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^no-cycle: src\/core\/(a\.ts → src\/core\/b|b\.ts → src\/core\/a)\.ts$/);
  });

  it("a module outside every layer fails", async () => {
    const dir = tree({
      "src/helpers/strings.ts": 'import { names } from "../core/names.ts";\nexport const strings = names;\n',
      "src/core/names.ts": "export const names = 1;\n",
    });
    expect(await violations(dir)).toEqual(["layered-folders-only: src/helpers/strings.ts → src/core/names.ts"]);
  });
});
