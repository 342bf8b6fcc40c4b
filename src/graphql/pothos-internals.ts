import type { GraphQLField, GraphQLFieldResolver, GraphQLResolveInfo } from "graphql";

/*
 * Library: Pothos (its core, and the prisma, prisma-utils and relay plugins, whose field extensions these are).
 * Checked against: @pothos/core 4.15.1, @pothos/plugin-prisma 4.17.0, @pothos/plugin-prisma-utils 1.3.6, @pothos/plugin-relay 4.8.1, @pothos/selection-mapper 0.1.0
 *
 * The one module that reads or writes Pothos's private field extensions (the `extensions` of a built GraphQLField);
 * test/library-contracts.test.ts builds a small schema with our builder and checks each:
 * - `pothosPrismaSelect` (plugin-prisma): set on a field that reads what the planned query put on its parent row (a
 *   relation, a `select`); its value an object or a function `(args, ctx, nested, selected)`, which
 *   @pothos/selection-mapper calls with `selected()`, the names selected under the field;
 * - `pothosConfig.resolve` (core): the field's resolver as its definition gave it, before the prisma plugin wrapped
 *   it to find the row's preloaded data by its response path;
 * - `pothosExposedField` (core): the column a `t.expose*` field reads;
 * - `pothosArgMappers` (core, filled by the relay and prisma-utils plugins): what the wrapped resolver applies to the
 *   arguments (global ids decoded, prisma filter inputs normalised) before the resolver sees them;
 * - `pothosPrismaLoaded` (plugin-prisma): a relation's check that its data is on the row.
 *
 * Why the public API did not do: Pothos's public behaviour is the wrapped resolver, which graphql-js calls for every
 * field of every row with a resolve info and a path, and which finds each row's preloaded relations by that path (a
 * WeakMap entry per path link): with graphql-js's per-field work, about 70 % of the CPU of a page of 100 users with
 * 20 records each (bench/FINDINGS.md, "Planned execution"). src/graphql/planned-execution.ts calls the field's own
 * resolver instead, once it knows the data is on the row, and that resolver, the exposed column and the argument
 * mappers are only in these extensions. Writing `pothosPrismaSelect` ourselves (`prismaSelectExtension`): Pothos's
 * public `select` option drops the `selected` argument, which a connection needs to read no rows when only its
 * `totalCount` is selected.
 *
 * Each accessor is one property read, called once per field of a planned operation, never per row.
 */

type Resolver = GraphQLFieldResolver<unknown, unknown>;
type Field = GraphQLField<unknown, unknown>;

/** One of Pothos's argument mappers: the arguments as its wrapped resolver would hand them on (maybe a promise). */
export type ArgMapper = (args: Record<string, unknown>, ctx: unknown, info: GraphQLResolveInfo) => unknown;
/** A prisma relation's check that its data is on `row`. */
export type LoadedCheck = (row: unknown, info: GraphQLResolveInfo, ctx: unknown) => boolean;

interface PothosFieldExtensions {
  pothosPrismaSelect?: unknown;
  pothosConfig?: { resolve?: Resolver };
  pothosExposedField?: unknown;
  pothosArgMappers?: ArgMapper[];
  pothosPrismaLoaded?: LoadedCheck;
}

const extensionsOf = (field: Field): PothosFieldExtensions => field.extensions as PothosFieldExtensions;

/** Whether `field` reads data the planned query put on its parent row (Pothos's prisma select fields). */
export const readsPreloaded = (field: Field): boolean => !!extensionsOf(field).pothosPrismaSelect;

/** `field`'s resolver as its definition gave it, not wrapped by Pothos's plugins; undefined for the default one. */
export const definedResolver = (field: Field): Resolver | undefined => extensionsOf(field).pothosConfig?.resolve;

/** The column an exposed field (`t.expose*`) reads, else null. */
export function exposedColumn(field: Field): string | null {
  const column = extensionsOf(field).pothosExposedField;
  return typeof column === "string" ? column : null;
}

/** Pothos's argument mappers of `field` (relay's global ids, prisma-utils' filter inputs), in order. */
export const argMappersOf = (field: Field): ArgMapper[] => extensionsOf(field).pothosArgMappers ?? [];

/** A prisma relation's check that its data is on the row (`t.relation`), else null. */
export const loadedCheckOf = (field: Field): LoadedCheck | null => extensionsOf(field).pothosPrismaLoaded ?? null;

/**
 * A field's prisma selection as plugin-prisma's selection mapper calls it: `nested` plans the field's own selection
 * (a relation's query), `selected` gives the names selected under the field.
 */
export type PrismaSelect<Args, Ctx> = (
  args: Args,
  ctx: Ctx,
  nested: (query: object, options?: object) => unknown,
  selected?: () => Iterable<string>,
) => object;

/** The `extensions` of a field whose data the planned query loads by `select` (given the selected names). */
export const prismaSelectExtension = <Args, Ctx>(select: PrismaSelect<Args, Ctx>) => ({ pothosPrismaSelect: select });
