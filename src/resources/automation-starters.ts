import { validationError } from "../core/errors.ts";
import type { AutomationAction } from "./automation-actions.ts";

/*
 * Starter templates: automations a unit commonly needs, made by name with the few parameters each needs (a URL, an
 * award, a role), then saved through the ordinary write path and its checks like any automation.
 */

export interface StarterParameter {
  description: string;
  kind: "url" | "id";
}

export interface AutomationStarter {
  name: string;
  description: string;
  parameters: Record<string, StarterParameter>;
  build(parameters: Record<string, string | number>): StarterAutomation;
}

/** What a starter makes: the attributes of a new automation (snake_case, as REST takes them). */
export interface StarterAutomation {
  name: string;
  description: string;
  triggers: string[];
  schedule?: string;
  condition?: string;
  actions: AutomationAction[];
}

export const AUTOMATION_STARTERS: readonly AutomationStarter[] = [
  {
    name: "promotion-announcement",
    description: "Posts a promotion (a rank record of type 0) to a Discord channel's webhook.",
    parameters: { url: { kind: "url", description: "The Discord webhook URL to post to." } },
    build: ({ url }) => ({
      name: "Promotion announcement",
      description: "Announces promotions in Discord.",
      triggers: ["rankrecord.created"],
      condition: "data.type == 0",
      actions: [
        {
          type: "webhook",
          url: String(url),
          preset: "discord",
          body: { content: "{{ user.name }} was promoted to {{ user.rank.name | default: 'a new rank' }}." },
        },
      ],
    }),
  },
  {
    name: "welcome-email",
    description: "Emails every new person a welcome.",
    parameters: {},
    build: () => ({
      name: "Welcome email",
      description: "Welcomes new people by email.",
      triggers: ["user.created"],
      actions: [
        {
          type: "email",
          to: { kind: "person" },
          subject: "Welcome to {{ account.name }}",
          body: "Hello {{ user.name }},\n\nwelcome to {{ account.name }}. We are glad to have you.",
        },
      ],
    }),
  },
  {
    name: "award-on-qualifications",
    description: "Gives an award to a person when they hold three qualifications.",
    parameters: { award_id: { kind: "id", description: "Id of the award to give." } },
    build: ({ award_id }) => ({
      name: "Award on three qualifications",
      description: "Gives an award when a person has earned three qualifications.",
      triggers: ["qualificationrecord.created"],
      condition: "user.qualification_records_count == 3",
      actions: [
        {
          type: "update",
          create: "award-records",
          values: {
            user_id: "{{ user.id }}",
            award_id: Number(award_id),
            text: "Earned three qualifications.",
          },
        },
      ],
    }),
  },
  {
    name: "weekly-roster-digest",
    description: "Every Monday at 08:00 (the account's time zone), messages the people holding a role.",
    parameters: { role_id: { kind: "id", description: "Id of the role whose people get the digest." } },
    build: ({ role_id }) => ({
      name: "Weekly roster digest",
      description: "A Monday reminder to review the roster.",
      triggers: [],
      schedule: "0 8 * * 1",
      actions: [
        {
          type: "message",
          to: { kind: "role", role_id: Number(role_id) },
          text: "Good morning: it is Monday, time to review the roster of {{ account.name }}.",
        },
      ],
    }),
  },
];

/** The starter `name`, or a 422 listing the starters there are. */
export function starterNamed(name: string): AutomationStarter {
  const starter = AUTOMATION_STARTERS.find((s) => s.name === name);
  if (!starter)
    throw validationError({
      starter: [
        `There is no starter ${JSON.stringify(name)}: the starters are ${AUTOMATION_STARTERS.map((s) => s.name).join(", ")}.`,
      ],
    });
  return starter;
}

/**
 * The automation starter `name` makes with `parameters` (URLs as given, ids as positive integers), or a 422 naming
 * the starter or each missing or malformed parameter. The automation itself is checked when it is saved.
 */
export function starterAutomation(name: string, parameters: Record<string, unknown>): StarterAutomation {
  const starter = starterNamed(name);
  const errors: Record<string, string[]> = {};
  const values: Record<string, string | number> = {};
  for (const [key, p] of Object.entries(starter.parameters)) {
    const value = parameters[key];
    if (value === undefined || value === null || value === "")
      errors[key] = [`The ${name} starter needs ${key}: ${p.description}`];
    else if (p.kind === "id") {
      const id = typeof value === "string" && /^\d{1,10}$/.test(value) ? Number(value) : value;
      if (typeof id !== "number" || !Number.isSafeInteger(id) || id < 1)
        errors[key] = [`The ${key} must be a positive integer id.`];
      else values[key] = id;
    } else if (typeof value !== "string") errors[key] = [`The ${key} must be a URL.`];
    else values[key] = value;
  }
  if (Object.keys(errors).length) throw validationError(errors);
  return starter.build(values);
}
