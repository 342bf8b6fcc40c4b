import type { StoreReads } from "../db/store-reads.ts";
import type { Context } from "../request/context.ts";
import { ownEntry, type FieldDef, type ResourceDef } from "../resources/define.ts";
import { resourceNamed } from "../resources/index.ts";
import { FieldErrorBag } from "../core/errors.ts";
import { human, snake } from "../core/names.ts";
import { rememberName } from "../db/transaction-names.ts";
import { keyAndName } from "./access.ts";
import { shapeProblem } from "../resources/json-shapes.ts";

const kindWord: Record<FieldDef["type"], string> = {
  string: "a string",
  text: "a string",
  int: "an integer",
  boolean: "true or false",
  datetime: "a valid date",
  json: "valid JSON",
};

export interface ValidateOptions {
  mode: "create" | "update";
  /** Columns set by the route (a parent's foreign key): not required from the client. */
  fixed?: Record<string, unknown>;
  /** Row being updated, excluded from uniqueness checks. */
  existingId?: number;
  /** Prefix for error keys, e.g. `resources.3` in batches. */
  prefix?: string;
  /** Model checked for `unique` columns. */
  model?: string;
}

/**
 * Checks a write against the resource's rules and returns the columns to write. Every problem is
 * reported at once as a 422; nothing is written when any check fails.
 */
export async function validateFields(
  ctx: Context,
  reads: StoreReads,
  fields: Record<string, FieldDef>,
  input: Record<string, unknown>,
  options: ValidateOptions,
): Promise<Record<string, unknown>> {
  const bag = new FieldErrorBag();
  const data: Record<string, unknown> = {};
  const lookups: Array<Promise<void>> = [];
  const key = (name: string) => (options.prefix ? `${options.prefix}.${snake(name)}` : snake(name));
  for (const [name, f] of Object.entries(fields)) {
    if (f.writable === false || options.fixed?.[name] !== undefined) continue;
    const value = ownEntry(input, name);
    const label = human(name);
    if (value === undefined) {
      if (options.mode === "create" && f.required) bag.add(key(name), `The ${label} field is required.`);
      continue;
    }
    if (value === null) {
      if (f.nullable && !(f.required && options.mode === "create")) data[name] = null;
      else
        bag.add(
          key(name),
          f.required ? `The ${label} field is required.` : `The ${label} field must be ${kindWord[f.type]}.`,
        );
      continue;
    }
    if (typeof value === "string" && f.max !== undefined && value.length > f.max) {
      bag.add(key(name), `The ${label} field must not be greater than ${f.max} characters.`);
      continue;
    }
    if (typeof value === "string" && f.required && value.trim() === "") {
      bag.add(key(name), `The ${label} field is required.`);
      continue;
    }
    if (f.oneOf && !f.oneOf.includes(value as never)) {
      bag.add(key(name), `The selected ${label} is invalid.`);
      continue;
    }
    if (f.pattern && typeof value === "string" && !f.pattern.test(value)) {
      bag.add(key(name), typeof f.invalid === "string" ? f.invalid : `The ${label} field format is invalid.`);
      continue;
    }
    if (f.type === "json" && (f.input ?? f.shape)) {
      const problem = shapeProblem((f.input ?? f.shape)!, value);
      if (problem) {
        if (typeof f.invalid === "string") bag.add(key(name), f.invalid);
        else if (f.invalid) bag.add([key(name), ...problem.path].join("."), f.invalid(problem));
        else {
          const at = [snake(name), ...problem.path].join(".");
          bag.add(
            options.prefix ? `${options.prefix}.${at}` : at,
            `The ${problem.path.length ? at : label} field ${problem.problem}.`,
          );
        }
        continue;
      }
    }
    if (f.references) {
      const target = resourceNamed(f.references);
      lookups.push(
        reads
          .findFirst(target.model, { where: { id: value, accountId: ctx.auth!.accountId }, ...keyAndName(target) })
          .then((row) => {
            if (!row) bag.add(key(name), `The selected ${label} is invalid.`);
            rememberName(reads, target.model, row);
          }),
      );
    }
    if (f.unique && options.model) {
      lookups.push(
        reads
          .count(options.model, {
            where: {
              [name]: value,
              accountId: ctx.auth!.accountId,
              ...(options.existingId ? { NOT: { id: options.existingId } } : {}),
            },
          })
          .then((n: number) => {
            if (n > 0) bag.add(key(name), `The ${label} has already been taken.`);
          }),
      );
    }
    data[name] = value;
  }
  await Promise.all(lookups);
  bag.throwIfAny();
  return data;
}

export async function validateResource(
  ctx: Context,
  reads: StoreReads,
  def: ResourceDef,
  input: Record<string, unknown>,
  options: ValidateOptions,
) {
  return validateFields(ctx, reads, def.fields, input, { ...options, model: def.model });
}

/** Polymorphic owner given in a body (`model_type`, `model_id`) must be a known type and a row of the caller's account. */
export async function validateMorphOwner(
  ctx: Context,
  reads: StoreReads,
  data: Record<string, unknown>,
  allowed: ResourceDef[],
): Promise<void> {
  if (data.modelType === undefined && data.modelId === undefined) return;
  const bag = new FieldErrorBag();
  const owner = allowed.find(
    (r) => r.morphClass === data.modelType || r.name === data.modelType || r.model === data.modelType,
  );
  if (data.modelType != null && !owner) bag.add("model_type", "The selected model type is invalid.");
  if (owner) data.modelType = owner.morphClass;
  if (owner && data.modelId != null) {
    const n = await reads.count(owner.model, { where: { id: data.modelId, accountId: ctx.auth!.accountId } });
    if (n === 0) bag.add("model_id", "The selected model id is invalid.");
  }
  if ((data.modelType == null) !== (data.modelId == null))
    bag.add(
      data.modelType == null ? "model_type" : "model_id",
      "The model type and model id fields must be given together.",
    );
  bag.throwIfAny();
}
