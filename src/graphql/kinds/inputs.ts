import { dynamic, type InputFieldMap, type InputRef } from "../pothos-dynamic.ts";
import type { PivotDef, ResourceDef } from "../../resources/define.ts";
import { linkResourceOf } from "../../resources/index.ts";
import { fieldDescription } from "../../resources/descriptions.ts";
import { pascal } from "../../core/names.ts";
import type { Builder } from "../builder.ts";
import { scalarOf } from "../objects.ts";

/** Input types generated from the registry, created once per name. */
export function inputs(builder: Builder) {
  const b = dynamic(builder);
  const made = new Map<string, InputRef>();
  const once = (name: string, make: () => InputRef): InputRef => {
    const known = made.get(name);
    if (known) return known;
    const ref = make();
    made.set(name, ref);
    return ref;
  };
  const resourceInput = (def: ResourceDef) =>
    once(`${pascal(def.name)}Input`, () =>
      b.inputType(`${pascal(def.name)}Input`, {
        description: `Writable attributes of a ${def.label.toLowerCase()}. Required on create: ${
          [
            ...Object.entries(def.fields)
              .filter(([, f]) => f.required)
              .map(([k]) => k),
            ...Object.entries(def.uploads ?? {})
              .filter(([, u]) => u.required)
              .map(([k]) => k),
          ].join(", ") || "none"
        }.`,
        fields: (t) => {
          const fields: InputFieldMap = {};
          for (const [key, f] of Object.entries(def.fields)) {
            if (f.writable === false) continue;
            fields[key] = t.field({ type: scalarOf(f), required: false, description: fieldDescription(def, key, f) });
          }
          fields.createdAt = t.field({
            type: "DateTime",
            required: false,
            description: "When the row was created; now when omitted.",
          });
          fields.updatedAt = t.field({
            type: "DateTime",
            required: false,
            description: "When the row last changed; now when omitted.",
          });
          for (const [name, upload] of Object.entries(def.uploads ?? {})) {
            fields[name] = t.field({
              type: "File",
              required: false,
              description: `The ${upload.image ? "image" : "file"} to upload (GraphQL multipart request); stored in \`${upload.column}\`.`,
            });
          }
          return fields;
        },
      }),
    );
  const pivotInput = (pivot: PivotDef | undefined) =>
    !pivot || Object.keys(pivot.fields).length === 0
      ? null
      : once(`${pivot.model}PivotInput`, () =>
          b.inputType(`${pivot.model}PivotInput`, {
            description: `The link columns of a ${linkResourceOf(pivot).label.toLowerCase()} row.`,
            fields: (t) =>
              Object.fromEntries(
                Object.entries(pivot.fields).map(([k, f]) => [
                  k,
                  t.field({
                    type: scalarOf(f),
                    required: false,
                    description: fieldDescription(linkResourceOf(pivot), k, f),
                  }),
                ]),
              ),
          }),
        );
  const linkItemInput = (pivot: PivotDef | undefined) =>
    once(`${pivotInput(pivot) ? pivot!.model : "Related"}ItemInput`, () =>
      b.inputType(`${pivotInput(pivot) ? pivot!.model : "Related"}ItemInput`, {
        description: "A related row to link, by id, with the link's columns where the link has any.",
        fields: (t) => ({
          id: t.int({ required: true, description: "Id of the related row." }),
          ...(pivotInput(pivot)
            ? { pivot: t.field({ type: pivotInput(pivot), required: false, description: "Columns of the link row." }) }
            : {}),
        }),
      }),
    );
  const batchItemInput = (def: ResourceDef, pivot?: PivotDef) =>
    once(`${pascal(def.name)}${pivotInput(pivot) ? pivot!.model : ""}BatchItemInput`, () =>
      b.inputType(`${pascal(def.name)}${pivotInput(pivot) ? pivot!.model : ""}BatchItemInput`, {
        description: `One ${def.label.toLowerCase()} of a batch update: its id and the attributes to change.`,
        fields: (t) => ({
          id: t.int({ required: true, description: `Id of the ${def.label.toLowerCase()} to update.` }),
          input: t.field({
            type: resourceInput(def),
            required: false,
            description: "The attributes to change; the others keep their values.",
          }),
          ...(pivotInput(pivot)
            ? { pivot: t.field({ type: pivotInput(pivot), required: false, description: "Link columns to change." }) }
            : {}),
        }),
      }),
    );
  const newItemInput = (def: ResourceDef, pivot: PivotDef) =>
    once(`${pascal(def.name)}${pivot.model}NewItemInput`, () =>
      b.inputType(`${pascal(def.name)}${pivot.model}NewItemInput`, {
        description: `One new ${def.label.toLowerCase()} of a batch create, with the columns of its link to the parent.`,
        fields: (t) => ({
          input: t.field({
            type: resourceInput(def),
            required: true,
            description: `The new ${def.label.toLowerCase()}'s attributes.`,
          }),
          pivot: t.field({
            type: pivotInput(pivot),
            required: false,
            description: "Columns of the link to the parent.",
          }),
        }),
      }),
    );
  const filterInput = once("FilterInput", () => {
    const ref = b.inputRef("FilterInput");
    ref.implement({
      description:
        "A search condition (`field` `operator` `value`), or a group of conditions under `nested` (one level).",
      fields: (t) => ({
        field: t.string({
          description: "A column (`name`), a to-one relation's column (`rank.name`) or a link column (`pivot.order`).",
        }),
        operator: t.string({
          description: "< <= > >= = != like, not like, ilike, not ilike, in, not in, all in, any in. Default =.",
        }),
        value: t.field({
          type: "JSON",
          description: "The value to compare with: a list for in, not in, all in and any in; `%` wildcards for like.",
        }),
        type: t.string({ description: "and (default) or or: how this condition joins the ones before it." }),
        nested: t.field({
          type: [ref],
          required: false,
          description: "Conditions grouped in parentheses instead of field, operator and value.",
        }),
      }),
    });
    return ref;
  });
  const sortInput = once("SortInput", () =>
    b.inputType("SortInput", {
      description: "One sort key; earlier keys sort first, the resource's default order breaks ties.",
      fields: (t) => ({
        field: t.string({
          required: true,
          description: "A column (`name`) or a to-one relation's column (`rank.order`).",
        }),
        direction: t.string({ description: "asc (default) or desc" }),
      }),
    }),
  );
  const scopeInput = once("ScopeInput", () =>
    b.inputType("ScopeInput", {
      description: "A named filter the resource offers (PERSCOM's search scopes), such as `visible`.",
      fields: (t) => ({
        name: t.string({ required: true, description: "The scope's name." }),
        parameters: t.field({ type: ["JSON"], required: false, description: "The scope's parameters, in order." }),
      }),
    }),
  );
  const searchInput = once("SearchInput", () =>
    b.inputType("SearchInput", {
      description: "Full-text search over the resource's searchable columns.",
      fields: (t) => ({
        value: t.string({ description: "The text to look for; rows containing it in any searchable column match." }),
        caseSensitive: t.boolean({ description: "Default false." }),
      }),
    }),
  );
  return {
    resourceInput,
    pivotInput,
    linkItemInput,
    batchItemInput,
    newItemInput,
    filterInput,
    sortInput,
    scopeInput,
    searchInput,
  };
}

/** The REST facade's input types, as the kinds' arguments use them. */
export type Inputs = ReturnType<typeof inputs>;
