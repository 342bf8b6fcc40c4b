import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { loadConfig } from "../config.ts";
import { openDatabase } from "../db/prisma.ts";
import { migrate } from "../db/migrate.ts";
import { createApiKey, ensureAccount, listKeys, revokeKey, subscriptionStates } from "../auth/accounts.ts";
import { isMaintenance, setMaintenance } from "../server/maintenance.ts";
import { formatSummary, seedDemo } from "../seed/demo.ts";
import { progressBar } from "../seed/progress.ts";

interface Command {
  summary: string;
  usage: string;
  options?: Record<string, { type: "string" | "boolean" }>;
  run(values: Record<string, string | boolean | undefined>, positionals: string[]): Promise<void>;
}

const withDatabase = async <T>(work: (db: Awaited<ReturnType<typeof openDatabase>>) => Promise<T>): Promise<T> => {
  const { databaseUrl } = loadConfig();
  await migrate(databaseUrl);
  const db = await openDatabase(databaseUrl);
  try {
    return await work(db);
  } finally {
    await db.close();
  }
};

const required = (values: Record<string, unknown>, name: string): string => {
  const value = values[name];
  if (typeof value !== "string" || value.trim() === "") throw new Error(`--${name} is required`);
  return value;
};

const commands: Record<string, Command> = {
  "keys:create": {
    summary: "Create an API key (and the account, if new); prints the key alone on the last line",
    usage: 'keys:create --account <name> --scopes "<scope,scope|*>" [--name <label>] [--user <id>] [--expires <ISO date>]',
    options: { account: { type: "string" }, scopes: { type: "string" }, name: { type: "string" }, user: { type: "string" }, expires: { type: "string" } },
    run: (values) =>
      withDatabase(async ({ prisma }) => {
        const expiresAt = typeof values.expires === "string" ? new Date(values.expires) : null;
        if (expiresAt && Number.isNaN(expiresAt.getTime())) throw new Error(`--expires "${values.expires}" is not a date`);
        const userId = typeof values.user === "string" ? Number(values.user) : null;
        if (userId !== null && !Number.isInteger(userId)) throw new Error("--user takes a user id");
        const created = await createApiKey(prisma, {
          account: required(values, "account"), scopes: required(values, "scopes"), name: values.name as string | undefined, userId, expiresAt,
        });
        console.log(`Created key ${created.id} for account ${created.accountId}. Store it now: it is not shown again.`);
        console.log(created.key);
      }),
  },
  "keys:list": {
    summary: "List API keys (prefix, scopes, last use, expiry, revocation); never the keys themselves",
    usage: "keys:list [--account <name>]",
    options: { account: { type: "string" } },
    run: (values) =>
      withDatabase(async ({ prisma }) => {
        const keys = await listKeys(prisma, values.account as string | undefined);
        const when = (d: Date | null) => (d ? d.toISOString() : "-");
        console.log(["id", "account", "prefix", "name", "scopes", "user", "last used", "expires", "revoked"].join("\t"));
        for (const k of keys) {
          console.log([k.id, k.account, `${k.prefix}…`, k.name, k.scopes.join(","), k.userId ?? "-", when(k.lastUsedAt), when(k.expiresAt), when(k.revokedAt)].join("\t"));
        }
      }),
  },
  "keys:revoke": {
    summary: "Revoke an API key by id: its next request is refused",
    usage: "keys:revoke <id>",
    run: (_values, [id]) =>
      withDatabase(async ({ prisma }) => {
        if (!id || !/^\d+$/.test(id)) throw new Error("Give the key's id (see keys:list)");
        const key = await revokeKey(prisma, Number(id));
        console.log(`Revoked key ${key.id} (${key.prefix}…) of account ${key.account}`);
      }),
  },
  "accounts:create": {
    summary: "Create an account (with PERSCOM's default settings)",
    usage: "accounts:create --name <name>",
    options: { name: { type: "string" } },
    run: (values) =>
      withDatabase(async ({ prisma }) => {
        const name = required(values, "name").trim();
        if (await prisma.account.findUnique({ where: { name } })) throw new Error(`Account "${name}" already exists`);
        const account = await ensureAccount(prisma, name);
        console.log(`Created account ${account.id} "${account.name}"`);
      }),
  },
  "accounts:list": {
    summary: "List accounts: id, name, subscription state and number of API keys",
    usage: "accounts:list",
    run: () =>
      withDatabase(async ({ prisma }) => {
        const accounts = await prisma.account.findMany({ orderBy: { id: "asc" }, include: { _count: { select: { apiKeys: true } } } });
        console.log(["id", "name", "subscription", "keys"].join("\t"));
        for (const a of accounts) console.log([a.id, a.name, a.subscriptionStatus, a._count.apiKeys].join("\t"));
      }),
  },
  seed: {
    summary: "Write a deterministic demo organisation of any size into a new (or empty) account",
    usage: "seed --account <name> [--users <N, default 50>] [--seed <number, default 1>]",
    options: { account: { type: "string" }, users: { type: "string" }, seed: { type: "string" } },
    run: (values) =>
      withDatabase(async ({ prisma }) => {
        const account = required(values, "account");
        const users = values.users === undefined ? 50 : Number(values.users);
        if (!Number.isInteger(users) || users < 1) throw new Error("--users takes a positive whole number");
        const seed = values.seed === undefined ? 1 : Number(values.seed);
        if (!Number.isInteger(seed)) throw new Error("--seed takes a whole number");
        const summary = await seedDemo(prisma, { account, users, seed, progress: (total) => progressBar("Seeding", total) });
        console.log(formatSummary(account, summary));
      }),
  },
  "accounts:subscription": {
    summary: "Show or set an account's subscription state",
    usage: `accounts:subscription --account <name> [--status <${subscriptionStates.join("|")}>]`,
    options: { account: { type: "string" }, status: { type: "string" } },
    run: (values) =>
      withDatabase(async ({ prisma }) => {
        const account = await ensureAccount(prisma, required(values, "account"));
        if (typeof values.status === "string") {
          if (!subscriptionStates.includes(values.status)) throw new Error(`--status must be one of ${subscriptionStates.join(", ")}`);
          await prisma.account.update({ where: { id: account.id }, data: { subscriptionStatus: values.status } });
          console.log(`Account ${account.name}: subscription ${values.status}`);
        } else {
          console.log(`Account ${account.name}: subscription ${account.subscriptionStatus}`);
        }
      }),
  },
  maintenance: {
    summary: "Switch maintenance mode (every API request answers 503) on or off, or show it",
    usage: "maintenance [on|off]",
    run: (_values, [state]) =>
      withDatabase(async ({ prisma }) => {
        if (state === "on" || state === "off") await setMaintenance(prisma, state === "on");
        else if (state !== undefined) throw new Error('Say "on" or "off"');
        console.log(`Maintenance is ${(await isMaintenance(prisma)) ? "on" : "off"}`);
      }),
  },
  migrate: {
    summary: "Apply pending database migrations",
    usage: "migrate",
    run: async () => {
      const applied = await migrate(loadConfig().databaseUrl);
      console.log(applied.length ? `Applied ${applied.join(", ")}` : "Database is up to date");
    },
  },
  "schema:print": {
    summary: "Print the GraphQL schema (or write it with --out)",
    usage: "schema:print [--out <file>]",
    options: { out: { type: "string" } },
    run: async (values) => {
      const [{ getSchema }, { printedSchema }] = await Promise.all([import("../server/app.ts"), import("../graphql/schema.ts")]);
      const text = printedSchema(getSchema());
      if (typeof values.out === "string") writeFileSync(values.out, text);
      else process.stdout.write(text);
    },
  },
  "openapi:print": {
    summary: "Print the OpenAPI 3.1 document of the REST API (or write it with --out)",
    usage: "openapi:print [--out <file>]",
    options: { out: { type: "string" } },
    run: async (values) => {
      const { printOpenApi } = await import("../openapi/document.ts");
      const text = printOpenApi();
      if (typeof values.out === "string") writeFileSync(values.out, text);
      else process.stdout.write(text);
    },
  },
};

function help(): string {
  return ["Usage: npm run cli -- <command> [options]", "", ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(24)}${c.summary}`)].join("\n");
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    console.log(help());
    return name ? 0 : 1;
  }
  const command = commands[name];
  if (!command) {
    console.error(`Unknown command "${name}".\n${help()}`);
    return 1;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    console.log(`${command.summary}\nUsage: npm run cli -- ${command.usage}`);
    return 0;
  }
  try {
    const { values, positionals } = parseArgs({ args: rest, options: command.options ?? {}, allowPositionals: true, strict: true });
    await command.run(values, positionals);
    return 0;
  } catch (error) {
    console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
