import { afterAll, beforeAll, expect, test } from "vitest";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { parse } from "graphql";
import { loadConfig } from "../src/core/config.ts";
import { estimateRows } from "../src/graphql/cost.ts";
import { getSchema } from "../src/server/app.ts";
import { spawnServer, type ServerProcess } from "./support/spawn-server.ts";

/**
 * The README's examples, run as written against a real server (its own process, a fresh database, the demo
 * organisation of the first start and the key it printed): every curl line of the `sh` blocks, every document
 * of the `graphql` blocks (a cursor or global id they use must have come out of an earlier example's answer), the
 * names the typed-client example imports, and the GraphQL section's limits and cost arithmetic. So the README cannot rot.
 */
const readme = readFileSync(path.resolve(import.meta.dirname, "../README.md"), "utf8");
/** The `### GraphQL` section, up to the next `##` heading. */
const graphqlSection = /\n### GraphQL\n([\s\S]*?)\n##? /.exec(readme)?.[1] ?? "";
const blocks = (lang: string) =>
  [...readme.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1]);

/** Each command of the `sh` blocks that is a curl call, continuation lines joined, in README order. */
const curls = blocks("sh")
  .flatMap((block) => block.replace(/\\\n\s*/g, " ").split("\n"))
  .map((line) => line.trim())
  .filter((line) => line.startsWith("curl "));
/** Each document of the `graphql` blocks (a new one starts at each line beginning with query, mutation or `{`). */
const documents = blocks("graphql").flatMap((block) =>
  block
    .split(/\n(?=query|mutation|\{)/)
    .map((d) => d.trim())
    .filter(Boolean),
);

const run = promisify(execFile);
let server: ServerProcess;
let key: string;

beforeAll(async () => {
  server = await spawnServer({ NODE_ENV: "development" });
  key = /API key \(scope \*, shown once\): (mst_\S+)/.exec(server.output())?.[1] ?? "";
  expect(key, server.output()).toMatch(/^mst_/);
}, 120_000);
afterAll(() => server?.stop());

test("the README has the examples this test runs", () => {
  expect(curls.length).toBeGreaterThanOrEqual(5);
  for (const task of [
    "-X POST localhost:8080/v2/ranks",
    "/rank-records -H",
    "rank-records?include=",
    "/v2/users/search",
  ]) {
    expect(
      curls.some((c) => c.includes(task)),
      task,
    ).toBe(true);
  }
  expect(documents.length).toBeGreaterThanOrEqual(2);
  // The graph's shapes: a connection paged by cursor, typed where/orderBy, a Relay node lookup, payload mutations.
  const shown = (pattern: RegExp) => documents.some((d) => pattern.test(d));
  expect(shown(/pageInfo \{[^}]*endCursor/), "a connection with pageInfo").toBe(true);
  expect(shown(/\(first: \d+, after: "/), "a page after a cursor").toBe(true);
  expect(shown(/where: \{/) && shown(/orderBy: \[\{/), "where and orderBy").toBe(true);
  expect(shown(/\bnode\(id: "/), "node(id:)").toBe(true);
  expect(shown(/^mutation \{\s+create\w+\(input: \{[^]*\) \{\s+\w+ \{/), "a mutation reading its payload").toBe(true);
});

/** Every string of the answers of the GraphQL examples run so far: where a later example's cursors and ids come from. */
const answered = new Set<string>();
const collect = (value: unknown): void => {
  if (typeof value === "string") answered.add(value);
  else if (value && typeof value === "object") Object.values(value).forEach(collect);
};

test.each(curls.map((c, i) => [i + 1, c]))("curl example %i runs: %s", { timeout: 30_000 }, async (_n, command) => {
  const host = new URL(server.base).host;
  const script = command.replace(/^curl /, `curl -sS -w '\\n%{http_code}' `).replaceAll("localhost:8080", host);
  const { stdout } = await run("bash", ["-c", script], { env: { ...process.env, KEY: key } });
  const status = Number(stdout.slice(stdout.lastIndexOf("\n") + 1));
  const body = stdout.slice(0, stdout.lastIndexOf("\n"));
  expect(status, body).toBeGreaterThanOrEqual(200);
  expect(status, body).toBeLessThan(300);
  expect(JSON.parse(body).data, body).toBeDefined();
});

test.each(documents.map((d, i) => [i + 1, d]))(
  "GraphQL example %i runs: %s",
  { timeout: 30_000 },
  async (_n, query) => {
    // A cursor or a global id is copied from an answer, never made up: it must be one an earlier example was given.
    for (const [, literal] of query.matchAll(/\b(?:after|before|id): "([^"]*)"/g))
      expect(answered, literal).toContain(literal);
    const response = await fetch(`${server.base}/graphql`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ query }),
    });
    const body = (await response.json()) as { data?: Record<string, unknown>; errors?: unknown };
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(Object.values(body.data ?? {}).every((v) => v !== null)).toBe(true);
    collect(body.data);
  },
);

test("the GraphQL section states the configured defaults of the caps and the budget", () => {
  const config = loadConfig({});
  expect(graphqlSection).toContain("REST API above is unchanged");
  for (const [value, name] of [
    [config.graphqlDefaultFirst, "GRAPHQL_DEFAULT_FIRST"],
    [config.maxPageSize, "MAX_PAGE_SIZE"],
    [config.graphqlMaxComplexity, "GRAPHQL_MAX_COMPLEXITY"],
    [config.maxRowsPerRequest, "MAX_ROWS_PER_REQUEST"],
  ] as const) {
    expect(graphqlSection, name).toMatch(new RegExp(`\\b${value}\\s+\\(\`${name}\``));
  }
  expect(graphqlSection).toContain("`GRAPHQL_LIST_ESTIMATE`");
});

test(
  "as the GraphQL section says, a first above MAX_PAGE_SIZE makes its field null with an error naming first",
  { timeout: 30_000 },
  async () => {
    expect(graphqlSection).toContain(
      "above it the field is `null` with a `VALIDATION` error, status 422, naming `first`",
    );
    const over = loadConfig({}).maxPageSize + 1;
    const response = await fetch(`${server.base}/graphql`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({
        query: `{ ranks(first: 1) { totalCount } user(rowId: 2) { rankRecords(first: ${over}) { totalCount } } }`,
      }),
    });
    const body = (await response.json()) as {
      data: { ranks: { totalCount: number }; user: { rankRecords: unknown } };
      errors: Array<{ path: string[]; extensions: { code: string; status: number; errors: object } }>;
    };
    expect(response.status).toBe(200);
    expect(body.data.ranks.totalCount).toBeGreaterThan(0);
    expect(body.data.user.rankRecords).toBeNull();
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0]).toMatchObject({
      path: ["user", "rankRecords"],
      extensions: { code: "VALIDATION", status: 422 },
    });
    expect(Object.keys(body.errors[0].extensions.errors)).toEqual(["first"]);
  },
);

test(
  "the GraphQL section's cost examples: the estimate it states, one run and one refused by the server",
  { timeout: 30_000 },
  async () => {
    const examples = [
      ...graphqlSection.matchAll(
        /`(statuses[^`]*)` is\s+([\d\s+×()]+?) = ([\d,]+)(?: rows)?\s+and\s+(runs|is refused)/g,
      ),
    ];
    expect(examples.map((m) => m[4])).toEqual(["runs", "is refused"]);
    const config = loadConfig({});
    for (const [, selection, arithmetic, total, outcome] of examples) {
      const stated = Number(total.replaceAll(",", ""));
      // eslint-disable-next-line @typescript-eslint/no-implied-eval -- evaluates the README's own arithmetic (digits, +, ×, parentheses)
      expect(Function(`return ${arithmetic.replaceAll("×", "*")}`)(), arithmetic).toBe(stated);
      expect(estimateRows(getSchema(), parse(`{ ${selection} }`), null, {}, { config }), selection).toBe(stated);
      const response = await fetch(`${server.base}/graphql`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ query: `{ ${selection} }` }),
      });
      const body = (await response.json()) as {
        data?: { statuses?: unknown };
        errors?: Array<{ message: string; extensions: { code: string } }>;
      };
      if (outcome === "runs") {
        expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
        expect(body.data?.statuses).toBeTruthy();
      } else {
        expect(response.status).toBe(422);
        expect(body.errors?.[0]?.extensions.code).toBe("VALIDATION");
        expect(body.errors?.[0]?.message).toContain(
          `about ${stated} rows, over the budget of ${config.graphqlMaxComplexity} (GRAPHQL_MAX_COMPLEXITY)`,
        );
      }
    }
  },
);

test("the typed-client example imports what the client preset generates", async () => {
  const example = blocks("ts").find((b) => b.includes("src/generated/client"));
  expect(example).toBeDefined();
  const imported = /import \{([^}]*)\} from "\.\/src\/generated\/client\/graphql\.ts"/
    .exec(example!)![1]
    .split(",")
    .map((n) => n.trim());
  const generated = readFileSync(path.resolve(import.meta.dirname, "../src/generated/client/graphql.ts"), "utf8");
  for (const name of imported) {
    const bare = name.replace(/^type\s+/, "");
    expect(generated, bare).toMatch(new RegExp(`export (const|class|type) ${bare}\\b`));
  }
});
