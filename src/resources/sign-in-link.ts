import type { Context } from "../request/context.ts";
import { datetime, defineResource, int, string } from "./define.ts";
import { ShownOnce } from "./shown-once.ts";

/*
 * A one-time link to choose a password (an invitation; a reset asked for by email). It has no routes of its own: the
 * invitation action of a user (`POST /users/{user}/invitation`, src/auth/password-actions.ts) answers the link it
 * made, with its URL this once. Only the token's SHA-256 is stored, and no field shows it.
 */

/** Links made by this request, by id: the one response that may show their URL (the token is in it). */
const urls = new ShownOnce();

export const revealLinkUrl = (ctx: Context, linkId: number, url: string): void => urls.reveal(ctx, linkId, url);

export const signInLink = defineResource({
  name: "signInLink",
  model: "SignInLink",
  label: "Sign-in link",
  // Read and made under the person's scopes: making one needs `update:user`.
  scope: "user",
  // Links are credentials, not changes of the organisation: they record no events.
  silent: true,
  description:
    "A one-time link that lets a person choose their password: an invitation, or a reset asked for by email. It works once, until it expires.",
  fields: {
    userId: int({ writable: false, description: "Id of the person the link is for." }),
    purpose: string({ writable: false, description: "`invitation` or `reset`." }),
    expiresAt: datetime({ nullable: false, writable: false, description: "When the link stops working." }),
    usedAt: datetime({ writable: false, description: "When the link was used to set a password; null until then." }),
  },
  computed: {
    url: {
      type: "string",
      nullable: true,
      needs: [],
      once: true,
      description:
        "The link to send the person (it carries the token): shown once, in the answer of the request that made it; null everywhere else.",
      resolve: (row, ctx) => urls.shown(ctx, row.id),
    },
  },
  orderBy: [{ id: "desc" }],
});
