import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client as LibsqlClient, Config as LibsqlConfig } from "@libsql/client";
import { encodeGlobalID } from "@pothos/plugin-relay";
import { PrismaPg } from "@prisma/adapter-pg";
import {
  buildSchema,
  execute,
  GraphQLError,
  parse,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
} from "graphql";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { TransactionTrackingPool } from "../src/db/adapter-pg-checkout.ts";
import { LibsqlAdapterFactory, type AdapterClient } from "../src/db/libsql-client.ts";
import {
  connectionOf,
  cork,
  isPrepared,
  isPreparedOrSent,
  PgSubmittable,
  prepareValue,
  sendBind,
  sendDescribePortal,
  sendExecute,
  sendParse,
  sendSync,
  sendUnnamed,
  submitToClient,
  submitToPool,
  uncork,
  type DataRowMessage,
  type PgConnection,
  type RowDescriptionMessage,
} from "../src/db/pg-protocol.ts";
import { SqliteAdapterFactory, SqliteClient } from "../src/db/sqlite.ts";
import type { Account } from "../src/generated/prisma/client.ts";
import { createBuilder } from "../src/graphql/builder.ts";
import * as graphqlJs from "../src/graphql/graphql-js-internals.ts";
import {
  argMappersOf,
  definedResolver,
  exposedColumn,
  loadedCheckOf,
  prismaSelectExtension,
  readsPreloaded,
} from "../src/graphql/pothos-internals.ts";
import { testPostgresUrl, testProvider } from "./harness.ts";
import { requireService } from "./services.ts";

/*
 * The contracts of src/'s borrowed internals (docs/architecture.md, "Borrowed internals"): each module that uses a
 * library's private shape says in its header what it relies on, and these tests fail when the library changes it.
 */

const root = path.resolve(import.meta.dirname, "..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");

const adapters = [
  "src/db/pg-protocol.ts",
  "src/db/adapter-pg-checkout.ts",
  "src/db/libsql-client.ts",
  "src/graphql/graphql-js-internals.ts",
  "src/graphql/pothos-internals.ts",
  "src/auth/oidc/client-secret-internals.ts",
];

/** The `Checked against:` line of a module's header, as [package, version] pairs. */
function checkedAgainst(file: string): Array<[string, string]> {
  const line = read(file)
    .split("\n")
    .find((l) => l.startsWith(" * Checked against: "));
  if (!line) throw new Error(`${file}: no " * Checked against: <package> <version>, ..." line in its header`);
  return line
    .slice(" * Checked against: ".length)
    .split(",")
    .map((entry) => {
      const [name, version, ...rest] = entry.trim().split(/\s+/);
      if (!name || !version || rest.length) throw new Error(`${file}: "${entry.trim()}" is not "<package> <version>"`);
      return [name, version];
    });
}

describe("each adapter's header names the versions it was checked against", () => {
  const pkg = JSON.parse(read("package.json")) as {
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };
  const pinned = { ...pkg.devDependencies, ...pkg.dependencies };
  const installed = (name: string) =>
    (JSON.parse(read(`node_modules/${name}/package.json`)) as { version: string }).version;

  test.each(adapters)("%s: the versions are the pinned (or, for a transitive package, installed) ones", (file) => {
    const versions = checkedAgainst(file);
    expect(versions.length).toBeGreaterThan(0);
    for (const [name, version] of versions) {
      const expected = pinned[name] ?? installed(name);
      expect(
        version,
        `${file} was checked against ${name} ${version}, package.json has ${expected}: check the module again, then its header`,
      ).toBe(expected);
      expect(installed(name), `node_modules has another ${name} than package.json pins: npm ci`).toBe(expected);
    }
  });

  test.each(adapters)(
    "%s: its header says why the public API did not do, and docs/architecture.md lists it",
    (file) => {
      expect(read(file)).toMatch(/\* Why (the|pg's|no) public API did( not do)?[:]/);
      const section = read("docs/architecture.md").split("\n## Borrowed internals\n")[1]?.split("\n## ")[0] ?? "";
      const row = section.split("\n").find((l) => l.startsWith(`| \`${file}\` |`));
      expect(row, `docs/architecture.md, "Borrowed internals", has no row for ${file}`).toBeDefined();
      expect(row).toContain(
        checkedAgainst(file)
          .map(([name, version]) => `${name} ${version}`)
          .join(", "),
      );
    },
  );
});

describe("graphql-js's internal modules (src/graphql/graphql-js-internals.ts)", () => {
  const schema = buildSchema(`type Query { a: Int b(x: Int): String o: O } type O { c: Int d: Int }`);
  const document = parse(
    `query Q($skip: Boolean!) { ...F b(x: 1) o { c ... on O { d } } a @skip(if: $skip) } fragment F on Query { a }`,
  );
  const query = schema.getQueryType()!;
  const contextOf = (variableValues: Record<string, unknown>) => {
    const context = graphqlJs.buildExecutionContext({ schema, document, variableValues, contextValue: { ours: true } });
    if (!("schema" in context)) throw new Error(`unexpected errors: ${context.map((e) => e.message).join("; ")}`);
    return context;
  };

  test("each function we take is exported, with the arity we call it with", () => {
    // collectFields's sixth parameter (`onSelectionSet`) is optional; we pass five.
    const arities = {
      buildExecutionContext: 1,
      buildResolveInfo: 5,
      collectFields: 6,
      collectSubfields: 5,
      addPath: 3,
      pathToArray: 1,
    };
    for (const [name, arity] of Object.entries(arities)) {
      const fn = (graphqlJs as Record<string, unknown>)[name];
      expect(typeof fn, name).toBe("function");
      expect((fn as (...args: unknown[]) => unknown).length, name).toBe(arity);
    }
  });

  test("buildExecutionContext: the checked, coerced arguments of an execution, or its errors", () => {
    const context = contextOf({ skip: true });
    expect(context.schema).toBe(schema);
    expect(context.operation.name?.value).toBe("Q");
    expect(Object.keys(context.fragments)).toEqual(["F"]);
    expect(context.variableValues).toEqual({ skip: true });
    expect(context.contextValue).toEqual({ ours: true });
    const errors = graphqlJs.buildExecutionContext({ schema, document, variableValues: {} });
    expect(Array.isArray(errors)).toBe(true);
    expect((errors as GraphQLError[])[0]).toBeInstanceOf(GraphQLError);
    expect((errors as GraphQLError[])[0].message).toMatch(/\$skip/);
  });

  test("collectFields and collectSubfields: response keys in document order, fragments and @skip applied", () => {
    for (const skip of [true, false]) {
      const context = contextOf({ skip });
      const fields = graphqlJs.collectFields(
        schema,
        context.fragments,
        context.variableValues,
        query,
        context.operation.selectionSet,
      );
      expect(fields).toBeInstanceOf(Map);
      expect([...fields.keys()]).toEqual(["a", "b", "o"]);
      expect(fields.get("a")!.length).toBe(skip ? 1 : 2);
      const o = schema.getType("O") as GraphQLObjectType;
      const subfields = graphqlJs.collectSubfields(
        schema,
        context.fragments,
        context.variableValues,
        o,
        fields.get("o")!,
      );
      expect([...subfields.keys()]).toEqual(["c", "d"]);
    }
  });

  test("buildResolveInfo, addPath and pathToArray: graphql-js's resolve info and response paths", () => {
    const context = contextOf({ skip: false });
    const fields = graphqlJs.collectFields(
      schema,
      context.fragments,
      context.variableValues,
      query,
      context.operation.selectionSet,
    );
    const path = graphqlJs.addPath(undefined, "b", "Query");
    const info = graphqlJs.buildResolveInfo(context, query.getFields().b, fields.get("b")!, query, path);
    expect(info.fieldName).toBe("b");
    expect(info.fieldNodes).toBe(fields.get("b"));
    expect(info.parentType).toBe(query);
    expect(info.path).toBe(path);
    expect(info.operation).toBe(context.operation);
    expect(info.variableValues).toBe(context.variableValues);
    expect(info.schema).toBe(schema);
    expect(graphqlJs.pathToArray(graphqlJs.addPath(graphqlJs.addPath(undefined, "o", "Query"), 0, undefined))).toEqual([
      "o",
      0,
    ]);
  });
});

describe("Pothos's field extensions (src/graphql/pothos-internals.ts)", () => {
  const selectCalls: Array<{ args: unknown; nested: unknown; selected: string[] | undefined }> = [];
  const ownResolve = (row: { id: number }) => ({ total: row.id });
  let schema: GraphQLSchema;
  let account: GraphQLObjectType;
  const field = (name: string) => account.getFields()[name] as GraphQLField<unknown, unknown>;

  beforeAll(() => {
    // Our builder (its plugins and options), with a small schema of its own.
    const builder = createBuilder();
    const KeyPage = builder
      .objectRef<{ total: number }>("KeyPage")
      .implement({ fields: (t) => ({ total: t.exposeInt("total"), more: t.boolean({ resolve: () => false }) }) });
    builder.prismaObject("ApiKey", { fields: (t) => ({ name: t.exposeString("name") }) });
    builder.prismaObject("Account", {
      fields: (t) => ({
        name: t.exposeString("name"),
        apiKeys: t.relation("apiKeys"),
        keyPage: t.field({
          type: KeyPage,
          extensions: prismaSelectExtension((args, _ctx, nested, selected) => {
            selectCalls.push({ args, nested, selected: selected ? [...selected()] : undefined });
            return { select: { id: true } };
          }),
          resolve: ownResolve,
        }),
        byGlobalId: t.string({
          args: { ref: t.arg.globalID({ required: true }) },
          resolve: (_row, args) => JSON.stringify(args),
        }),
      }),
    });
    builder.queryType({
      fields: (t) => ({
        accounts: t.prismaField({ type: ["Account"], resolve: () => [{ id: 7, name: "seven" } as Account] }),
      }),
    });
    schema = builder.toSchema();
    account = schema.getType("Account") as GraphQLObjectType;
  });

  test("an exposed field names its column; it reads nothing preloaded", () => {
    expect(exposedColumn(field("name"))).toBe("name");
    expect(readsPreloaded(field("name"))).toBe(false);
    expect(exposedColumn(field("keyPage"))).toBeNull();
  });

  test("a field with a prisma select: marked preloaded, its own resolver kept beside the plugin's wrapper", () => {
    const keyPage = field("keyPage");
    expect(readsPreloaded(keyPage)).toBe(true);
    expect(definedResolver(keyPage)).toBe(ownResolve);
    expect(keyPage.resolve).toBeTypeOf("function");
    expect(keyPage.resolve).not.toBe(ownResolve);
    expect(loadedCheckOf(keyPage)).toBeNull();
  });

  test("a relation: preloaded, with a check that its data is on the row and a resolver that reads it there", () => {
    const apiKeys = field("apiKeys");
    expect(readsPreloaded(apiKeys)).toBe(true);
    const loaded = loadedCheckOf(apiKeys)!;
    expect(loaded).toBeTypeOf("function");
    expect(loaded({ apiKeys: [] }, {} as never, {})).toBe(true);
    expect(loaded({}, {} as never, {})).toBe(false);
    const rows = [{ name: "k" }];
    expect(definedResolver(apiKeys)!({ apiKeys: rows }, {}, {}, {} as never)).toBe(rows);
  });

  test("argument mappers: what the wrapped resolver applies first (relay's global ids decoded)", () => {
    const mappers = argMappersOf(field("byGlobalId"));
    expect(mappers.length).toBeGreaterThan(0);
    const mapped = mappers.reduce<unknown>((args, map) => map(args as Record<string, unknown>, {}, {} as never), {
      ref: encodeGlobalID("Account", 7),
    });
    expect(mapped).toEqual({ ref: { typename: "Account", id: "7" } });
    expect(argMappersOf(field("name"))).toEqual([]);
  });

  test("a prisma select function is called with the arguments, a nested planner and the names selected under the field", async () => {
    selectCalls.length = 0;
    const result = await execute({ schema, document: parse(`{ accounts { keyPage { total } } }`), contextValue: {} });
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({ accounts: [{ keyPage: { total: 7 } }] });
    expect(selectCalls.length).toBe(1);
    expect(selectCalls[0].args).toEqual({});
    expect(selectCalls[0].nested).toBeTypeOf("function");
    expect(selectCalls[0].selected).toEqual(["total"]);
  });
});

describe("@prisma/adapter-libsql's client (src/db/libsql-client.ts)", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "muster-contracts-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** `target`, recording the names of the properties read on it; `overrides` answer for some of them. */
  const recorded = <T extends object>(target: T, names: string[], overrides: Record<string, unknown> = {}): T =>
    new Proxy(target, {
      get(object, name) {
        if (typeof name === "string") names.push(name);
        if (typeof name === "string" && Object.hasOwn(overrides, name)) return overrides[name];
        const value = Reflect.get(object, name, object);
        return typeof value === "function" ? value.bind(object) : value;
      },
    });

  class Recording extends LibsqlAdapterFactory {
    configs: LibsqlConfig[] = [];
    clientReads: string[] = [];
    transactionReads: string[] = [];
    modes: unknown[] = [];
    protected openClient(config: LibsqlConfig, standard: () => LibsqlClient): AdapterClient {
      this.configs.push(config);
      const client = standard();
      const transaction = async (mode: "deferred") => {
        this.modes.push(mode);
        return recorded(await client.transaction(mode), this.transactionReads);
      };
      return recorded(client, this.clientReads, { transaction });
    }
  }

  const none = { args: [], argTypes: [] };

  test("connect and connectToShadowDb make their client through createClient, and use only what AdapterClient names", async () => {
    const url = `file:${path.join(dir, "standard.db")}`;
    const factory = new Recording({ url });
    const adapter = await factory.connect();
    expect(factory.configs.map((c) => c.url)).toEqual([url]);
    await adapter.executeScript("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL)");
    await adapter.executeRaw({
      sql: "INSERT INTO t (name) VALUES (?)",
      args: ["a"],
      argTypes: [{ scalarType: "string", arity: "scalar" }],
    });
    const tx = await adapter.startTransaction();
    await tx.executeRaw({ sql: "INSERT INTO t (name) VALUES ('b')", ...none });
    expect((await tx.queryRaw({ sql: "SELECT count(*) FROM t", ...none })).rows).toEqual([[2]]);
    await tx.commit();
    const rolledBack = await adapter.startTransaction();
    await rolledBack.executeRaw({ sql: "INSERT INTO t (name) VALUES ('c')", ...none });
    await rolledBack.rollback();
    const result = await adapter.queryRaw({ sql: "SELECT id, name FROM t ORDER BY id", ...none });
    expect(result.columnNames).toEqual(["id", "name"]);
    expect(result.rows).toEqual([
      [1, "a"],
      [2, "b"],
    ]);
    await adapter.dispose();
    const shadow = await factory.connectToShadowDb();
    expect(factory.configs.map((c) => c.url)).toEqual([url, ":memory:"]);
    await shadow.dispose();

    const adapterClient: Array<keyof AdapterClient> = ["execute", "executeMultiple", "transaction", "close"];
    expect(new Set(factory.clientReads)).toEqual(new Set(adapterClient));
    expect(factory.modes).toEqual(["deferred", "deferred"]);
    // `then`: awaiting the transaction asks whether it is a promise.
    expect(new Set(factory.transactionReads.filter((name) => name !== "then"))).toEqual(
      new Set(["execute", "commit", "rollback"]),
    );
  });

  test("the service's factory: a client of our own, whose rows are plain arrays, read by index", async () => {
    const url = `file:${path.join(dir, "ours.db")}`;
    const factory = new SqliteAdapterFactory({ url });
    const adapter = await factory.connect();
    expect(factory.client).toBeInstanceOf(SqliteClient);
    await adapter.executeScript("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL)");
    await adapter.executeRaw({ sql: "INSERT INTO t (name) VALUES ('a'), ('b')", ...none });
    const result = await adapter.queryRaw({ sql: "SELECT id, name FROM t ORDER BY id", ...none });
    expect(result.columnNames).toEqual(["id", "name"]);
    expect(result.rows).toEqual([
      [1, "a"],
      [2, "b"],
    ]);
    await adapter.dispose();
  });
});

const postgres = await requireService(`PostgreSQL at ${testPostgresUrl}`, async () => {
  const probe = new pg.Client({ connectionString: testPostgresUrl, connectionTimeoutMillis: 2000 });
  await probe.connect();
  await probe.end();
});

test.runIf(testProvider === "postgresql")(
  "PostgreSQL is reachable for the PostgreSQL contracts (MUSTER_TEST_DATABASE=postgresql)",
  () => {
    expect(postgres.reason).toBeNull();
  },
);

/** A submittable that runs `send` and records what pg hands it, settling on ReadyForQuery. */
class Probe extends PgSubmittable {
  readonly events: string[] = [];
  readonly dataTypes: number[][] = [];
  readonly rows: Array<Array<string | null>> = [];
  readonly errors: Array<Error & { code?: string }> = [];
  callback?: (error: Error | null, rows?: unknown) => void;
  readonly done: Promise<void>;
  #settle!: () => void;

  constructor(
    readonly send: (connection: PgConnection) => void,
    readonly name?: string,
    readonly text?: string,
  ) {
    super();
    this.done = new Promise((resolve) => (this.#settle = resolve));
  }

  submit(connection: PgConnection): Error | null {
    cork(connection);
    try {
      this.send(connection);
    } finally {
      uncork(connection);
    }
    return null;
  }

  handleRowDescription(message: RowDescriptionMessage) {
    this.events.push("RowDescription");
    this.dataTypes.push(message.fields.map((f) => f.dataTypeID));
  }

  handleDataRow(message: DataRowMessage) {
    this.events.push("DataRow");
    this.rows.push(message.fields);
  }

  handleCommandComplete() {
    this.events.push("CommandComplete");
  }

  handleError(error: Error) {
    this.events.push("Error");
    this.errors.push(error);
    // pg lets a submittable go after an error: no ReadyForQuery follows for it.
    this.#settle();
  }

  handleReadyForQuery() {
    this.events.push("ReadyForQuery");
    this.callback?.(null, this.rows);
    this.#settle();
  }
}

postgres.describe("pg's protocol (src/db/pg-protocol.ts)", () => {
  let pool: pg.Pool;
  let client: pg.PoolClient;
  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: testPostgresUrl, max: 2 });
    client = await pool.connect();
  });
  afterAll(async () => {
    client?.release();
    await pool?.end();
  });
  const run = async (probe: Probe) => {
    submitToClient(client, probe);
    await probe.done;
    return probe;
  };

  test("a client's connection has the message writers and the named-statement bookkeeping we use", () => {
    const connection = connectionOf(client);
    const arities = { parse: 1, bind: 1, describe: 1, execute: 1, sync: 0, sendCopyFail: 1 };
    for (const [name, arity] of Object.entries(arities)) {
      const fn = (connection as unknown as Record<string, unknown>)[name];
      expect(typeof fn, name).toBe("function");
      expect((fn as () => void).length, name).toBe(arity);
    }
    expect(connection.parsedStatements).toBeTypeOf("object");
    expect(connection.submittedNamedStatements).toBeTypeOf("object");
    expect(connection.stream.cork).toBeTypeOf("function");
    expect(connection.stream.uncork).toBeTypeOf("function");
  });

  test("prepareValue: pg's own conversion of parameters", () => {
    expect(prepareValue(null)).toBeNull();
    expect(prepareValue(undefined)).toBeNull();
    expect(prepareValue(5)).toBe("5");
    expect(prepareValue(true)).toBe("true");
    expect(prepareValue([1, null, "a"])).toBe('{"1",NULL,"a"}');
    const bytes = Buffer.from([1, 2]);
    expect(prepareValue(bytes)).toBe(bytes);
    expect(prepareValue({ a: 1 })).toBe('{"a":1}');
    // Extra arguments (Array.prototype.map's index and array) are ignored.
    expect([7].map(prepareValue)).toEqual(["7"]);
  });

  test("a named statement: Parse, Bind, Describe, Execute, Sync; pg records it as sent, then as prepared", async () => {
    const name = `muster_contract_${randomBytes(4).toString("hex")}`;
    const text = "SELECT $1::int AS n, NULL::text AS t";
    const connection = connectionOf(client);
    expect(isPreparedOrSent(connection, name)).toBe(false);
    let sentBeforeAnswer: [boolean, boolean] | undefined;
    const first = await run(
      new Probe(
        (c) => {
          sendParse(c, text, name);
          sentBeforeAnswer = [isPreparedOrSent(c, name), isPrepared(c, name)];
          sendBind(c, name, [prepareValue(7)]);
          sendDescribePortal(c);
          sendExecute(c);
          sendSync(c);
        },
        name,
        text,
      ),
    );
    expect(sentBeforeAnswer).toEqual([true, false]);
    expect(first.errors).toEqual([]);
    expect(first.events).toEqual(["RowDescription", "DataRow", "CommandComplete", "ReadyForQuery"]);
    expect(first.dataTypes).toEqual([[23, 25]]);
    expect(first.rows).toEqual([["7", null]]);
    expect(isPrepared(connection, name)).toBe(true);

    // Prepared, its columns known: Bind and Execute alone, and PostgreSQL sends no RowDescription without a Describe.
    const again = await run(
      new Probe((c) => {
        sendBind(c, name, [prepareValue(8)]);
        sendExecute(c);
        sendSync(c);
      }),
    );
    expect(again.events).toEqual(["DataRow", "CommandComplete", "ReadyForQuery"]);
    expect(again.rows).toEqual([["8", null]]);

    // Several statements and BEGIN/COMMIT in one write, one Sync: each answered in order, one ReadyForQuery.
    const batch = await run(
      new Probe((c) => {
        sendUnnamed(c, "BEGIN");
        for (const value of [1, 2]) {
          sendBind(c, name, [prepareValue(value)]);
          sendExecute(c);
        }
        sendUnnamed(c, "COMMIT");
        sendSync(c);
      }),
    );
    expect(batch.events).toEqual([
      "CommandComplete",
      "DataRow",
      "CommandComplete",
      "DataRow",
      "CommandComplete",
      "CommandComplete",
      "ReadyForQuery",
    ]);
    expect(batch.rows).toEqual([
      ["1", null],
      ["2", null],
    ]);
  });

  test("a failed statement: handleError with PostgreSQL's error and no ReadyForQuery after it; pg forgets a named one it sent", async () => {
    const name = `muster_contract_${randomBytes(4).toString("hex")}`;
    const failed = await run(
      new Probe(
        (c) => {
          sendParse(c, "SELECT no_such_column", name);
          sendBind(c, name, []);
          sendExecute(c);
          sendSync(c);
        },
        name,
        "SELECT no_such_column",
      ),
    );
    expect(failed.errors[0].code).toBe("42703");
    expect(isPreparedOrSent(connectionOf(client), name)).toBe(false);
    // The client's next submittable runs once PostgreSQL is ready again; the failed one heard nothing more.
    const next = await run(
      new Probe((c) => {
        sendUnnamed(c, "SELECT 1");
        sendSync(c);
      }),
    );
    expect(next.events).toEqual(["DataRow", "CommandComplete", "ReadyForQuery"]);
    expect(failed.events).toEqual(["Error"]);
  });

  test("COPY FROM STDIN, which our statements never send, is refused through handleCopyInResponse", async () => {
    await client.query("CREATE TEMP TABLE IF NOT EXISTS muster_contract_copy (n int)");
    const copy = await run(
      new Probe((c) => {
        sendParse(c, "COPY muster_contract_copy FROM STDIN", "");
        sendBind(c, "", []);
        sendExecute(c);
        sendSync(c);
      }),
    );
    expect(copy.events).toEqual(["Error"]);
    expect(copy.errors[0].message).toMatch(/No source stream defined/);
  });

  test("on a pool: pg checks a client out, answers through the submittable's callback and releases the client", async () => {
    const probe = new Probe((c) => {
      sendUnnamed(c, "SELECT 1");
      sendSync(c);
    });
    const answered = await submitToPool(pool, probe);
    expect(answered).toBe(probe.rows);
    expect(probe.events).toEqual(["DataRow", "CommandComplete", "ReadyForQuery"]);
    expect(pool.idleCount).toBeGreaterThanOrEqual(1);
    expect(pool.waitingCount).toBe(0);
  });
});

postgres.describe("@prisma/adapter-pg's checkout (src/db/adapter-pg-checkout.ts)", () => {
  let pool: TransactionTrackingPool;
  beforeAll(() => {
    pool = new TransactionTrackingPool({ connectionString: testPostgresUrl, max: 4 });
    pool.on("error", () => {});
  });
  afterAll(async () => {
    await pool?.end();
  });
  const none = { args: [], argTypes: [] };
  /** The backend process of `client`'s connection, as PostgreSQL told it (BackendKeyData). */
  const processOf = (client: pg.PoolClient) => (client as unknown as { processID: number }).processID;

  test("the adapter uses the pool it is given; a transaction's client is the one checked out while it starts; plain statements and our own checkouts are not taken for it", async () => {
    const adapter = await new PrismaPg(pool).connect();
    expect(adapter.underlyingDriver()).toBe(pool);

    const start = await pool.startTransaction();
    expect((await adapter.queryRaw({ sql: "SELECT 1", ...none })).rows).toEqual([[1]]);
    const own = await pool.checkout();
    expect(start.client(), "a plain statement's or our own checkout was taken for a transaction's").toBeNull();
    own.release();

    const tx = await adapter.startTransaction();
    const client = start.client();
    start.started();
    expect(client).not.toBeNull();
    const [[pid]] = (await tx.queryRaw({ sql: "SELECT pg_backend_pid()", ...none })).rows as [[number]];
    expect(pid).toBe(processOf(client!));
    // In a transaction on that client: a SET LOCAL lasts until its end.
    await tx.executeRaw({ sql: "SET LOCAL statement_timeout = '12345ms'", ...none });
    expect((await client!.query("SHOW statement_timeout")).rows).toEqual([{ statement_timeout: "12345ms" }]);
    await tx.executeRaw({ sql: "COMMIT", ...none });
    await tx.commit();
    expect((await pool.query("SHOW statement_timeout")).rows).not.toEqual([{ statement_timeout: "12345ms" }]);
    await adapter.dispose();
  });

  test("Prisma's $transaction starts the adapter's transaction before its callback runs", async () => {
    const { PrismaClient } = await import("../src/generated/prisma-pg/client.ts");
    const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
    try {
      const start = await pool.startTransaction();
      let client: pg.PoolClient | null = null;
      const pid = await prisma.$transaction(async (tx) => {
        client = start.client();
        start.started();
        const rows = await tx.$queryRawUnsafe<Array<{ pid: number }>>("SELECT pg_backend_pid() AS pid");
        return rows[0].pid;
      });
      expect(client).not.toBeNull();
      expect(pid).toBe(processOf(client!));
    } finally {
      await prisma.$disconnect();
    }
  });
});

describe("oidc-provider's client secret check (src/auth/oidc/client-secret-internals.ts)", () => {
  test("Client.prototype.compareClientSecret exists, and client authentication calls it for secret methods", async () => {
    const { default: OidcProvider } = await import("oidc-provider");
    const provider = new OidcProvider("http://localhost:1", {});
    expect(typeof (provider.Client.prototype as { compareClientSecret?: unknown }).compareClientSecret).toBe(
      "function",
    );
    const clientAuth = read("node_modules/oidc-provider/lib/shared/client_auth.js");
    expect(clientAuth).toMatch(/\.compareClientSecret\(/);
  });

  test("with it in place, a client whose metadata holds a secret's SHA-256 is authenticated by the secret itself", async () => {
    const { createHash } = await import("node:crypto");
    const { compareClientSecretsHashed } = await import("../src/auth/oidc/client-secret-internals.ts");
    const { default: OidcProvider } = await import("oidc-provider");
    const secret = "a-client-secret-of-the-test";
    const provider = new OidcProvider("http://localhost:1", {
      clients: [
        {
          client_id: "hashed",
          client_secret: createHash("sha256").update(secret).digest("hex"),
          redirect_uris: ["https://app.example/callback"],
        },
      ],
    });
    compareClientSecretsHashed(provider);
    const client = (await provider.Client.find("hashed")) as unknown as {
      compareClientSecret(actual: string): boolean | Promise<boolean>;
    };
    expect(await client.compareClientSecret(secret)).toBe(true);
    expect(await client.compareClientSecret("not-the-secret")).toBe(false);
    expect(await client.compareClientSecret(createHash("sha256").update(secret).digest("hex"))).toBe(false);
  });
});
