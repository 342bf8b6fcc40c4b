import { FieldErrorBag } from "../core/errors.ts";
import { bool, datetime, defineResource, json, morphOne, ownEntry, string, text } from "./define.ts";
import { enumList, enumSet, notificationChannels } from "./calendar.ts";
import { notificationChannel } from "./enums.ts";
import { anyOf, anyValue, jsonBoolean, jsonInteger, jsonNumber, jsonString, listOf, mapOf } from "./json-shapes.ts";
import { addNewsfeedItem } from "./newsfeed.ts";
import { rotateSsoSecret } from "./sso-secret.ts";

/** PERSCOM's named announcement colours; any other name is shown as the default blue. */
const namedColors: Record<string, string> = { success: "#16a34a", danger: "#dc2626", warning: "#ca8a04" };

export const announcement = defineResource({
  name: "announcement",
  model: "Announcement",
  path: "announcements",
  fields: {
    title: string({ required: true }),
    content: text({ required: true, nullable: false }),
    color: string({ required: true }),
    global: bool(),
    enabled: bool(),
    expiresAt: datetime(),
  },
  scopes: {
    enabled: { parameters: 0, where: () => ({ enabled: true }) },
    disabled: { parameters: 0, where: () => ({ enabled: false }) },
  },
  hooks: {
    beforeWrite({ data }) {
      if (typeof data.color === "string" && !data.color.startsWith("#"))
        data.color = ownEntry(namedColors, data.color) ?? "#2563eb";
    },
    async afterInsert({ row, ctx, writes }) {
      await addNewsfeedItem(writes, ctx, {
        event: "created",
        subjectType: "App\\Models\\Announcement",
        subjectId: row.id,
        description: "created",
        headline: row.title,
        text: row.content,
      });
    },
  },
});

export const message = defineResource({
  name: "message",
  model: "Message",
  path: "messages",
  fields: {
    message: text({ required: true, nullable: false }),
    channels: json(
      enumSet(
        notificationChannel,
        "The channels it is sent on: a list of channels (one alone is taken as a list of one).",
      ),
      {
        required: true,
        invalid: "The selected channels is invalid.",
      },
    ),
    recipients: json(
      listOf(jsonInteger(), {
        single: true,
        description: "Ids of users of the account (one alone is taken as a list of one); null or empty for everyone.",
      }),
      {
        nullable: true,
        invalid: "The recipients must be a list of user ids.",
      },
    ),
    repeats: bool({ writable: false }),
    sendAt: datetime(),
    sentAt: datetime(),
  },
  relations: { schedule: morphOne({ target: "schedule" }) },
  includes: ["schedule"],
  hooks: {
    async beforeWrite({ data, existing, ctx, tx }) {
      const bag = new FieldErrorBag();
      if (!existing && typeof data.message === "string" && data.message.length > 255) {
        bag.add("message", "The message field must not be greater than 255 characters.");
      }
      enumList(data, "channels", "channels", notificationChannels, bag);
      const recipients = data.recipients;
      if (recipients != null) {
        const ids = Array.isArray(recipients) ? recipients : [recipients];
        if (!ids.every((id) => Number.isInteger(id)))
          bag.add("recipients", "The recipients must be a list of user ids.");
        else {
          const unique = [...new Set(ids as number[])];
          const found = await tx.count("User", { where: { id: { in: unique }, accountId: ctx.auth!.accountId } });
          if (found !== unique.length) bag.add("recipients", "The selected recipients is invalid.");
          else data.recipients = unique;
        }
      }
      bag.throwIfAny();
    },
  },
});

export const setting = defineResource({
  name: "setting",
  model: "Setting",
  path: "settings",
  scope: "settings",
  operations: ["list"],
  commands: [
    {
      path: "cache",
      field: "clearCache",
      scopes: ["clear:cache"],
      description:
        "Purges the account's entries in the shared cache of public reads (responses to publishable keys and anonymous requests, kept for RESPONSE_CACHE_MAX_AGE seconds): every next public read runs again. Answers okay. (Reads of other credentials are never cached; entries also go stale on their own when a write changes what they read.)",
      run: () => "okay",
    },
    {
      path: "sso/rotate",
      field: "rotateSsoSecret",
      scopes: ["*"],
      keysOnly:
        "Only an API key with the * scope may rotate the SSO secret: a token signed with it must not be able to mint its successors.",
      description:
        "Gives the account a new SSO secret and answers it, once: SSO tokens signed with the old secret stop working at once. Only an API key with `*` may call it (an SSO or access token is refused, even with `*`). No event records it and no log line shows the secret.",
      answer: {
        type: "SsoSecret",
        description: "The account's new SSO secret, shown only in this answer.",
        fields: { secret: "The new SSO secret: sign SSO tokens (HS256) with it. Shown only here; keep it secret." },
      },
      run: async (ctx) => ({ secret: await rotateSsoSecret(ctx.store, ctx.auth!.accountId) }),
    },
  ],
  fields: {
    group: string({ writable: false }),
    name: string({ writable: false }),
    locked: bool({ writable: false }),
    payload: json(
      anyOf([jsonString(), jsonNumber(), jsonBoolean(), listOf(anyValue()), mapOf(anyValue())], {
        description:
          "The setting's value, JSON-decoded: a string, number, boolean, list or object as the setting takes it (`notifications.channels` is a list of channels, `registration.enabled` a boolean).",
      }),
      { nullable: true, writable: false },
    ),
  },
});

/** The settings a new account starts with, grouped as PERSCOM groups them. */
export const defaultSettings = (
  accountName: string,
): Array<{ group: string; name: string; payload: unknown; locked?: boolean }> => [
  { group: "organization", name: "name", payload: accountName },
  { group: "organization", name: "timezone", payload: "UTC" },
  { group: "dashboard", name: "title", payload: accountName },
  { group: "registration", name: "enabled", payload: false },
  { group: "registration", name: "admin_approval_required", payload: false },
  { group: "user", name: "display_name_format", payload: "{name}" },
  { group: "notifications", name: "channels", payload: ["database", "mail"] },
  { group: "fields", name: "users", payload: [] },
  { group: "onboarding", name: "completed", payload: false },
  { group: "permission", name: "default_roles", payload: ["User"], locked: true },
];
