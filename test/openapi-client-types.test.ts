/**
 * What a client generated from schema/openapi.json with openapi-typescript sees: every JSON column has its real type
 * (a field's options are `{label, value}` objects, a webhook's events strings), never `unknown`. The types are
 * generated into a temporary folder and a small client file is type-checked against them, strict, without casts.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import openapiTS, { astToString } from "openapi-typescript";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const documentPath = path.join(root, "schema", "openapi.json");
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "muster-openapi-types-"));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Properties of the document whose schema says nothing but "Any JSON value.", by JSON pointer. */
function untypedProperties(value: unknown, at = ""): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => untypedProperties(v, `${at}/${i}`));
  if (value === null || typeof value !== "object") return [];
  const found: string[] = [];
  const record = value as Record<string, unknown>;
  for (const [key, child] of Object.entries(record)) {
    if (key === "properties" && child && typeof child === "object") {
      for (const [name, schema] of Object.entries(child as Record<string, unknown>)) {
        const s = schema as Record<string, unknown>;
        // A search value, which may be anything a column holds, says so in words of its own.
        if (s && typeof s === "object" && Object.keys(s).length === 1 && s.description === "Any JSON value.")
          found.push(`${at}/properties/${name}`);
      }
    }
    found.push(...untypedProperties(child, `${at}/${key}`));
  }
  return found;
}

test("no property of schema/openapi.json is described only as any JSON value", async () => {
  const text = await readFile(documentPath, "utf8");
  expect(text).not.toContain("Any JSON value.");
  expect(untypedProperties(JSON.parse(text))).toEqual([]);
});

const client = `
import type { components, paths } from "./openapi";

type IsUnknownOrAny<T> = unknown extends T ? true : false;
type Typed<T> = IsUnknownOrAny<T> extends true ? never : T;

type FieldItem = paths["/{version}/fields/{field}"]["get"]["responses"][200]["content"]["application/json"];
type WebhookItem = paths["/{version}/webhooks/{webhook}"]["get"]["responses"][200]["content"]["application/json"];

export function read(field: FieldItem, webhook: WebhookItem, row: components["schemas"]["Field"]): string[] {
  const label: string = field.data.options[0].label;
  const value: string = row.options[0].value;
  const event: string = webhook.data.events[0];
  const typedLabel: Typed<typeof field.data.options[0]["label"]> = label;
  const typedEvent: Typed<typeof webhook.data.events[0]> = event;
  const typedOptions: Typed<typeof field.data.options> = field.data.options;
  const typedEvents: Typed<typeof webhook.data.events> = webhook.data.events;
  return [label, value, event, typedLabel, typedEvent, String(typedOptions.length), String(typedEvents.length)];
}
`;

test("a client generated with openapi-typescript reads field.options[0].label and webhook.events[0] as strings, without casts", async () => {
  const ast = await openapiTS(new URL(`file://${documentPath}`));
  const types = astToString(ast);
  await writeFile(path.join(dir, "openapi.d.ts"), types);
  await writeFile(path.join(dir, "client.ts"), client);
  const program = ts.createProgram([path.join(dir, "client.ts")], {
    strict: true,
    noEmit: true,
    noUncheckedIndexedAccess: false,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    skipLibCheck: true,
    types: [],
  });
  const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
  expect(problems).toEqual([]);
  // The check itself catches an untyped value: the same client against `unknown` properties fails.
  await writeFile(path.join(dir, "openapi.d.ts"), types.replace(/options: \{[\s\S]*?\}\[\];/g, "options: unknown;"));
  const loose = ts.createProgram([path.join(dir, "client.ts")], {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    module: ts.ModuleKind.ESNext,
  });
  expect(ts.getPreEmitDiagnostics(loose).length).toBeGreaterThan(0);
}, 120_000);
