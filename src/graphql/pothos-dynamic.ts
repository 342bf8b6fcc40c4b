import type { GraphQLResolveInfo } from "graphql";
import type { Context } from "../request/context.ts";
import type { Builder, SubGraph } from "./builder.ts";

/*
 * The Pothos adapter: the one module that calls Pothos's builder with names known only at run time.
 *
 * Pothos's builder is typed for types known at compile time: `builder.objectRef<Shape>("Rank")`, a Prisma model
 * named by a literal, fields whose names and parent shapes the compiler sees. Ours come from the registry
 * (src/resources) at run time: a type's name is `pascal(def.name)`, its fields are a loop over `def.fields`, its
 * model is `def.model`, a string. Pothos's generics cannot follow that (they would need every resource's shape as a
 * type parameter), so the graph calls the builder through `dynamic(builder)`: one cast, here, to the narrow surface
 * below, which says what the graph calls and with what. What it cannot know is typed `unknown` (a type reference,
 * checked by Pothos when the schema is built) or `Row`/`Args` (a parent row, the arguments: records of unknown
 * values); a resolver may name a narrower parent or argument shape (`resolve: (e: Edge) => e.cursor`), which is
 * its claim about what its type is given, as it would be with Pothos's own `objectRef<Edge>`.
 *
 * `any` is allowed in this file only (eslint.config.js), and only where Pothos's own types are bridged (today none
 * is needed: the cast goes through `unknown`).
 */

/** A parent value as a resolver sees it: a row of a model, a payload, an edge. */
export type Row = Record<string, unknown>;
/** A field's arguments as a resolver sees them (after Pothos's argument mappers). */
export type Args = Record<string, unknown>;

/**
 * A GraphQL type as a `type` option takes it: a ref this builder made (object, input, enum, union, interface), the
 * name of a scalar (`"String"`, `"JSON"`) or of a type made elsewhere, or `[type]` for a list. Pothos checks it when
 * the schema is built; to the compiler it is unknown.
 */
export type TypeRef = unknown;

/** Marks what a ref is, to the compiler only: no ref carries it at run time (they are Pothos's own objects). */
declare const refKind: unique symbol;
/** An output type the builder made (an object, union or interface); pass it as a field's `type`. */
export interface OutputRef {
  readonly [refKind]: "output";
}
/** An input type the builder made (an input object, a Prisma filter, where or order); pass it as an argument's `type`. */
export interface InputRef {
  readonly [refKind]: "input";
}
/** An enum: an output and an input type. */
export interface EnumRef {
  readonly [refKind]: "enum";
}
/** A field made by a field builder (`t.field`, `t.expose*`, `t.relation`, ...), to return among a type's fields. */
export interface FieldRef {
  readonly [refKind]: "field";
}
/** A field of an input type (`t.field`, `t.string`, ... of an input type's field builder). */
export interface InputFieldRef {
  readonly [refKind]: "inputField";
}
/** An argument (`t.arg(...)`, `t.arg.int(...)`). */
export interface ArgRef {
  readonly [refKind]: "arg";
}

export type FieldMap = Record<string, FieldRef>;
export type InputFieldMap = Record<string, InputFieldRef>;
export type ArgMap = Record<string, ArgRef>;

/** A field's resolver: its parent, its arguments, the request's context and graphql-js's resolve info. */
export type Resolver<P = Row, A = Args> = (parent: P, args: A, ctx: Context, info: GraphQLResolveInfo) => unknown;
/** A subscription field's source of events. */
export type Subscriber<P = unknown, A = Args> = (
  parent: P,
  args: A,
  ctx: Context,
  info: GraphQLResolveInfo,
) => AsyncIterable<unknown> | Promise<AsyncIterable<unknown>>;

/** A field's nullability: of the field, or of a list field and of its items. */
export type Nullability = boolean | { list: boolean; items: boolean };
/** @pothos/plugin-complexity's cost of a field (src/graphql/cost.ts). */
export type FieldComplexity = number | { field: number; multiplier: number };
/** plugin-prisma's `select` of a field: columns and relations its resolver reads from the parent row. */
export type FieldSelect<A = Args> = object | ((args: A, ctx: Context, nested: (query: object) => unknown) => object);

/** What a field's definition says besides its resolver (every field builder method takes these). */
export interface FieldBase {
  description?: string;
  nullable?: Nullability;
  /** The graphs the field is in (its type's, unless given). */
  subGraphs?: readonly SubGraph[];
  complexity?: FieldComplexity;
  extensions?: Record<string, unknown>;
}

/** `t.field(...)`: a field of any type. */
export interface FieldOptions<P = Row, A = Args> extends FieldBase {
  type: TypeRef;
  args?: ArgMap;
  select?: FieldSelect<A>;
  /** The value from the parent (on a subscription field: from each event `subscribe` yields). */
  resolve?: Resolver<P, A>;
  /** On a subscription field: its events, for the root value. */
  subscribe?: Subscriber<unknown, A>;
}
/** `t.string(...)`, `t.int(...)`, ...: a field of a scalar type. */
export interface ScalarFieldOptions<P = Row, A = Args> extends FieldBase {
  args?: ArgMap;
  select?: FieldSelect<A>;
  resolve: Resolver<P, A>;
}
/** `t.expose(column, ...)`: a field that reads a column of its parent row. */
export interface ExposeOptions extends FieldBase {
  type: TypeRef;
}
/** `t.relation(name, ...)`: a Prisma relation, planned into its parent's query. */
export interface RelationOptions extends FieldBase {
  /** Prisma's arguments of the relation's query (`orderBy`). */
  query?: object;
}
/** `t.prismaField(...)`: a root field answering rows of a Prisma model, given the query Pothos planned for them. */
export interface PrismaFieldOptions<P = unknown, A = Args> extends FieldBase {
  /** The Prisma model's name; `[model]` for a list. */
  type: string | readonly [string];
  args?: ArgMap;
  resolve: (query: object, parent: P, args: A, ctx: Context, info: GraphQLResolveInfo) => unknown;
}

/** The field builder `t` of an object type, a Prisma object or a root type (`queryField`, `mutationField`, ...). */
export interface DynamicFieldBuilder {
  field<P = Row, A = Args>(options: FieldOptions<P, A>): FieldRef;
  string<P = Row, A = Args>(options: ScalarFieldOptions<P, A>): FieldRef;
  int<P = Row, A = Args>(options: ScalarFieldOptions<P, A>): FieldRef;
  boolean<P = Row, A = Args>(options: ScalarFieldOptions<P, A>): FieldRef;
  id<P = Row, A = Args>(options: ScalarFieldOptions<P, A>): FieldRef;
  expose(column: string, options: ExposeOptions): FieldRef;
  exposeInt(column: string, options?: FieldBase): FieldRef;
  exposeString(column: string, options?: FieldBase): FieldRef;
  exposeBoolean(column: string, options?: FieldBase): FieldRef;
  /** A Prisma object's relation (prisma objects only). */
  relation(name: string, options?: RelationOptions): FieldRef;
  /** Rows of a Prisma model (root types only). */
  prismaField<P = unknown, A = Args>(options: PrismaFieldOptions<P, A>): FieldRef;
  arg: DynamicArgBuilder;
}

/** What every argument and input field takes. */
export interface InputBase {
  description?: string;
  required?: boolean;
}
export interface InputOptions extends InputBase {
  type: TypeRef;
}

/** `t.arg`: an argument of any type, or of a scalar type by its method. */
export interface DynamicArgBuilder {
  (options: InputOptions): ArgRef;
  string(options?: InputBase): ArgRef;
  int(options?: InputBase): ArgRef;
  boolean(options?: InputBase): ArgRef;
  id(options?: InputBase): ArgRef;
  stringList(options?: InputBase): ArgRef;
  intList(options?: InputBase): ArgRef;
  idList(options?: InputBase): ArgRef;
}

/** The field builder `t` of an input type (`inputType`, `prismaWhere`). */
export interface DynamicInputFieldBuilder {
  field(options: InputOptions): InputFieldRef;
  string(options?: InputBase): InputFieldRef;
  int(options?: InputBase): InputFieldRef;
  boolean(options?: InputBase): InputFieldRef;
  id(options?: InputBase): InputFieldRef;
  stringList(options?: InputBase): InputFieldRef;
  intList(options?: InputBase): InputFieldRef;
  idList(options?: InputBase): InputFieldRef;
}

/** What every type's definition takes. */
export interface TypeBase {
  description?: string;
  /** The graphs the type is in (both by default: src/graphql/builder.ts). */
  subGraphs?: readonly SubGraph[];
}
/** An object type's fields, made when the schema is built. */
export interface ObjectTypeOptions extends TypeBase {
  fields: (t: DynamicFieldBuilder) => FieldMap;
  isTypeOf?: (value: unknown) => boolean;
}
/** A Prisma model's object type (select mode: `select` is what every row of it carries). */
export interface PrismaObjectOptions extends ObjectTypeOptions {
  name: string;
  select?: object;
}
/** A Prisma model's object type that is also a Relay node. */
export interface PrismaNodeOptions extends PrismaObjectOptions {
  id: { field: string };
  findUnique: (id: string) => object;
}
/** A Relay node that is no Prisma model's (a change event). */
export interface NodeOptions<P> extends ObjectTypeOptions {
  id: { resolve: (parent: P) => string | number };
}
export interface InputTypeOptions extends TypeBase {
  fields: (t: DynamicInputFieldBuilder) => InputFieldMap;
}
export interface EnumTypeOptions extends TypeBase {
  values: Record<string, { value: unknown; description?: string }>;
}
export interface UnionTypeOptions<P> extends TypeBase {
  types: readonly TypeRef[];
  resolveType: (value: P, ctx: Context, info: GraphQLResolveInfo) => string | undefined;
}
/** plugin-prisma-utils' operators of a filter: each by name, with its description and (if not the filter's) type. */
export type FilterOps = Record<string, { description?: string; type?: TypeRef }>;
export interface PrismaFilterOptions extends TypeBase {
  name: string;
  ops: FilterOps;
}
export interface PrismaWhereOptions extends TypeBase {
  name: string;
  fields: (t: DynamicInputFieldBuilder) => InputFieldMap;
}
/** plugin-prisma-utils' sort fields: each a thunk of its type (a sort order, or a relation's order input). */
export type OrderByFields = Record<string, () => { type: TypeRef; description?: string }>;
export interface PrismaOrderByOptions extends TypeBase {
  name: string;
  fields: () => OrderByFields;
}

/** An object type's ref, to implement once. */
export interface ObjectRefBuilder {
  implement(options: ObjectTypeOptions): OutputRef;
}
/** An input type's ref, to implement once (it may name itself among its fields). */
export interface InputRefBuilder extends InputRef {
  implement(options: InputTypeOptions): InputRef;
}

/** The builder as the graph calls it with names from the registry. */
export interface DynamicBuilder {
  objectRef(name: string): ObjectRefBuilder;
  objectType(ref: ObjectRefBuilder, options: ObjectTypeOptions): OutputRef;
  inputType(name: string, options: InputTypeOptions): InputRef;
  inputRef(name: string): InputRefBuilder;
  enumType(name: string, options: EnumTypeOptions): EnumRef;
  unionType<P>(name: string, options: UnionTypeOptions<P>): OutputRef;
  node<P>(name: string, options: NodeOptions<P>): OutputRef;
  prismaObject(model: string, options: PrismaObjectOptions): OutputRef;
  prismaNode(model: string, options: PrismaNodeOptions): OutputRef;
  /** Adds a field to a Prisma object type made elsewhere. */
  prismaObjectField(ref: TypeRef, name: string, field: (t: DynamicFieldBuilder) => FieldRef): void;
  prismaFilter(type: TypeRef, options: PrismaFilterOptions): InputRef;
  prismaListFilter(type: TypeRef, options: PrismaFilterOptions): InputRef;
  prismaWhere(model: string, options: PrismaWhereOptions): InputRef;
  prismaOrderBy(model: string, options: PrismaOrderByOptions): InputRef;
  queryType(options: TypeBase): OutputRef;
  mutationType(options: TypeBase): OutputRef;
  subscriptionType(options: TypeBase): OutputRef;
  queryField(name: string, field: (t: DynamicFieldBuilder) => FieldRef): void;
  mutationField(name: string, field: (t: DynamicFieldBuilder) => FieldRef): void;
  subscriptionField(name: string, field: (t: DynamicFieldBuilder) => FieldRef): void;
  /** The relay plugin's `Node` interface. */
  nodeInterfaceRef(): OutputRef;
  /** The relay plugin's `PageInfo` type. */
  pageInfoRef(): OutputRef;
}

/** `builder` as the graph calls it with names from the registry: the one cast from Pothos's typed builder. */
export const dynamic = (builder: Builder): DynamicBuilder => builder as unknown as DynamicBuilder;
