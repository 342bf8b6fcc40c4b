import { writeFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { loadConfig } from "../core/config.ts";
import { openDatabase } from "../db/prisma.ts";
import { migrate } from "../db/migrate.ts";
import {
  createApiKey,
  ensureAccount,
  setAccountSlug,
  listKeys,
  requireAccount,
  revokeKey,
  subscriptionStates,
} from "../auth/accounts.ts";
import { knownScopes } from "../auth/keys.ts";
import { rotateSsoSecret } from "../resources/sso-secret.ts";
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, passwordProblem, setPassword } from "../auth/passwords.ts";
import { createSignInLink, linkUrl } from "../auth/sign-in-links.ts";
import { parseDate } from "../core/dates.ts";
import { isMaintenance, setMaintenance } from "../http/maintenance.ts";
import { formatSummary, seedDemo } from "../seed/demo.ts";
import { progressBar } from "../seed/progress.ts";

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

// Argument parsers: commander reports what they throw as "option '--users <count>' argument '-5' is invalid. <message>".
const positiveInteger = (text: string): number => {
  const value = Number(text);
  if (!/^\s*\d+\s*$/.test(text) || !Number.isSafeInteger(value) || value < 1)
    throw new InvalidArgumentError("Expected a positive integer.");
  return value;
};
const integer = (text: string): number => {
  const value = Number(text);
  if (!/^\s*-?\d+\s*$/.test(text) || !Number.isSafeInteger(value))
    throw new InvalidArgumentError("Expected an integer.");
  return value;
};
const nonEmpty = (text: string): string => {
  if (text.trim() === "") throw new InvalidArgumentError("Expected a value.");
  return text;
};
const futureDate = (text: string): Date => {
  let date: Date;
  try {
    date = parseDate(text);
  } catch {
    throw new InvalidArgumentError("Expected an ISO 8601 date such as 2030-01-31 or 2030-01-31T12:00:00Z.");
  }
  if (date.getTime() <= Date.now()) throw new InvalidArgumentError("That is in the past: a key must expire later.");
  return date;
};

/** The scope names a key can hold, one line per model (view, create, update, delete first), for `keys:create --help`. */
function scopesHelp(): string {
  const abilities = ["view", "create", "update", "delete"];
  const order = (scope: string) => {
    const index = abilities.indexOf(scope.split(":")[0]);
    return index === -1 ? abilities.length : index;
  };
  const byModel = new Map<string, string[]>();
  for (const scope of knownScopes) {
    const model = scope.split(":")[1];
    byModel.set(model, [...(byModel.get(model) ?? []), scope]);
  }
  const lines = [...byModel.keys()].sort().map(
    (model) =>
      `  ${byModel
        .get(model)!
        .sort((a, b) => order(a) - order(b))
        .join("  ")}`,
  );
  return ["", "Scopes: * (all of them), or any of these, separated by commas or spaces:", ...lines].join("\n");
}

/**
 * Commander checks required options before unknown ones, so `--acount x` would be told that --account is missing
 * instead of getting a suggestion; required options are therefore declared as plain ones and checked here.
 */
function required<T>(value: T | undefined, flag: string): T {
  if (value === undefined) throw new Error(`required option '${flag}' not specified`);
  return value;
}

const print = (text: string, out: string | undefined) =>
  out === undefined ? process.stdout.write(text) : writeFileSync(out, text);

const program = new Command("npm run cli --")
  .description("Muster's admin commands. Errors are one line on stderr and exit 1.")
  .exitOverride()
  .showSuggestionAfterError()
  // Commander puts "(Did you mean ...?)" on a line of its own; scripts get each error as one line.
  .configureOutput({ outputError: (text, write) => write(`${text.trim().replace(/\s*\n\s*/g, " ")}\n`) });

program
  .command("keys:create")
  .description("Create an API key (and the account, if new); prints the key alone on the last line")
  .option("--account <name>", "(required) the account the key belongs to (created if new)", nonEmpty)
  .option(
    "--scopes <scopes>",
    '(required) the scopes it holds, separated by commas or spaces, or "*" (listed below)',
    nonEmpty,
  )
  .option("--name <label>", "a label, shown by keys:list", "API key")
  .option("--user <id>", "the account's user it acts as (the author of what it writes, /me)", positiveInteger)
  .option("--expires <date>", "when it stops working (ISO 8601, in the future); never if not given", futureDate)
  .option(
    "--publishable",
    "a key to embed in public pages: only view scopes of public resources and create:submission, no private field",
  )
  .option(
    "--origins <origins>",
    "(required with --publishable) the origins it is used from, separated by commas: https://unit.example",
    nonEmpty,
  )
  .addHelpText("after", scopesHelp)
  .action(
    (options: {
      account?: string;
      scopes?: string;
      name: string;
      user?: number;
      expires?: Date;
      publishable?: boolean;
      origins?: string;
    }) => {
      const account = required(options.account, "--account <name>");
      const scopes = required(options.scopes, "--scopes <scopes>");
      if (options.origins !== undefined && !options.publishable)
        throw new Error("--origins is for publishable keys: add --publishable");
      return withDatabase(async ({ store }) => {
        const created = await createApiKey(store, {
          account,
          scopes,
          name: options.name,
          userId: options.user ?? null,
          expiresAt: options.expires ?? null,
          publishable: options.publishable ?? false,
          origins: options.origins
            ?.split(",")
            .map((o) => o.trim())
            .filter(Boolean),
        });
        console.log(`Created key ${created.id} for account ${created.accountId}. Store it now: it is not shown again.`);
        console.log(created.key);
      });
    },
  );

program
  .command("keys:list")
  .description("List API keys (prefix, scopes, last use, expiry, revocation); never the keys themselves")
  .option("--account <name>", "only this account's keys (an error if there is no such account)", nonEmpty)
  .action((options: { account?: string }) =>
    withDatabase(async ({ prisma }) => {
      const keys = await listKeys(prisma, options.account);
      const when = (d: Date | null) => (d ? d.toISOString() : "-");
      const head = ["id", "account", "prefix", "name", "scopes", "user", "last used", "expires", "revoked", "origins"];
      console.log(head.join("\t"));
      for (const k of keys) {
        console.log(
          [
            k.id,
            k.account,
            `${k.prefix}…`,
            k.name,
            k.scopes.join(","),
            k.userId ?? "-",
            when(k.lastUsedAt),
            when(k.expiresAt),
            when(k.revokedAt),
            k.publishable ? k.origins.join(",") : "-",
          ].join("\t"),
        );
      }
    }),
  );

program
  .command("keys:revoke")
  .description("Revoke an API key by id: its next request is refused. A key already revoked is an error (exit 1)")
  .addArgument(new Argument("<id>", "the key's id (see keys:list)").argParser(positiveInteger))
  .action((id: number) =>
    withDatabase(async ({ prisma }) => {
      const key = await revokeKey(prisma, id);
      console.log(`Revoked key ${key.id} (${key.prefix}…) of account ${key.account}`);
    }),
  );

program
  .command("accounts:create")
  .description("Create an account (with PERSCOM's default settings)")
  .option("--name <name>", "(required) the account's name", nonEmpty)
  .option(
    "--slug <slug>",
    "its name in public addresses (/v2/public/<slug>/...); made from the name if not given",
    nonEmpty,
  )
  .action((options: { name?: string; slug?: string }) => {
    const name = required(options.name, "--name <name>").trim();
    return withDatabase(async ({ prisma, store }) => {
      if (await prisma.account.findUnique({ where: { name } })) throw new Error(`Account "${name}" already exists`);
      const account = await ensureAccount(store, name, options.slug);
      console.log(`Created account ${account.id} "${account.name}" (slug ${account.slug})`);
    });
  });

program
  .command("accounts:slug")
  .description("Change an account's slug, the name its public pages are served under (/v2/public/<slug>/...)")
  .addArgument(new Argument("<account>", "the account's name"))
  .addArgument(new Argument("<slug>", "lower-case letters, digits and inner hyphens, at most 63 characters"))
  .action((account: string, slug: string) =>
    withDatabase(async ({ prisma }) => {
      const updated = await setAccountSlug(prisma, account, slug);
      console.log(`Account ${updated.id} "${updated.name}" is now at /v2/public/${updated.slug}/`);
    }),
  );

program
  .command("accounts:list")
  .description("List accounts: id, name, subscription state and number of API keys")
  .action(() =>
    withDatabase(async ({ prisma }) => {
      const accounts = await prisma.account.findMany({
        orderBy: { id: "asc" },
        include: { _count: { select: { apiKeys: true } } },
      });
      console.log(["id", "name", "subscription", "keys", "slug"].join("\t"));
      for (const a of accounts)
        console.log([a.id, a.name, a.subscriptionStatus, a._count.apiKeys, a.slug ?? "-"].join("\t"));
    }),
  );

program
  .command("seed")
  .description("Write a deterministic demo organisation of any size into a new (or empty) account")
  .option("--account <name>", "(required) the account to fill (created if new)", nonEmpty)
  .option("--users <count>", "how many users", positiveInteger, 50)
  .option("--seed <number>", "the same seed writes the same organisation", integer, 1)
  .action((options: { account?: string; users: number; seed: number }) => {
    const account = required(options.account, "--account <name>");
    return withDatabase(async ({ store }) => {
      const summary = await seedDemo(store, {
        account,
        users: options.users,
        seed: options.seed,
        progress: (total) => progressBar("Seeding", total),
      });
      console.log(formatSummary(account, summary));
    });
  });

program
  .command("accounts:subscription")
  .description("Show an account's subscription state, or set it with --status")
  .option("--account <name>", "(required) an existing account", nonEmpty)
  .addOption(new Option("--status <state>", "the state to set").choices(subscriptionStates))
  .action((options: { account?: string; status?: string }) => {
    const name = required(options.account, "--account <name>");
    return withDatabase(async ({ prisma }) => {
      const account = await requireAccount(prisma, name);
      if (options.status !== undefined) {
        await prisma.account.update({ where: { id: account.id }, data: { subscriptionStatus: options.status } });
        console.log(`Account ${account.name}: subscription ${options.status}`);
      } else {
        console.log(`Account ${account.name}: subscription ${account.subscriptionStatus}`);
      }
    });
  });

program
  .command("sso:rotate")
  .description(
    "Give an account a new SSO secret, printed on the last line: other sites sign SSO tokens (HS256 JWTs) with it; tokens signed with the old one stop working",
  )
  .option("--account <name>", "(required) an existing account", nonEmpty)
  .action((options: { account?: string }) => {
    const name = required(options.account, "--account <name>");
    return withDatabase(async ({ prisma, store }) => {
      const account = await requireAccount(prisma, name);
      const secret = await rotateSsoSecret(store, account.id);
      console.log(`Account ${account.name} (id ${account.id}, the \`tenant\` claim): new SSO secret, shown once:`);
      console.log(secret);
    });
  });

/** The account's person with this email, or an error naming both. */
async function requirePerson(db: Db, accountName: string, email: string) {
  const account = await requireAccount(db.prisma, accountName);
  const person = await db.prisma.user.findFirst({
    where: { accountId: account.id, email: email.trim() },
    select: { id: true, email: true },
  });
  if (!person) throw new Error(`Account ${account.name} has no user with the email ${email.trim()}`);
  return { account, person };
}

program
  .command("users:password")
  .description("Set (or replace) the password a person of an account signs in with")
  .option("--account <name>", "(required) an existing account", nonEmpty)
  .option("--email <email>", "(required) the email of one of its users", nonEmpty)
  .option(
    "--password <password>",
    `(required) the new password, ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`,
  )
  .action((options: { account?: string; email?: string; password?: string }) => {
    const name = required(options.account, "--account <name>");
    const email = required(options.email, "--email <email>");
    const password = required(options.password, "--password <password>");
    const problem = passwordProblem(password);
    if (problem) throw new Error(problem);
    return withDatabase(async (db) => {
      const { account, person } = await requirePerson(db, name, email);
      await setPassword(db, person.id, password);
      console.log(`Account ${account.name}: password set for user ${person.id} (${person.email})`);
    });
  });

program
  .command("users:invite")
  .description(
    "Make a one-time invitation link with which a person of an account chooses their password (7 days); prints the link on the last line",
  )
  .option("--account <name>", "(required) an existing account", nonEmpty)
  .option("--email <email>", "(required) the email of one of its users", nonEmpty)
  .action((options: { account?: string; email?: string }) => {
    const name = required(options.account, "--account <name>");
    const email = required(options.email, "--email <email>");
    return withDatabase(async (db) => {
      const { account, person } = await requirePerson(db, name, email);
      const link = await createSignInLink(db.store, {
        accountId: account.id,
        userId: person.id,
        purpose: "invitation",
      });
      const config = loadConfig();
      const baseUrl = config.publicUrl ?? `http://localhost:${config.port}`;
      console.log(
        `Account ${account.name}: invitation for user ${person.id} (${person.email}), usable once until ${link.expiresAt.toISOString()}; earlier unused invitations no longer work:`,
      );
      console.log(linkUrl(baseUrl, link.token));
    });
  });

type Db = Awaited<ReturnType<typeof openDatabase>>;
/** What the webhook mutations answer of the webhook (each selects some of these). */
interface WebhookAnswer {
  rowId: number;
  url: string;
  secret: string;
}
/** What `testWebhook` answers of the delivery it made. */
interface Delivery {
  deliveryId: string;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  succeeded: boolean;
}

/**
 * Runs a GraphQL operation of the public API as the account, holding every scope: the same checks, writes and answers
 * as a request with a key of the account. A field error is thrown as one line, naming the fields (`url: ...`).
 */
async function asAccount<T>(
  db: Db,
  accountId: number,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<T> {
  const [{ buildSchemas }, { execute, parse }, { createLocalEventBus }] = await Promise.all([
    import("../graphql/schema.ts"),
    import("graphql"),
    import("../events/bus.ts"),
  ]);
  const config = loadConfig();
  const events = createLocalEventBus();
  const contextValue = {
    store: db.store,
    prisma: db.prisma,
    provider: db.provider,
    config,
    auth: {
      kind: "cli",
      accountId,
      keyId: null,
      userId: null,
      clientId: null,
      scopes: new Set(["*"]),
      credential: "cli",
    },
    authFailure: null,
    baseUrl: config.publicUrl ?? `http://localhost:${config.port}`,
    requestId: randomUUID(),
    traceId: randomUUID(),
    loaders: new Map(),
    events,
    notify: true,
  };
  const result = await execute({
    schema: buildSchemas().public,
    document: parse(query),
    variableValues: variables,
    contextValue,
  });
  await events.close();
  const error = result.errors?.[0];
  if (error) {
    const fields = error.extensions?.errors as Record<string, string[]> | undefined;
    throw new Error(
      fields
        ? Object.entries(fields)
            .map(([field, messages]) => `${field}: ${messages.join(" ")}`)
            .join("; ")
        : error.message,
    );
  }
  return result.data as T;
}

/** The account of webhook `id`, or an error naming it. */
async function webhookAccount(db: Db, id: number): Promise<number> {
  const webhook = await db.prisma.webhook.findUnique({ where: { id }, select: { accountId: true } });
  if (!webhook) throw new Error(`No webhook ${id}`);
  return webhook.accountId;
}

const eventList = (text: string): string[] => {
  const types = text.split(/[\s,]+/).filter(Boolean);
  if (!types.length) throw new InvalidArgumentError('Expected event types separated by commas, or "*".');
  return types;
};

/** The account's role named `role`, or an error naming the roles it has. */
async function requireRole(db: Db, accountId: number, role: string): Promise<{ id: number; name: string }> {
  const roles = await db.prisma.role.findMany({ where: { accountId }, select: { id: true, name: true } });
  const found = roles.find((r) => r.name === role.trim());
  if (!found) throw new Error(`No role named ${role.trim()}: the account has ${roles.map((r) => r.name).join(", ")}`);
  return found;
}

const permissionList = (text: string): string[] => {
  const permissions = text.split(/[\s,]+/).filter(Boolean);
  if (!permissions.length) throw new InvalidArgumentError('Expected scope names separated by commas, or "*".');
  return permissions;
};

program
  .command("roles:list")
  .description("List an account's roles: id, name, built in, permissions, how many people hold it")
  .option("--account <name>", "(required) an existing account", nonEmpty)
  .action((options: { account?: string }) => {
    const name = required(options.account, "--account <name>");
    return withDatabase(async (db) => {
      const account = await requireAccount(db.prisma, name);
      const roles = await db.prisma.role.findMany({
        where: { accountId: account.id },
        orderBy: { id: "asc" },
        select: { id: true, name: true, builtIn: true, permissions: true, _count: { select: { userLinks: true } } },
      });
      console.log(["id", "name", "built in", "permissions", "people"].join("\t"));
      for (const r of roles)
        console.log(
          [
            r.id,
            r.name,
            r.builtIn ? "yes" : "no",
            (r.permissions as string[]).join(",") || "-",
            r._count.userLinks,
          ].join("\t"),
        );
    });
  });

program
  .command("roles:create")
  .description("Create a role: a name and permissions (scope names, or * for all; an unknown one names the closest)")
  .option("--account <name>", "(required) an existing account", nonEmpty)
  .option("--name <name>", "(required) the role's name, unique in the account", nonEmpty)
  .option(
    "--permissions <scopes>",
    "(required) scope names separated by commas (view:user,view:rank), or *",
    permissionList,
  )
  .option("--description <text>", "what it is for")
  .action((options: { account?: string; name?: string; permissions?: string[]; description?: string }) => {
    const accountName = required(options.account, "--account <name>");
    const input = {
      name: required(options.name, "--name <name>"),
      permissions: required(options.permissions, "--permissions <scopes>"),
      description: options.description ?? null,
    };
    return withDatabase(async (db) => {
      const account = await requireAccount(db.prisma, accountName);
      const { createRole } = await asAccount<{ createRole: { role: { rowId: number; name: string } } }>(
        db,
        account.id,
        "mutation($input: CreateRoleInput!) { createRole(input: $input) { role { rowId name } } }",
        { input },
      );
      console.log(`Created role ${createRole.role.rowId} (${createRole.role.name}) in account ${account.name}`);
    });
  });

program
  .command("roles:delete")
  .description("Delete a role by name (not a built-in one); the people who held it lose its permissions at once")
  .option("--account <name>", "(required) an existing account", nonEmpty)
  .option("--name <name>", "(required) the role's name", nonEmpty)
  .action((options: { account?: string; name?: string }) => {
    const accountName = required(options.account, "--account <name>");
    const roleName = required(options.name, "--name <name>");
    return withDatabase(async (db) => {
      const account = await requireAccount(db.prisma, accountName);
      const role = await requireRole(db, account.id, roleName);
      await asAccount(db, account.id, "mutation($id: Int!) { deleteRole(rowId: $id) { role { rowId } } }", {
        id: role.id,
      });
      console.log(`Deleted role ${role.id} (${role.name}) of account ${account.name}`);
    });
  });

for (const [command, verb] of [
  ["roles:grant", "attach"],
  ["roles:revoke", "detach"],
] as const) {
  program
    .command(command)
    .description(
      verb === "attach"
        ? "Give a person a role (by email and role name)"
        : "Take a role from a person (by email and role name); it takes effect on their next request",
    )
    .option("--account <name>", "(required) an existing account", nonEmpty)
    .option("--email <email>", "(required) the person's email", nonEmpty)
    .option("--role <name>", "(required) the role's name", nonEmpty)
    .action((options: { account?: string; email?: string; role?: string }) => {
      const accountName = required(options.account, "--account <name>");
      const email = required(options.email, "--email <email>");
      const roleName = required(options.role, "--role <name>");
      return withDatabase(async (db) => {
        const { account, person } = await requirePerson(db, accountName, email);
        const role = await requireRole(db, account.id, roleName);
        const mutation =
          verb === "attach"
            ? "mutation($user: Int!, $role: Int!) { attachUserRoles(rowId: $user, items: [{ rowId: $role }]) { attachedRowIds } }"
            : "mutation($user: Int!, $role: Int!) { detachUserRoles(rowId: $user, rowIds: [$role]) { detachedRowIds } }";
        await asAccount(db, account.id, mutation, { user: person.id, role: role.id });
        console.log(
          verb === "attach"
            ? `${person.email} now holds ${role.name} in account ${account.name}`
            : `${person.email} no longer holds ${role.name} in account ${account.name}`,
        );
      });
    });
}

program
  .command("webhooks:list")
  .description(
    "List an account's webhooks: id, url, event types, enabled, why the service disabled it; never the secrets",
  )
  .option("--account <name>", "(required) an existing account", nonEmpty)
  .action((options: { account?: string }) => {
    const name = required(options.account, "--account <name>");
    return withDatabase(async (db) => {
      const account = await requireAccount(db.prisma, name);
      const webhooks = await db.prisma.webhook.findMany({
        where: { accountId: account.id },
        orderBy: { id: "asc" },
        select: { id: true, url: true, events: true, enabled: true, disabledReason: true },
      });
      console.log(["id", "url", "events", "enabled", "disabled reason"].join("\t"));
      for (const w of webhooks)
        console.log(
          [w.id, w.url, (w.events as string[]).join(","), w.enabled ? "yes" : "no", w.disabledReason ?? "-"].join("\t"),
        );
    });
  });

program
  .command("webhooks:create")
  .description("Create a webhook; prints its signing secret alone on the last line (shown only this once)")
  .option("--account <name>", "(required) an existing account", nonEmpty)
  .option("--url <url>", "(required) where events are POSTed (http or https)", nonEmpty)
  .option(
    "--events <types>",
    '(required) event types separated by commas (rankrecord.created,user.updated), or "*" for all',
    eventList,
  )
  .option("--description <text>", "what it is for")
  .option("--disabled", "create it disabled")
  .action(
    (options: { account?: string; url?: string; events?: string[]; description?: string; disabled?: boolean }) => {
      const name = required(options.account, "--account <name>");
      const input = {
        url: required(options.url, "--url <url>"),
        events: required(options.events, "--events <types>"),
        description: options.description ?? null,
        enabled: !options.disabled,
      };
      return withDatabase(async (db) => {
        const account = await requireAccount(db.prisma, name);
        const { createWebhook } = await asAccount<{ createWebhook: { webhook: WebhookAnswer } }>(
          db,
          account.id,
          "mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { webhook { rowId url secret } } }",
          { input },
        );
        const { rowId, url, secret } = createWebhook.webhook;
        console.log(
          `Created webhook ${rowId} for account ${account.name}: ${url}. Store its secret now: it is not shown again.`,
        );
        console.log(secret);
      });
    },
  );

program
  .command("webhooks:delete")
  .description("Delete a webhook by id, with its delivery log")
  .addArgument(new Argument("<id>", "the webhook's id (see webhooks:list)").argParser(positiveInteger))
  .action((id: number) =>
    withDatabase(async (db) => {
      const { deleteWebhook } = await asAccount<{ deleteWebhook: { webhook: WebhookAnswer } }>(
        db,
        await webhookAccount(db, id),
        "mutation($id: Int!) { deleteWebhook(rowId: $id) { webhook { rowId url } } }",
        { id },
      );
      console.log(`Deleted webhook ${id} (${deleteWebhook.webhook.url})`);
    }),
  );

program
  .command("webhooks:rotate-secret")
  .description("Give a webhook a new signing secret; prints it alone on the last line (shown only this once)")
  .addArgument(new Argument("<id>", "the webhook's id (see webhooks:list)").argParser(positiveInteger))
  .action((id: number) =>
    withDatabase(async (db) => {
      const { rotateWebhookSecret } = await asAccount<{ rotateWebhookSecret: { webhook: WebhookAnswer } }>(
        db,
        await webhookAccount(db, id),
        "mutation($id: Int!) { rotateWebhookSecret(rowId: $id) { webhook { secret } } }",
        { id },
      );
      console.log(
        `Rotated the secret of webhook ${id}: deliveries are signed with this one from now on. Store it now: it is not shown again.`,
      );
      console.log(rotateWebhookSecret.webhook.secret);
    }),
  );

program
  .command("webhooks:test")
  .description("POST a signed webhook.test event to a webhook now, and print how it answered")
  .addArgument(new Argument("<id>", "the webhook's id (see webhooks:list)").argParser(positiveInteger))
  .action((id: number) =>
    withDatabase(async (db) => {
      const { testWebhook } = await asAccount<{ testWebhook: { webhookDelivery: Delivery } }>(
        db,
        await webhookAccount(db, id),
        "mutation($id: Int!) { testWebhook(rowId: $id) { webhookDelivery { deliveryId statusCode durationMs error succeeded } } }",
        { id },
      );
      const d = testWebhook.webhookDelivery;
      console.log(
        `${d.succeeded ? "Delivered" : "Failed"}: ${d.statusCode === null ? "no answer" : `HTTP ${d.statusCode}`} in ${d.durationMs} ms${d.error ? ` (${d.error})` : ""}; delivery ${d.deliveryId}`,
      );
    }),
  );

program
  .command("webhooks:deliveries")
  .description("Print a webhook's delivery log, newest first")
  .addArgument(new Argument("<id>", "the webhook's id (see webhooks:list)").argParser(positiveInteger))
  .option("--limit <count>", "how many attempts", positiveInteger, 20)
  .action((id: number, options: { limit: number }) =>
    withDatabase(async (db) => {
      await webhookAccount(db, id);
      const deliveries = await db.prisma.webhookDelivery.findMany({
        where: { webhookId: id },
        orderBy: { id: "desc" },
        take: options.limit,
      });
      console.log(["id", "created", "event", "event id", "attempt", "status", "ms", "error"].join("\t"));
      for (const d of deliveries) {
        console.log(
          [
            d.id,
            d.createdAt.toISOString(),
            d.eventType,
            d.eventId ?? "-",
            d.attempt,
            d.statusCode ?? "-",
            d.durationMs,
            d.error ?? "-",
          ].join("\t"),
        );
      }
    }),
  );

/** The account of automation `id`, or an error naming it. */
async function automationAccount(db: Db, id: number): Promise<number> {
  const automation = await db.prisma.automation.findUnique({ where: { id }, select: { accountId: true } });
  if (!automation) throw new Error(`No automation ${id}`);
  return automation.accountId;
}

/** The GraphQL input of an automation as REST takes it (a starter's, or a file's: snake_case attributes). */
const automationInput = (attributes: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(attributes).map(([key, value]) => [
      key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()),
      value,
    ]),
  );

program
  .command("automations:list")
  .description("List an account's automations: id, name, enabled, triggers, schedule, next run, priority")
  .option("--account <name>", "(required) an existing account", nonEmpty)
  .action((options: { account?: string }) => {
    const name = required(options.account, "--account <name>");
    return withDatabase(async (db) => {
      const account = await requireAccount(db.prisma, name);
      const automations = await db.prisma.automation.findMany({
        where: { accountId: account.id },
        orderBy: { id: "asc" },
        select: {
          id: true,
          name: true,
          enabled: true,
          triggers: true,
          schedule: true,
          nextRunAt: true,
          priority: true,
        },
      });
      console.log(["id", "name", "enabled", "triggers", "schedule", "next run", "priority"].join("\t"));
      for (const a of automations)
        console.log(
          [
            a.id,
            a.name,
            a.enabled ? "yes" : "no",
            (a.triggers as string[]).join(",") || "-",
            a.schedule ?? "-",
            a.nextRunAt?.toISOString() ?? "-",
            a.priority,
          ].join("\t"),
        );
    });
  });

program
  .command("automations:starters")
  .description("List the starter templates automations:create --starter makes, with the parameters each needs")
  .action(async () => {
    const { AUTOMATION_STARTERS } = await import("../resources/automation-starters.ts");
    for (const s of AUTOMATION_STARTERS) {
      const parameters = Object.entries(s.parameters).map(
        ([key, p]) => `--${key.replace(/_/g, "-")} (${p.description})`,
      );
      console.log(`${s.name}\t${s.description}${parameters.length ? `\tneeds ${parameters.join(", ")}` : ""}`);
    }
  });

program
  .command("automations:create")
  .description(
    "Create an automation from a starter template (--starter, see automations:starters) or from a JSON file of its attributes as REST takes them (--file); prints its webhook signing secret alone on the last line (shown only this once)",
  )
  .option("--account <name>", "(required) an existing account", nonEmpty)
  .option("--starter <name>", "a starter template's name", nonEmpty)
  .option(
    "--file <path>",
    "a JSON file of the automation's attributes (name, triggers, schedule, condition, actions...)",
    nonEmpty,
  )
  .option("--url <url>", "the URL a starter posts to (promotion-announcement)", nonEmpty)
  .option("--award-id <id>", "the award a starter gives (award-on-qualifications)", positiveInteger)
  .option("--role-id <id>", "the role whose people a starter messages (weekly-roster-digest)", positiveInteger)
  .option("--name <text>", "its name, instead of the starter's", nonEmpty)
  .option("--disabled", "create it disabled")
  .action(
    (options: {
      account?: string;
      starter?: string;
      file?: string;
      url?: string;
      awardId?: number;
      roleId?: number;
      name?: string;
      disabled?: boolean;
    }) => {
      const accountName = required(options.account, "--account <name>");
      if ((options.starter === undefined) === (options.file === undefined))
        throw new Error("Give --starter <name> or --file <path> (one of them)");
      return withDatabase(async (db) => {
        const account = await requireAccount(db.prisma, accountName);
        let attributes: Record<string, unknown>;
        if (options.starter !== undefined) {
          const { starterAutomation } = await import("../resources/automation-starters.ts");
          try {
            attributes = {
              ...starterAutomation(options.starter, {
                url: options.url,
                award_id: options.awardId,
                role_id: options.roleId,
              }),
            };
          } catch (error) {
            const fields = (error as { fieldErrors?: Record<string, string[]> }).fieldErrors;
            throw new Error(
              fields
                ? Object.values(fields)
                    .flat()
                    .join(" ")
                    .replace(/needs (\w+)/g, (_, key: string) => `needs --${key.replace(/_/g, "-")}`)
                : (error as Error).message,
            );
          }
        } else {
          const { readFileSync } = await import("node:fs");
          let parsed: unknown;
          try {
            parsed = JSON.parse(readFileSync(options.file!, "utf8"));
          } catch (error) {
            throw new Error(`Could not read ${options.file} as JSON: ${(error as Error).message}`);
          }
          if (!parsed || typeof parsed !== "object" || Array.isArray(parsed))
            throw new Error(`${options.file} must hold a JSON object of the automation's attributes`);
          attributes = parsed as Record<string, unknown>;
        }
        if (options.name !== undefined) attributes.name = options.name;
        if (options.disabled) attributes.enabled = false;
        const { createAutomation } = await asAccount<{
          createAutomation: { automation: { rowId: number; name: string; secret: string } };
        }>(
          db,
          account.id,
          "mutation($input: CreateAutomationInput!) { createAutomation(input: $input) { automation { rowId name secret } } }",
          { input: automationInput(attributes) },
        );
        const { rowId, name, secret } = createAutomation.automation;
        console.log(
          `Created automation ${rowId} (${name}) for account ${account.name}. Its webhook actions sign with this secret; store it now: it is not shown again.`,
        );
        console.log(secret);
      });
    },
  );

for (const enabled of [true, false]) {
  program
    .command(enabled ? "automations:enable" : "automations:disable")
    .description(
      enabled
        ? "Enable an automation: it runs for events written from now on (and its schedule's next due time)"
        : "Disable an automation: it runs no more until enabled",
    )
    .addArgument(new Argument("<id>", "the automation's id (see automations:list)").argParser(positiveInteger))
    .action((id: number) =>
      withDatabase(async (db) => {
        const { updateAutomation } = await asAccount<{
          updateAutomation: { automation: { name: string; nextRunAt: string | null } };
        }>(
          db,
          await automationAccount(db, id),
          "mutation($id: Int!, $input: AutomationPatch!) { updateAutomation(rowId: $id, input: $input) { automation { name nextRunAt } } }",
          { id, input: { enabled } },
        );
        const a = updateAutomation.automation;
        console.log(
          `${enabled ? "Enabled" : "Disabled"} automation ${id} (${a.name})${a.nextRunAt ? `; next run ${a.nextRunAt}` : ""}`,
        );
      }),
    );
}

program
  .command("automations:runs")
  .description("Print an automation's run log, newest first: the event, the condition's value, each action's outcome")
  .addArgument(new Argument("<id>", "the automation's id (see automations:list)").argParser(positiveInteger))
  .option("--limit <count>", "how many runs", positiveInteger, 20)
  .action((id: number, options: { limit: number }) =>
    withDatabase(async (db) => {
      await automationAccount(db, id);
      const runs = await db.prisma.automationRun.findMany({
        where: { automationId: id },
        orderBy: { id: "desc" },
        take: options.limit,
      });
      console.log(
        ["id", "created", "event", "event id", "scheduled for", "status", "condition", "ms", "outcomes", "error"].join(
          "\t",
        ),
      );
      for (const r of runs) {
        const outcomes = ((r.outcomes as Array<{ type?: string; status?: string }> | null) ?? [])
          .map((o) => `${o.type}:${o.status}`)
          .join(",");
        console.log(
          [
            r.id,
            r.createdAt.toISOString(),
            r.eventType ?? "-",
            r.eventId ?? "-",
            r.scheduledFor?.toISOString() ?? "-",
            r.status,
            r.conditionValue === null ? "-" : String(r.conditionValue),
            r.durationMs ?? "-",
            outcomes || "-",
            r.error ?? "-",
          ].join("\t"),
        );
      }
    }),
  );

const collect = (value: string, previous: string[] = []): string[] => [...previous, nonEmpty(value)];
const scopeList = (text: string): string[] => {
  const scopes = text.split(/[\s,]+/).filter(Boolean);
  if (!scopes.length) throw new InvalidArgumentError('Expected scope names separated by commas, or "*".');
  return scopes;
};

program
  .command("clients:create")
  .description(
    'Register an OAuth client (an application that signs the account\'s people in); with --json prints {"client_id", "client_secret"?} (the secret of a confidential client, shown only this once)',
  )
  .option("--account <name>", "(required) an existing account", nonEmpty)
  .option("--name <name>", "(required) the client's name, shown on the consent page", nonEmpty)
  .option("--redirect-uri <uri>", "where people are sent back with a code (repeat for several)", collect)
  .option("--public", "a public client (single-page or native app): no secret, PKCE required")
  .option("--scopes <list>", 'API scopes it may ask for, separated by commas (view:user,view:rank), or "*"', scopeList)
  .option("--origin <origin>", "a browser origin allowed to call the token endpoints (repeat for several)", collect)
  .option("--post-logout-uri <uri>", "where people may be sent after signing out (repeat for several)", collect)
  .option("--json", "print the answer as JSON")
  .action(
    (options: {
      account?: string;
      name?: string;
      redirectUri?: string[];
      public?: boolean;
      scopes?: string[];
      origin?: string[];
      postLogoutUri?: string[];
      json?: boolean;
    }) => {
      const accountName = required(options.account, "--account <name>");
      const input = {
        name: required(options.name, "--name <name>"),
        public: options.public === true,
        redirectUris: options.redirectUri ?? [],
        postLogoutRedirectUris: options.postLogoutUri ?? [],
        allowedOrigins: options.origin ?? [],
        scopes: options.scopes ?? [],
      };
      return withDatabase(async (db) => {
        const account = await requireAccount(db.prisma, accountName);
        const { createOauthClient } = await asAccount<{
          createOauthClient: { oauthClient: { rowId: number; clientId: string; clientSecret: string | null } };
        }>(
          db,
          account.id,
          "mutation($input: CreateOauthClientInput!) { createOauthClient(input: $input) { oauthClient { rowId clientId clientSecret } } }",
          { input },
        );
        const { rowId, clientId, clientSecret } = createOauthClient.oauthClient;
        if (options.json) {
          console.log(
            JSON.stringify({ client_id: clientId, ...(clientSecret ? { client_secret: clientSecret } : {}) }),
          );
          return;
        }
        console.log(
          `Created OAuth client ${rowId} for account ${account.name}: client_id ${clientId}` +
            (clientSecret ? ". Store its secret now: it is not shown again." : " (public: no secret)."),
        );
        if (clientSecret) console.log(clientSecret);
      });
    },
  );

program
  .command("oidc:rotate-keys")
  .description(
    "Give the OpenID provider a new signing key and retire the old ones (they stay in the JWKS, so what they signed still verifies); restart the instances to sign with it",
  )
  .action(() =>
    withDatabase(async (db) => {
      const { rotateSigningKeys } = await import("../auth/oidc/signing-keys.ts");
      const kid = await rotateSigningKeys(db);
      console.log(`New signing key ${kid}; the previous keys are retired and stay published in the JWKS.`);
    }),
  );

program
  .command("maintenance")
  .description("Switch maintenance mode (every API request answers 503) on or off, or show it")
  .addArgument(new Argument("[state]", "on or off; without it, shows the mode").choices(["on", "off"]))
  .action((state: "on" | "off" | undefined) =>
    withDatabase(async ({ prisma, store }) => {
      if (state !== undefined) await setMaintenance(prisma, state === "on");
      console.log(`Maintenance is ${(await isMaintenance(store)) ? "on" : "off"}`);
    }),
  );

program
  .command("migrate")
  .description("Apply pending database migrations")
  .action(async () => {
    const applied = await migrate(loadConfig().databaseUrl);
    console.log(applied.length ? `Applied ${applied.join(", ")}` : "Database is up to date");
  });

program
  .command("schema:print")
  .description("Print the GraphQL schema (or write it with --out)")
  .option("--out <file>", "write it to this file instead", nonEmpty)
  .action(async (options: { out?: string }) => {
    const [{ getSchema }, { printedSchema }] = await Promise.all([
      import("../server/app.ts"),
      import("../graphql/schema.ts"),
    ]);
    print(printedSchema(getSchema()), options.out);
  });

program
  .command("openapi:print")
  .description("Print the OpenAPI 3.1 document of the REST API (or write it with --out)")
  .option("--out <file>", "write it to this file instead", nonEmpty)
  .action(async (options: { out?: string }) => {
    const { printOpenApi } = await import("../openapi/document.ts");
    print(printOpenApi(), options.out);
  });

// A reader that stops early (`schema:print | head`) closes the pipe: that is the end of the output, not a failure.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  process.stderr.write(`error: ${error.message}\n`);
  process.exit(1);
});

async function main(argv: string[]): Promise<number> {
  try {
    await program.parseAsync(argv, { from: "user" });
    return 0;
  } catch (error) {
    // Commander has printed its own errors (and help) already.
    if (error instanceof CommanderError) return error.exitCode;
    const message = error instanceof Error ? error.message : String(error);
    console.error(`error: ${message.trim().replace(/\s*\n\s*/g, " ")}`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
