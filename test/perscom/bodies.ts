import { flatten, type JsonSchema } from "./reference.ts";

/** A valid 1×1 PNG. */
export const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
export const pngDataUri = () => `data:image/png;base64,${PNG_BASE64}`;
export const pngBlob = () => new Blob([Buffer.from(PNG_BASE64, "base64")], { type: "image/png" });
/** A 2 KB text file: PERSCOM's attachment rule wants at least 1 KB. */
export const textDataUri = () =>
  `data:text/plain;base64,${Buffer.from("Muster attachment.\n".repeat(110)).toString("base64")}`;

/** Attributes added to every body when the schema has them, so more than the bare minimum is written. */
const EXTRAS = new Set(["description", "text"]);
/** Preferred values of enumerated (or, in PERSCOM, free but constrained) attributes. */
const PREFERRED: Record<string, unknown> = { type: "text", channels: "database" };
const STARTS = "2030-01-01T10:00:00.000000Z";
const ENDS = "2030-01-01T12:00:00.000000Z";

export interface BodyContext {
  /** A number not used before, for unique values. */
  next(): number;
  /** The id to send in a foreign-key attribute such as `rank_id` (throws when there is none to send). */
  ref(attribute: string): number;
}

/**
 * A valid body for a request schema (JSON Schema, request mode): every required attribute, plus
 * `description`/`text` where the schema has them; `overrides` win and may add attributes the schema
 * does not list (custom form fields, `pivot`).
 */
export function generateBody(
  schema: JsonSchema,
  ctx: BodyContext,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  const { properties, required, title } = flatten(schema);
  const n = ctx.next();
  const body: Record<string, unknown> = {};
  for (const [name, p] of Object.entries(properties)) {
    if (p.readOnly || name in overrides) continue;
    if (!required.includes(name) && !EXTRAS.has(name)) continue;
    body[name] = valueFor(name, p, title ?? "Item", n, ctx);
  }
  return { ...body, ...overrides };
}

function baseType(p: JsonSchema): string | undefined {
  if (Array.isArray(p.type)) return p.type.find((t: string) => t !== "null");
  if (p.type) return p.type;
  const alt = (p.anyOf ?? p.oneOf ?? []).find((s: JsonSchema) => s.type !== "null");
  return alt ? baseType(alt) : undefined;
}

function valueFor(name: string, p: JsonSchema, title: string, n: number, ctx: BodyContext): unknown {
  const type = baseType(p);
  if (Array.isArray(p.enum)) {
    const options: unknown[] = p.enum.filter((v: unknown) => v !== null);
    return options.includes(PREFERRED[name]) ? PREFERRED[name] : options[0];
  }
  if (name.endsWith("_id") && (type === "integer" || type === "number")) return ctx.ref(name);
  if (type === "array") {
    if (name === "recipients") return [ctx.ref("user_id")];
    return [valueFor(name, p.items ?? {}, title, n, ctx)];
  }
  if (type === "boolean") return false;
  if (type === "integer" || type === "number") return n;
  if (p.format === "binary") return name === "file" ? textDataUri() : pngDataUri();
  if (p.format === "date-time") return name === "ends" ? ENDS : STARTS;
  switch (name) {
    case "email":
      return `person${n}@example.com`;
    case "slug":
      return `form-${n}`;
    case "key":
      return `field_${n}`;
    case "color":
      return "#2563eb";
    case "resource":
      return "App\\Models\\Form";
    case "model_type":
      return "App\\Models\\RankRecord";
    case "content":
    case "comment":
    case "text":
    case "description":
    case "instructions":
    case "success_message":
    case "message":
      return `<p>${title} ${name} ${n}</p>`;
  }
  return `${title} ${n}`;
}
