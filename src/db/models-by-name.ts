import type { Prisma } from "../generated/prisma/client.ts";
import type { Args } from "./translation.ts";

/*
 * Models known at run time, by name (a resource's `def.model`): their rows, Prisma's arguments for them, and their
 * Prisma delegates.
 */

/** Values by column name (a row, a `where`, a write's `data`) for a model known at run time: their types unknown. */
export type Row = Record<string, unknown>;
/**
 * A row the store answers for a model known at run time: its columns (and the relations selected) by name, their
 * values unknown but for `id`, every model's integer key (SystemFlag, read by name alone, has none), which callers
 * read from the rows they ask for (a `select` leaving `id` out leaves it undefined).
 */
export type StoredRow = { id: number } & Row;
export type ModelName = Prisma.ModelName;
export type Reading =
  | "findMany"
  | "findFirst"
  | "findUnique"
  | "findFirstOrThrow"
  | "findUniqueOrThrow"
  | "count"
  | "groupBy";
type Operation = Reading | "create" | "update";

/**
 * Prisma's arguments of `operation` on `M` when the model is known where the call is written (`"User"`); plain
 * arguments when it is only known at run time (a resource's `def.model`).
 */
export type ArgsOf<M extends string, O extends Operation> = [M] extends [ModelName]
  ? ModelName extends M
    ? Args
    : Prisma.TypeMap["model"][M]["operations"][O]["args"]
  : Args;

/** The name of a model's delegate on a Prisma client: `rankRecord` for `RankRecord`. */
export const delegateName = (model: string) => model.charAt(0).toLowerCase() + model.slice(1);

/** A model's delegate on a Prisma client (`prisma.rankRecord` for `RankRecord`): for the calls only Prisma answers. */
export const delegateOf = (client: object, model: string): DynamicDelegate =>
  (client as Record<string, DynamicDelegate>)[delegateName(model)];

/** A model's delegate found by name: Prisma's methods, whose arguments and answers are typed only per model. */
export interface DynamicDelegate {
  count(args?: unknown): Promise<number>;
  aggregate(args: unknown): Promise<{ _max: Record<string, number | null> }>;
  deleteMany(args: unknown): Promise<{ count: number }>;
  updateMany(args: unknown): Promise<{ count: number }>;
  [method: string]: (args?: unknown) => Promise<unknown>;
}
