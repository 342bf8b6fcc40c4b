import { snake } from "../core/names.ts";
import { PUBLIC_FIELD_COLUMNS, PUBLIC_FORM_COLUMNS, PUBLIC_SUBMISSION_COLUMNS } from "../graphql/kinds/public-forms.ts";
import type { Body } from "./body.ts";

/*
 * The public-form routes in REST: a submission's body is the field values at its top level (as PERSCOM's submission
 * bodies spread them), beside the captcha token under our key or a vendor widget's; the answers are the GraphQL
 * result with snake_case keys in `{data}`.
 */

/** The body keys a captcha token may come in: ours, and the names Turnstile's, hCaptcha's and reCAPTCHA's widgets post. */
export const CAPTCHA_TOKEN_KEYS = [
  "captcha_token",
  "cf-turnstile-response",
  "h-captcha-response",
  "g-recaptcha-response",
] as const;

export const publicFormSelection = `${PUBLIC_FORM_COLUMNS.join(" ")} fields { ${PUBLIC_FIELD_COLUMNS.join(" ")} }`;
export const SUBMISSION_SELECTION = PUBLIC_SUBMISSION_COLUMNS.join(" ");

/** `values` (every key but the captcha's) and `captchaToken` (the first of its keys sent as a string). */
export function publicSubmitVariables(body: Body): Body {
  const values: Body = {};
  for (const [key, value] of Object.entries(body))
    if (!(CAPTCHA_TOKEN_KEYS as readonly string[]).includes(key)) values[key] = value;
  const token = CAPTCHA_TOKEN_KEYS.map((k) => body[k]).find((v) => typeof v === "string" && v !== "");
  return { values, captchaToken: token ?? null };
}

/** A GraphQL result with REST's snake_case keys, nested objects and lists included (not a field's option values). */
export function publicFormEnvelope(result: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(result).map(([k, v]) => [
      snake(k),
      k === "fields" && Array.isArray(v) ? v.map((f) => publicFormEnvelope(f as Record<string, unknown>)) : v,
    ]),
  );
}
