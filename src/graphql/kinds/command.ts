import { guard } from "../../data/access.ts";
import { ApiError } from "../../core/errors.ts";
import { dynamic, type DynamicFieldBuilder, type FieldMap, type OutputRef } from "../pothos-dynamic.ts";
import type { Context } from "../../request/context.ts";
import type { Builder } from "../builder.ts";
import { pascal } from "../../core/names.ts";
import type { CommandAnswer } from "../../resources/define.ts";
import type { Operation } from "../../resources/operations.ts";
import { registerRootField } from "../relation-scopes.ts";
import { INTERNAL, type Args, type FacadeKind, type PublicParts, type Row } from "./shared.ts";

/*
 * The command kind: an account command (`POST /cache`, `POST /sso/rotate`), answering its status, or the fields of its
 * `answer` (a new secret).
 */

/** `CommandStatus`, the REST facade's answer to every command without an `answer`. */
export const commandStatusType = (builder: Builder) =>
  dynamic(builder)
    .objectRef("CommandStatus")
    .implement({
      description: "The outcome of an account command.",
      fields: (t) => ({ status: t.exposeString("status", { description: "What the command did, such as `okay`." }) }),
    });

/** The answer's fields, each a string read from the command's result. */
const answerFields = (t: DynamicFieldBuilder, answer: CommandAnswer): FieldMap =>
  Object.fromEntries(
    Object.entries(answer.fields).map(([name, description]) => [
      name,
      t.string({ description, resolve: (p: Row) => p[name] }),
    ]),
  );

/** The REST facade's type of a command's answer (`SsoSecret`). */
const answerTypes = new WeakMap<Builder, Map<string, OutputRef>>();
function answerType(builder: Builder, answer: CommandAnswer): OutputRef {
  let made = answerTypes.get(builder);
  if (!made) answerTypes.set(builder, (made = new Map()));
  let ref = made.get(answer.type);
  if (!ref) {
    ref = dynamic(builder)
      .objectRef(answer.type)
      .implement({ description: answer.description, fields: (t) => answerFields(t, answer) });
    made.set(answer.type, ref);
  }
  return ref;
}

/**
 * Runs the command for the caller: its scopes, then (a `keysOnly` command) the kind of credential, which no scope
 * says: a person's token holding `*` is still not an API key.
 */
async function runCommand(ctx: Context, op: Operation): Promise<Row> {
  guard(ctx, op.scopes);
  const command = op.command!;
  if (command.keysOnly && ctx.auth!.kind !== "key" && ctx.auth!.kind !== "cli")
    throw new ApiError("FORBIDDEN", command.keysOnly);
  if (command.answer) return command.run(ctx);
  return { status: await command.run(ctx) };
}

/** The public graph's mutation of a command (`rebuildRosters`), answering a payload with its status or its answer. */
function publicCommand(p: PublicParts, op: Operation) {
  const b = dynamic(p.builder);
  const answer = op.command!.answer;
  b.mutationField(op.field, (t) =>
    t.field({
      type: p.payload(
        `${pascal(op.field)}Payload`,
        (t) =>
          answer
            ? answerFields(t, answer)
            : {
                status: t.string({
                  description: "What the command did, such as `okay`.",
                  resolve: (p: Row) => p.status,
                }),
              },
        answer ? answer.description : `What the ${op.field} command answers.`,
      ),
      nullable: true,
      description: p.withRoute(op.command!.description, op),
      resolve: (_root: unknown, _args: Args, ctx: Context) => runCommand(ctx, op),
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
      type: op.command!.answer ? answerType(p.builder, op.command!.answer) : p.types.commandStatus,
      args: p.args,
      description: `${op.command!.description}\n\n${p.rest}`,
      nullable: true,
      resolve: (_root: unknown, _a: Args, ctx: Context) => runCommand(ctx, op),
    }),
};
