import type { Store } from "../db/store.ts";
import type { Config } from "../core/config.ts";
import { createApiKey } from "../auth/accounts.ts";
import { seedDemo } from "../seed/demo.ts";

/** Name of the account the first run creates. */
export const demoAccount = "Demo";
/** People in the demo organisation the first run seeds. */
export const demoUsers = 25;

/** The command that creates an account and its first key, as an operator types it in the checkout. */
export const firstKeyCommand = `npm run cli -- keys:create --account "My Unit" --scopes "*"`;

/**
 * First run: on a database with no account at all, outside production (`NODE_ENV=production` skips it),
 * seeds a small demo organisation and returns the lines to print: an API key with every scope and the URLs to
 * try it at. In production it seeds nothing and returns the command that creates the first account and key.
 * No lines when an account exists.
 */
export async function firstRun(store: Store, config: Config, env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  if ((await store.prisma.account.count()) > 0) return [];
  if (env.NODE_ENV === "production") return [`No account yet: create one and its first key with: ${firstKeyCommand}`];
  const summary = await seedDemo(store, { account: demoAccount, users: demoUsers });
  const { key } = await createApiKey(store, { account: demoAccount, scopes: "*", name: "First-run demo key" });
  const base =
    config.publicUrl?.replace(/\/+$/, "") ??
    `http://${config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host}:${config.port}`;
  const lines = [
    `First run: seeded the demo account "${demoAccount}" (${summary.counts.users} users, ${Object.values(summary.counts).reduce((a, b) => a + b, 0)} rows).`,
    `API key (scope *, shown once): ${key}`,
    `GraphiQL:      ${base}/graphql  (Headers: {"Authorization": "Bearer ${key}"})`,
    `API reference: ${base}/docs`,
    `Try:           curl -H "Authorization: Bearer ${key}" "${base}/v2/users?include=rank"`,
  ];
  return lines;
}
