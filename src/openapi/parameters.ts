import type { ResourceDef } from "../resources/define.ts";
import { resourceNamed } from "../resources/index.ts";
import type { Operation } from "../resources/operations.ts";
import { versions } from "../rest/routes.ts";
import { camel, pascal } from "../core/names.ts";
import { schemaName, type Schema } from "./schema.ts";
import { openapiKinds } from "./kinds.ts";

const ref = (name: string) => ({ $ref: `#/components/parameters/${name}` });

/** The resource a dotted include path leads to, or null where it ends at a polymorphic owner or names no relation. */
function resourceAt(def: ResourceDef, path: string[]): ResourceDef | null {
  let at: ResourceDef | null = def;
  for (const segment of path) {
    const relation: ResourceDef["relations"][string] | undefined = at?.relations[segment];
    if (!relation || relation.kind === "morphTo") return null;
    at = resourceNamed(relation.target);
  }
  return at;
}

/** `includes`, and for each `x.*` the one-level expansions `x.<relation>` the wildcard stands for. */
function expand(def: ResourceDef, includes: readonly string[]): string[] {
  const values = new Set<string>(includes);
  for (const value of includes) {
    if (!value.endsWith(".*")) continue;
    const prefix = value.slice(0, -2);
    const target = resourceAt(def, prefix.split("."));
    for (const name of target?.includes ?? [])
      if (!name.includes("*") && !name.includes(".")) values.add(`${prefix}.${name}`);
  }
  return [...values];
}

/** Every `include` value an operation accepts: its allow-list and what its wildcards stand for. */
export const includeValues = (op: Operation): string[] => expand(op.def, op.includes);

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((v, i) => v === b[i]);

/**
 * Parameters of the operations. Those shared by many (version, paging, path ids, a resource's own
 * include list) are `components.parameters`; an include list particular to a route stays inline.
 */
export class Parameters {
  readonly components: Record<string, Schema> = {
    Version: {
      name: "version",
      in: "path",
      required: true,
      description:
        "API version. Both answer alike, except that v1 single-record responses also show `text_color` and `bg_color` on statuses.",
      schema: { type: "string", enum: versions, default: versions.at(-1) },
    },
    Page: {
      name: "page",
      in: "query",
      description: "Page number, from 1.",
      schema: { type: "integer", minimum: 1, default: 1 },
    },
    Limit: {
      name: "limit",
      in: "query",
      description: "Rows per page; a limit above the maximum page size is served as the maximum.",
      schema: { type: "integer", minimum: 1 },
    },
  };

  /** A component under the first of `names` that is free or already holds the same parameter; inline if none is. */
  private shared(names: string[], parameter: Schema): Schema {
    const text = JSON.stringify(parameter);
    for (const name of names) {
      const existing = this.components[name];
      if (existing && JSON.stringify(existing) !== text) continue;
      this.components[name] = parameter;
      return ref(name);
    }
    return parameter;
  }

  private path(op: Operation, name: string): Schema {
    if (op.textParams?.includes(name))
      return this.shared([`Public${pascal(camel(name))}`], {
        name,
        in: "path",
        required: true,
        description:
          name === "account" ? "The account's slug." : `The ${op.def.label.toLowerCase()}'s slug, or its id.`,
        schema: { type: "string", pattern: "^[A-Za-z0-9_-]{1,255}$" },
      });
    const owner = op.parent && name === op.parent.def.param ? op.parent.def : (op.subject ?? op.def);
    return this.shared([`${pascal(camel(name))}Id`], {
      name,
      in: "path",
      required: true,
      description: `Id of the ${owner.label.toLowerCase()}.`,
      schema: { $ref: "#/components/schemas/Id" },
    });
  }

  private include(op: Operation): Schema | null {
    const values = includeValues(op);
    if (!values.length) return null;
    const parameter = {
      name: "include",
      in: "query",
      style: "form",
      explode: false,
      description: "Related records to embed, comma-separated. `x.*` embeds `x` with every relation `x` allows.",
      schema: { type: "array", uniqueItems: true, items: { type: "string", enum: values } },
    };
    if (sameList(values, expand(op.def, op.def.includes)))
      return this.shared([`${schemaName(op.def)}Include`], parameter);
    const route = op.view
      ? pascal(camel(op.view.path))
      : op.parent
        ? `${schemaName(op.parent.def)}${pascal(camel(op.parent.route.path))}`
        : schemaName(op.def);
    return this.shared([`${route}Include`, `${route}${pascal(op.kind)}Include`], parameter);
  }

  of(op: Operation, path: string): Schema[] {
    const parameters: Schema[] = [
      ref("Version"),
      ...[...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => this.path(op, name)),
    ];
    const include = this.include(op);
    if (include) parameters.push(include);
    parameters.push(...(openapiKinds[op.kind].parameters?.() ?? []));
    return parameters;
  }

  /** Whether an operation's parameters include `include`. */
  static hasInclude(op: Operation): boolean {
    return includeValues(op).length > 0;
  }
}
