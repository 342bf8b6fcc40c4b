import { guard } from "../../data/access.ts";
import { dynamic } from "../pothos-dynamic.ts";
import type { Context } from "../../request/context.ts";
import type { Builder } from "../builder.ts";
import { pascal } from "../../core/names.ts";
import type { Operation } from "../../resources/operations.ts";
import { registerRootField } from "../relation-scopes.ts";
import { INTERNAL, type Args, type FacadeKind, type PublicParts, type Row } from "./shared.ts";

/* The command kind: an account command (`POST /settings/...`), answering its status. */

/** `CommandStatus`, the REST facade's answer to every command. */
export const commandStatusType = (builder: Builder) =>
  dynamic(builder)
    .objectRef("CommandStatus")
    .implement({
      description: "The outcome of an account command.",
      fields: (t) => ({ status: t.exposeString("status", { description: "What the command did, such as `okay`." }) }),
    });

/** The public graph's mutation of a command (`rebuildRosters`), answering a payload with its status. */
function publicCommand(p: PublicParts, op: Operation) {
  const b = dynamic(p.builder);
  b.mutationField(op.field, (t) =>
    t.field({
      type: p.payload(
        `${pascal(op.field)}Payload`,
        (t) => ({
          status: t.string({ description: "What the command did, such as `okay`.", resolve: (p: Row) => p.status }),
        }),
        `What the ${op.field} command answers.`,
      ),
      nullable: true,
      description: p.withRoute(op.command!.description, op),
      resolve: async (_root: unknown, _args: Args, ctx: Context) => (
        guard(ctx, op.scopes),
        { status: await op.command!.run(ctx) }
      ),
    }),
  );
  registerRootField(op.field, { scopes: op.scopes });
}

export const commandKind: FacadeKind = {
  addPublic: publicCommand,
  summary: (_op, w) => w.what,
  field: (t, op, p) =>
    t.field({
      ...INTERNAL,
      type: p.types.commandStatus,
      args: p.args,
      description: `${op.command!.description}\n\n${p.rest}`,
      nullable: true,
      resolve: async (_root: unknown, _a: Args, ctx: Context) => (
        guard(ctx, op.scopes),
        { status: await op.command!.run(ctx) }
      ),
    }),
};
