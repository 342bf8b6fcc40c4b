import type { Actor } from "../core/events.ts";
import type { Builder } from "./builder.ts";
import { dynamic, type OutputRef } from "./pothos-dynamic.ts";

/*
 * `Actor`: who made a change, as the change feed (`ChangeEvent.actor`) and the change streams (`...ChangedPayload.actor`)
 * show it; the same object webhooks and REST's feed carry as `actor` (src/core/events.ts).
 */

/** The `Actor` type (and its `ActorType` enum), made once per builder and shared by the feed and the streams. */
const made = new WeakMap<Builder, OutputRef>();

export function actorType(builder: Builder): OutputRef {
  const known = made.get(builder);
  if (known) return known;
  const b = dynamic(builder);
  const kind = b.enumType("ActorType", {
    description: "What made a change.",
    values: {
      KEY: { value: "key", description: "An API key (`keyId`)." },
      PERSON: {
        value: "person",
        description: "A person (`userId`), through an SSO token or an access token of an OAuth client (`clientId`).",
      },
      CLIENT: { value: "client", description: "An OAuth client on its own (`clientId`): a client-credentials token." },
    },
  });
  const via = b.enumType("ActorCredential", {
    description: "The credential a person acted through.",
    values: {
      SSO: { value: "sso", description: "An SSO token signed with the account's SSO secret." },
      OAUTH: { value: "oauth", description: "An access token of one of the account's OAuth clients." },
    },
  });
  const ref = b.objectRef("Actor").implement({
    description:
      "Who made a change: an API key, a person (through an SSO token or an access token), or an OAuth client acting on its own. Never the credential itself.",
    fields: (t) => ({
      type: t.field({ type: kind, description: "What made the change.", resolve: (a: Actor) => a.type }),
      keyId: t.int({
        nullable: true,
        description: "The API key's id; null unless `type` is KEY.",
        resolve: (a: Actor) => (a.type === "key" ? a.key_id : null),
      }),
      userId: t.int({
        nullable: true,
        description: "The person's user id (`rowId` of their User); null unless `type` is PERSON.",
        resolve: (a: Actor) => (a.type === "person" ? a.user_id : null),
      }),
      clientId: t.string({
        nullable: true,
        description: "The OAuth `client_id` of the access token; null for an API key or an SSO token.",
        resolve: (a: Actor) => (a.type === "key" ? null : a.client_id),
      }),
      via: t.field({
        type: via,
        nullable: true,
        description: "The credential a person acted through; null unless `type` is PERSON.",
        resolve: (a: Actor) => (a.type === "person" ? a.via : null),
      }),
    }),
  });
  made.set(builder, ref);
  return ref;
}
