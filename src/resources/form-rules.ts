import type { ModelRow } from "./define.ts";

/*
 * The checks of a public form's submission, field by field: the field's type, its options, `required`, and the
 * Laravel-style `rules` PERSCOM stores (`required|max:255|email`). Only the subset below is understood; a field whose
 * rules name anything else cannot be saved (the field resource refuses it, `unknownRules`), so a rule is never
 * silently skipped for the submitter's benefit. `regex:` is not in the subset: a pattern a form's editor writes could
 * take exponential time on a submitter's input.
 *
 * The submitter's name and email are the values of the form's fields keyed `name` and `email` (a submission has no
 * columns of its own for them); a field keyed `email` is checked as an email address whatever its type.
 */

/** The rules a field's `rules` may name, each with the number of arguments it takes (`null`: one or more). */
export const knownRules: Readonly<Record<string, number | null>> = {
  required: 0,
  nullable: 0,
  string: 0,
  numeric: 0,
  integer: 0,
  boolean: 0,
  email: 0,
  url: 0,
  min: 1,
  max: 1,
  between: 2,
  in: null,
};

/** What the subset looks like: known rule names only, each with its arguments (`max:255`), joined by `|`. */
const oneRule = `\\s*(?:${Object.entries(knownRules)
  .map(([name, arity]) => (arity === 0 ? `${name}\\s*` : `${name}:[^|]+`))
  .join("|")})`;
export const RULES_PATTERN = new RegExp(`^(?:${oneRule})(?:\\|${oneRule})*$`);
export const RULES_REFUSED = `The rules field may name only the rules the server applies: ${Object.entries(knownRules)
  .map(([name, arity]) =>
    arity === 0 ? name : arity === 1 ? `${name}:N` : arity === 2 ? `${name}:A,B` : `${name}:A,B,...`,
  )
  .join(", ")} (joined by |).`;

interface Rule {
  name: string;
  args: string[];
}

/** `required|max:255` as its rules; empty for null or blank. */
export function parseRules(rules: string | null | undefined): Rule[] {
  if (!rules?.trim()) return [];
  return rules
    .split("|")
    .map((r) => r.trim())
    .filter(Boolean)
    .map((r) => {
      const colon = r.indexOf(":");
      const name = (colon < 0 ? r : r.slice(0, colon)).trim().toLowerCase();
      const args = colon < 0 ? [] : r.slice(colon + 1).split(",");
      return { name, args: args.map((a) => a.trim()) };
    });
}

/** What is wrong with a field's `rules`: the rules the server cannot apply, or a rule's arguments; null when fine. */
export function rulesProblem(rules: string | null | undefined): string | null {
  for (const rule of parseRules(rules)) {
    const arity = Object.hasOwn(knownRules, rule.name) ? knownRules[rule.name] : undefined;
    if (arity === undefined)
      return `The rule ${rule.name} is not supported: use ${Object.keys(knownRules).join(", ")} (min:N, max:N, between:A,B, in:A,B,...).`;
    if (arity === null ? rule.args.length === 0 || rule.args.some((a) => a === "") : rule.args.length !== arity)
      return `The rule ${rule.name} takes ${arity === null ? "one or more values" : `${arity} argument${arity === 1 ? "" : "s"}`}.`;
    if ((rule.name === "min" || rule.name === "max" || rule.name === "between") && rule.args.some(notNumber))
      return `The rule ${rule.name} takes numbers.`;
  }
  return null;
}

const notNumber = (a: string) => a === "" || !Number.isFinite(Number(a));

/** The field types that take no value from a submitter: a block of text shown on the form, a file (no uploads here). */
const takesNoValue = new Set(["component_text", "file"]);
/** The most characters of a value where the rules set no `max`: a one-line input's, a textarea's. */
const LINE_MAX = 255;
const TEXT_MAX = 65535;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?$/;

const validDate = (y: string, m: string, d: string) => {
  const date = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
  return date.getUTCFullYear() === Number(y) && date.getUTCMonth() === Number(m) - 1 && date.getUTCDate() === Number(d);
};

const isUrl = (value: string) => {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
};

/** The values of a select field's own options (`[{label, value}]`). */
const optionValues = (options: unknown): string[] =>
  Array.isArray(options)
    ? options.flatMap((o) =>
        typeof o === "object" && o !== null && "value" in o ? [String((o as { value: unknown }).value)] : [],
      )
    : [];

export type PublicField = Pick<
  ModelRow<"Field">,
  "key" | "name" | "type" | "required" | "rules" | "readonly" | "hidden" | "options" | "optionsType" | "default"
>;

/** A select field whose options are rows of a resource (`optionsModel`): the value is a row id, checked by the caller. */
export const choosesRow = (f: PublicField) => f.type === "select" && f.optionsType === "model";

/**
 * Checks one submitted value against its field; answers the value to store (a number input's number, a boolean
 * input's boolean, a chosen row's id as text, else the text as sent) or the messages. `value` is present and not
 * empty (the caller has checked `required`).
 */
function checkValue(f: PublicField, value: unknown, rules: Rule[]): { value?: unknown; errors: string[] } {
  const human = f.name || f.key;
  const has = (name: string) => rules.some((r) => r.name === name);
  const numeric = f.type === "number" || has("numeric") || has("integer");
  let stored: unknown = value;
  if (f.type === "boolean" || has("boolean")) {
    const booleans: Record<string, boolean> = { true: true, false: false, "1": true, "0": false };
    const key = String(value);
    if (!(typeof value === "boolean" || typeof value === "number" || typeof value === "string") || !(key in booleans))
      return { errors: [`The ${human} field must be true or false.`] };
    // A boolean input stores true or false; another input with the `boolean` rule keeps the text it was sent.
    if (f.type === "boolean") return { value: booleans[key], errors: [] };
    if (typeof value !== "string") return { errors: [`The ${human} field must be a string.`] };
    stored = value;
  }
  if (numeric) {
    const n =
      typeof value === "number" ? value : typeof value === "string" && value.trim() !== "" ? Number(value) : NaN;
    if (!Number.isFinite(n)) return { errors: [`The ${human} field must be a number.`] };
    if (has("integer") && !Number.isInteger(n)) return { errors: [`The ${human} field must be an integer.`] };
    if (f.type !== "number" && typeof value !== "string") return { errors: [`The ${human} field must be a string.`] };
    stored = n;
  } else if (choosesRow(f)) {
    const id = typeof value === "number" ? value : typeof value === "string" && /^\d+$/.test(value) ? Number(value) : 0;
    if (!Number.isSafeInteger(id) || id <= 0) return { errors: [`The selected ${human} is invalid.`] };
    return { value: String(id), errors: [] };
  } else if (typeof value !== "string") {
    return { errors: [`The ${human} field must be a string.`] };
  }
  const errors: string[] = [];
  const text = typeof stored === "string" ? stored : null;
  const size = text !== null ? text.length : (stored as number);
  const unit = text !== null ? " characters" : "";
  if (text !== null) {
    if ((f.type === "email" || f.key === "email" || has("email")) && !EMAIL.test(text))
      errors.push(`The ${human} field must be a valid email address.`);
    if (has("url") && !isUrl(text)) errors.push(`The ${human} field must be a valid URL.`);
    if (f.type === "date") {
      const m = DATE.exec(text);
      if (!m || !validDate(m[1], m[2], m[3])) errors.push(`The ${human} field must be a valid date (YYYY-MM-DD).`);
    }
    if (f.type === "datetime-local") {
      const m = DATETIME.exec(text);
      if (!m || !validDate(m[1], m[2], m[3]) || Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6] ?? 0) > 59)
        errors.push(`The ${human} field must be a valid date and time (YYYY-MM-DDTHH:MM).`);
    }
    if (f.type === "select" && !optionValues(f.options).includes(text))
      errors.push(`The selected ${human} is invalid.`);
    const cap = f.type === "textarea" ? TEXT_MAX : LINE_MAX;
    if (text.length > cap && !has("max")) errors.push(`The ${human} field must not be greater than ${cap} characters.`);
  }
  for (const rule of rules) {
    const [a, b] = rule.args.map(Number);
    if (rule.name === "min" && size < a) errors.push(`The ${human} field must be at least ${a}${unit}.`);
    if (rule.name === "max" && size > a) errors.push(`The ${human} field must not be greater than ${a}${unit}.`);
    if (rule.name === "between" && (size < a || size > b))
      errors.push(`The ${human} field must be between ${a} and ${b}${unit}.`);
    if (rule.name === "in" && !rule.args.includes(String(stored))) errors.push(`The selected ${human} is invalid.`);
  }
  if (errors.length) return { errors };
  // A number input stores a number; a text input with a numeric rule, the text.
  return { value: f.type === "number" ? stored : value, errors: [] };
}

/** The messages of a submission's values, keyed by field key, and the values to store. */
export interface PublicCheck {
  values: Record<string, unknown>;
  errors: Record<string, string[]>;
}

/**
 * Checks a public submission's `values` against the form's `fields`: a key that names no field the submitter sees, a
 * hidden one included, is refused by name; a read-only field cannot be set (it keeps its default); each value is
 * checked by its field's type, options and rules.
 */
export function checkPublicValues(fields: readonly PublicField[], values: Record<string, unknown>): PublicCheck {
  const errors: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  const add = (key: string, message: string) => (errors[key] ??= []).push(message);
  const stored: Record<string, unknown> = {};
  const byKey = new Map(fields.filter((f) => !f.hidden).map((f) => [f.key, f]));
  for (const key of Object.keys(values)) if (!byKey.has(key)) add(key, `The form has no field ${key}.`);
  for (const f of byKey.values()) {
    const human = f.name || f.key;
    const value = Object.hasOwn(values, f.key) ? values[f.key] : undefined;
    const given = value !== undefined && value !== null && value !== "";
    if (f.readonly || takesNoValue.has(f.type)) {
      if (value !== undefined) add(f.key, `The ${human} field cannot be set on this form.`);
      else if (f.readonly && f.default != null) stored[f.key] = f.default;
      continue;
    }
    const rules = parseRules(f.rules);
    if (!given) {
      if (f.required || rules.some((r) => r.name === "required")) add(f.key, `The ${human} field is required.`);
      continue;
    }
    const checked = checkValue(f, value, rules);
    for (const message of checked.errors) add(f.key, message);
    if (!checked.errors.length) stored[f.key] = checked.value;
  }
  return { values: stored, errors };
}
