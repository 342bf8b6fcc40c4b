import type { Builder } from "./builder.ts";
import type { Context } from "../request/context.ts";
import type { ObjectRefs } from "./objects.ts";
import { resources } from "../resources/index.ts";
import { attributesResolver, everyColumn } from "../data/attributes.ts";
import { dynamic, type Row } from "./pothos-dynamic.ts";

/**
 * `attributes: JSON!` on every resource's type, in the internal graph only: REST documents select it, GraphQL clients
 * select the typed fields (it says nothing they do not, and a JSON blob is no API for a front-end).
 */
export function addAttributesFields(builder: Builder, refs: ObjectRefs): void {
  const b = dynamic(builder);
  for (const def of resources) {
    const attributes = attributesResolver(def);
    b.prismaObjectField(refs.objects.get(def.name), "attributes", (t) =>
      t.field({
        // Every column: the attributes, the computed fields' inputs, and a custom-field column REST spreads.
        select: everyColumn(def.model),
        type: "JSON",
        subGraphs: ["internal"],
        description:
          "The row's columns and computed fields in one object, as the REST API shows them: snake_case keys, PERSCOM dates.",
        resolve: (row: Row, _args: unknown, ctx: Context) => attributes(row, ctx),
      }),
    );
  }
}
