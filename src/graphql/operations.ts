import { isOneToOne, operations, type Operation } from "../resources/operations.ts";
import type { Builder } from "./builder.ts";
import type { ObjectRefs } from "./objects.ts";
import { restRootField } from "../core/names.ts";
import { resourceDescription, viewDescription } from "../resources/descriptions.ts";
import { facadeKinds } from "./kinds/index.ts";
import { inputs } from "./kinds/inputs.ts";
import { pivotChangesType } from "./kinds/links.ts";
import { commandStatusType } from "./kinds/command.ts";
import type { Words } from "./kinds/shared.ts";
import { dynamic, type DynamicFieldBuilder, type FieldRef } from "./pothos-dynamic.ts";

/**
 * Adds one Query or Mutation field per operation of the registry (a search shares its list's field): the REST
 * facade's `rest<Operation>` fields, each made by its kind's entry in `src/graphql/kinds/index.ts`.
 */
export function addOperations(builder: Builder, refs: ObjectRefs): void {
  const b = dynamic(builder);
  const made = inputs(builder);
  const types = { changes: pivotChangesType(builder), commandStatus: commandStatusType(builder) };

  const added = new Set<string>();
  for (const op of operations) {
    if (added.has(op.field)) continue;
    added.add(op.field);
    const add = op.root === "query" ? b.queryField.bind(b) : b.mutationField.bind(b);
    add(restRootField(op.field), (t) => fieldFor(t, op));
  }

  /** The ids a kind takes (the parent's, the addressed row's), then its own arguments. */
  function argsFor(t: DynamicFieldBuilder, op: Operation, words: Words) {
    const args: Record<string, unknown> = {};
    const kind = facadeKinds[op.kind];
    if (op.parent)
      args[op.parent.def.param] = t.arg.int({
        required: true,
        description: `Id of the parent ${op.parent.def.label.toLowerCase()}.`,
      });
    if (kind.addressesRow) {
      args[op.parent ? op.parent.route.param : op.def.param] = t.arg.int({
        required: !isOneToOne(op),
        description: isOneToOne(op)
          ? `Id of the ${words.one}; optional, since the parent has at most one (a different id is not found).`
          : `Id of the ${words.one}.`,
      });
    }
    return Object.assign(args, kind.args?.(t, op, made, words, builder));
  }

  function fieldFor(t: DynamicFieldBuilder, op: Operation): FieldRef {
    const words = wordsOf(op);
    const args = argsFor(t, op, words);
    const rest = `REST: ${op.method} /{version}${op.path}${facadeKinds[op.kind].alsoRoutes?.(op) ?? ""} — scopes: ${
      op.scopes.join(", ") || "none"
    }`;
    return facadeKinds[op.kind].field(t, op, {
      builder,
      refs,
      args,
      description: `${summaryOf(op, words)}\n\n${rest}`,
      rest,
      types,
    });
  }
}

function wordsOf(op: Operation): Words {
  const one = op.def.label.toLowerCase();
  return {
    one,
    rows: `${one}s`,
    parent: op.parent ? op.parent.def.label.toLowerCase() : "",
    of: op.parent ? ` of a ${op.parent.def.label.toLowerCase()}` : "",
    what: resourceDescription(op.def),
  };
}

/** What an operation does, in a sentence or two: the first words of its root field's description. */
function summaryOf(op: Operation, words: Words): string {
  const kind = facadeKinds[op.kind];
  return op.view ? `${viewDescription(op.def, op.view)} ${kind.ofView!(words)}` : kind.summary(op, words);
}
