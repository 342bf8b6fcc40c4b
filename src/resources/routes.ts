import { hasOneOperations, type NestedRoute, type RowKind } from "./define.ts";

/** The same `include` allow-list on every operation of a nested route. */
export const sameIncludes = (operations: readonly RowKind[], includes: string[]): NestedRoute["includes"] =>
  Object.fromEntries(operations.map((kind) => [kind, includes]));

/** `/{parent}/{id}/image`: the parent's latest image; PERSCOM allows no includes there. */
export const imageRoute = (operations: RowKind[] = hasOneOperations): NestedRoute => ({
  path: "image",
  param: "image",
  relation: "image",
  operations,
  includes: sameIncludes(operations, []),
});
