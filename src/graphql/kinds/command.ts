import { guard } from "../../data/access.ts";
import type { Context } from "../../request/context.ts";
import type { Builder } from "../builder.ts";
import { INTERNAL, type Args, type FacadeKind } from "./shared.ts";

/* The command kind: an account command (`POST /settings/...`), answering its status. */

/** `CommandStatus`, the REST facade's answer to every command. */
export const commandStatusType = (builder: Builder) => (builder as any).objectRef("CommandStatus").implement({
  description: "The outcome of an account command.",
  fields: (t: any) => ({ status: t.exposeString("status", { description: "What the command did, such as `okay`." }) }),
});

export const commandKind: FacadeKind = {
  summary: (_op, w) => w.what,
  field: (t, op, p) => t.field({
    ...INTERNAL,
    type: p.types.commandStatus, args: p.args, description: `${op.command!.description}\n\n${p.rest}`, nullable: true,
    resolve: async (_root: unknown, _a: Args, ctx: Context) => (guard(ctx, op.scopes), { status: await op.command!.run(ctx) }),
  }),
};
