import { createRequire } from "node:module";
import jexlModule from "jexl";

/**
 * Automations' conditions: expressions in Jexl (a well-kept expression language with no `eval`, no `Function` and no
 * calls but the functions given to it), over an event's variables (`data`, `changes`, `type`, `actor`, `user`).
 *
 * `and` and `or` are spelled as words as well as `&&` and `||`. Property names that reach into JavaScript's object
 * machinery (`constructor`, `__proto__`, `prototype`) are refused when the condition is checked, whether written as a
 * name or as a quoted key. Each evaluation has a time budget; the expression's length and token count are bounded.
 */

/** The longest condition accepted, in characters, and in tokens. */
export const MAX_CONDITION_LENGTH = 2000;
export const MAX_CONDITION_TOKENS = 400;
/** How long one evaluation may take before it counts as failed. */
export const CONDITION_TIMEOUT_MS = 100;

const FORBIDDEN_NAMES = new Set(["constructor", "__proto__", "prototype"]);
/** Jexl's opening bracket tokens, and the type of the token that closes each. */
const CLOSERS: Record<string, string> = { openParen: "closeParen", openBracket: "closeBracket", openCurl: "closeCurl" };

interface Token {
  type: string;
  value: unknown;
  raw: string;
}
interface LexerInstance {
  getElements(source: string): string[];
  getTokens(elements: string[]): Token[];
}
interface ParserInstance {
  addToken(token: Token): void;
  complete(): unknown;
}

const require = createRequire(import.meta.url);
// The lexer and parser Jexl compiles with, used to find where a condition stops making sense.
const Lexer = require("jexl/dist/Lexer.js") as new (grammar: unknown) => LexerInstance;
const Parser = require("jexl/dist/parser/Parser.js") as new (grammar: unknown) => ParserInstance;

const jexl = new jexlModule.Jexl();
jexl.addBinaryOp("and", 10, (left: unknown, right: unknown) => Boolean(left) && Boolean(right));
jexl.addBinaryOp("or", 10, (left: unknown, right: unknown) => Boolean(left) || Boolean(right));
const grammar = (jexl as unknown as { _grammar: unknown })._grammar;

/** Why a condition cannot be saved: what is wrong, and where (0-based offset in the source). */
export interface ConditionProblem {
  message: string;
  position: number;
}

/** Checks a condition's syntax and names; null when it can be saved. */
export function checkCondition(source: string): ConditionProblem | null {
  if (source.length > MAX_CONDITION_LENGTH) {
    return {
      message: `The condition is longer than ${MAX_CONDITION_LENGTH} characters.`,
      position: MAX_CONDITION_LENGTH,
    };
  }
  if (!source.trim()) return { message: "The condition is empty.", position: 0 };
  const lexer = new Lexer(grammar);
  const parser = new Parser(grammar);
  let position = 0;
  let tokens: Token[];
  try {
    tokens = lexer.getTokens(lexer.getElements(source));
  } catch (error) {
    return { message: describe(error), position: firstInvalidOffset(source, lexer) };
  }
  if (tokens.length > MAX_CONDITION_TOKENS) {
    return { message: `The condition has more than ${MAX_CONDITION_TOKENS} tokens.`, position: 0 };
  }
  // Leading whitespace is not part of any token.
  position = source.length - source.trimStart().length;
  // Jexl's parser completes an expression that opens with a bracket it never closes (`(data.type`): counted here.
  const open: { closer: string; position: number }[] = [];
  for (const token of tokens) {
    if (Object.hasOwn(CLOSERS, token.type)) open.push({ closer: CLOSERS[token.type], position });
    else if (open.at(-1)?.closer === token.type) open.pop();
    // Jexl looks names up in plain objects, so `constructor` even lexes as an (unknown) grammar element.
    const name = typeof token.value === "string" ? token.value : token.raw.trim();
    if (FORBIDDEN_NAMES.has(name)) {
      return { message: `The name ${JSON.stringify(name)} cannot be used in a condition.`, position };
    }
    try {
      parser.addToken(token);
    } catch (error) {
      return { message: describe(error), position };
    }
    position += token.raw.length;
  }
  try {
    parser.complete();
  } catch (error) {
    return { message: describe(error), position: source.length };
  }
  const unclosed = open.at(-1);
  if (unclosed)
    return { message: "Unexpected end of expression: a bracket is not closed", position: unclosed.position };
  return null;
}

/** Where the lexer gives up: the start of the first element it cannot read as a token. */
function firstInvalidOffset(source: string, lexer: LexerInstance): number {
  let offset = 0;
  for (const element of lexer.getElements(source)) {
    try {
      lexer.getTokens([element]);
    } catch {
      return offset;
    }
    offset += element.length;
  }
  return 0;
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // Jexl appends the whole expression; the position says where.
  return message.replace(/ in expression: [\s\S]*$/, "").replace(/: [\s\S]*$/, "");
}

/** The value of a condition over the variables, as a boolean; throws when it fails or runs out of time. */
export async function evaluateCondition(source: string, variables: Record<string, unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`The condition took longer than ${CONDITION_TIMEOUT_MS} ms.`)),
      CONDITION_TIMEOUT_MS,
    );
  });
  try {
    return Boolean(await Promise.race([jexl.eval(source, variables), timeout]));
  } finally {
    clearTimeout(timer);
  }
}
