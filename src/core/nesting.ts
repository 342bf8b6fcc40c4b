import { Lexer, Source, TokenKind } from "graphql";

/**
 * Whether `value` holds arrays or objects nested more than `max` deep (`{}` is one level, `{"a": []}` two). Walked
 * with a stack of its own: the value may be nested far deeper than the call stack allows.
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length) {
    const [node, depth] = pending.pop()!;
    if (typeof node !== "object" || node === null || node instanceof Blob) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === "object" && child !== null) pending.push([child, depth + 1]);
    }
  }
  return false;
}

const opening = new Set<string>([TokenKind.BRACE_L, TokenKind.BRACKET_L, TokenKind.PAREN_L]);
const closing = new Set<string>([TokenKind.BRACE_R, TokenKind.BRACKET_R, TokenKind.PAREN_R]);

/**
 * Whether a GraphQL document nests brackets (selection sets, lists, input objects, arguments) more than `max` deep
 * within its first `maxTokens` tokens. graphql-js's parser recurses once per level and would overflow the stack on a
 * few thousand before its token limit applies, so this reads the tokens alone, with graphql's own lexer (strings and
 * comments are not brackets), stopping where the token limit would. A syntax error is left for the parser to report.
 */
export function documentNestedDeeperThan(source: string, max: number, maxTokens: number): boolean {
  let brackets = 0;
  for (let i = 0; i < source.length && brackets <= max; i++) {
    const c = source.charCodeAt(i);
    if (c === 123 || c === 91 || c === 40) brackets++;
  }
  if (brackets <= max) return false;
  const lexer = new Lexer(new Source(source));
  let depth = 0;
  try {
    for (let n = 0; n <= maxTokens; n++) {
      const { kind } = lexer.advance();
      if (kind === TokenKind.EOF) return false;
      if (opening.has(kind)) {
        if (++depth > max) return true;
      } else if (closing.has(kind)) depth--;
    }
  } catch {
    return false;
  }
  return false;
}
