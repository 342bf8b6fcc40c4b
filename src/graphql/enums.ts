import type { EnumDef } from "../resources/enums.ts";
import type { Builder } from "./builder.ts";
import { dynamic } from "./pothos-dynamic.ts";

const refs = new WeakMap<Builder, Map<string, unknown>>();

/**
 * The GraphQL enum of a closed set. Its internal values are the wire values, so a row's `0` is served as `PROMOTION`
 * and an argument's `PROMOTION` reaches the resolver (and the database) as `0`.
 */
export function enumRef(builder: Builder, set: EnumDef): unknown {
  let made = refs.get(builder);
  if (!made) refs.set(builder, (made = new Map()));
  if (!made.has(set.name)) {
    made.set(
      set.name,
      dynamic(builder).enumType(set.name, {
        description: set.description,
        values: Object.fromEntries(
          Object.entries(set.values).map(([name, v]) => [name, { value: v.value, description: v.description }]),
        ),
      }),
    );
  }
  return made.get(set.name);
}
