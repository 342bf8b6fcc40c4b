import { Liquid } from "liquidjs";

/**
 * Automations' texts and bodies: Liquid templates (LiquidJS), over an event's variables (`data`, `changes`, `type`,
 * `actor`, `user`, `account`).
 *
 * Sandboxed: only the variables' own properties are read (no `constructor`, no prototype), an unknown filter is an
 * error when the template is checked, there is no file system (`include`/`render` find nothing), and parsing,
 * rendering and memory each have a limit, so a template cannot loop for long or build a huge string.
 *
 * A templated JSON value (a webhook's body, an update's values) is any JSON whose strings are templates: each string
 * is rendered on its own, so the result is JSON of the same shape whatever the variables hold.
 */

export const MAX_TEMPLATE_LENGTH = 20_000;
/** Milliseconds one render may take. */
export const TEMPLATE_RENDER_LIMIT_MS = 200;
/** Roughly the characters one render may allocate (LiquidJS's memory limit). */
export const TEMPLATE_MEMORY_LIMIT = 1_000_000;

const liquid = new Liquid({
  ownPropertyOnly: true,
  strictFilters: true,
  strictVariables: false,
  templates: {},
  parseLimit: MAX_TEMPLATE_LENGTH * 2,
  renderLimit: TEMPLATE_RENDER_LIMIT_MS,
  memoryLimit: TEMPLATE_MEMORY_LIMIT,
});

/** Why a template cannot be saved, and where (1-based line and column). */
export interface TemplateProblem {
  message: string;
  line: number;
  column: number;
}

export function checkTemplate(source: string): TemplateProblem | null {
  if (source.length > MAX_TEMPLATE_LENGTH) {
    return { message: `The template is longer than ${MAX_TEMPLATE_LENGTH} characters.`, line: 1, column: 1 };
  }
  try {
    liquid.parse(source);
    return null;
  } catch (error) {
    return templateProblem(error);
  }
}

function templateProblem(error: unknown): TemplateProblem {
  const message = error instanceof Error ? error.message : String(error);
  const at = /, line:(\d+), col:(\d+)$/.exec(message);
  return {
    message: message.replace(/, line:\d+, col:\d+$/, ""),
    line: at ? Number(at[1]) : 1,
    column: at ? Number(at[2]) : 1,
  };
}

/** Renders a template over the variables; throws (with the template's position) when it fails or runs out of budget. */
export async function renderTemplate(source: string, variables: Record<string, unknown>): Promise<string> {
  return (await liquid.parseAndRender(source, variables)) as string;
}

/** A problem found in a templated JSON value, with the path of the string it is in. */
export interface TemplatedJsonProblem extends TemplateProblem {
  path: (string | number)[];
}

/** Checks every string of a JSON value as a template; the first problem, or null. */
export function checkTemplatedJson(value: unknown, path: (string | number)[] = []): TemplatedJsonProblem | null {
  if (typeof value === "string") {
    const problem = checkTemplate(value);
    return problem && { ...problem, path };
  }
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const problem = checkTemplatedJson(item, [...path, index]);
      if (problem) return problem;
    }
  } else if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      const problem = checkTemplatedJson(item, [...path, key]);
      if (problem) return problem;
    }
  }
  return null;
}

/** Renders every string of a JSON value; numbers, booleans, null and the shape stay as they are. */
export async function renderTemplatedJson(value: unknown, variables: Record<string, unknown>): Promise<unknown> {
  if (typeof value === "string") return renderTemplate(value, variables);
  if (Array.isArray(value)) return Promise.all(value.map((item) => renderTemplatedJson(item, variables)));
  if (value && typeof value === "object") {
    const entries = await Promise.all(
      Object.entries(value).map(async ([key, item]) => [key, await renderTemplatedJson(item, variables)] as const),
    );
    return Object.fromEntries(entries);
  }
  return value;
}
