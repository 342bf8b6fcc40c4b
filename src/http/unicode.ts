import { Kind, visit, type DocumentNode } from "graphql";
import type { Plugin } from "graphql-yoga";
import { validationError } from "../core/errors.ts";
import { snake } from "../core/names.ts";

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
// PostgreSQL cannot store NUL in text; SQLite would, so it is refused on both for one behaviour.
const wellFormed = (text: string) => !loneSurrogate.test(text) && !text.includes("\u0000");

/**
 * The path of the first string under `value` (a key, or a value) that is not well-formed, if any. Walked with a stack
 * of its own, depth first in document order, so no nesting can overflow the call stack.
 */
function malformedAt(value: unknown, path: string): string | null {
  const pending: Array<[unknown, string]> = [[value, path]];
  while (pending.length) {
    const [node, at] = pending.pop()!;
    if (typeof node === "string") {
      if (!wellFormed(node)) return at;
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) pending.push([node[i], `${at}.${i}`]);
    } else if (node && typeof node === "object" && !(node instanceof Blob)) {
      const entries = Object.entries(node);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, item] = entries[i];
        pending.push([item, at ? `${at}.${key}` : key], [key, `${at}.${key}`]);
      }
    }
  }
  return null;
}

/**
 * Text that cannot be stored (lone UTF-16 surrogates, which JSON's `\ud800` escapes can produce, and
 * NUL characters) is the client's error, checked once for every operation: REST bodies and query values
 * arrive as variables, GraphQL documents may also carry literals.
 */
export function wellFormedTextPlugin(): Plugin {
  // A parsed document is cached and runs again (REST's documents on every request): its literals are checked once.
  const documentsChecked = new WeakMap<DocumentNode, boolean>();
  const malformedDocument = (document: DocumentNode) => {
    let malformed = documentsChecked.get(document);
    if (malformed === undefined) {
      malformed = false;
      visit(document, {
        [Kind.STRING]: (node) => {
          if (!wellFormed(node.value)) malformed = true;
        },
      });
      documentsChecked.set(document, malformed);
    }
    return malformed;
  };
  return {
    onExecute({ args }) {
      const inVariables = malformedAt(args.variableValues ?? {}, "");
      const where = inVariables ?? (malformedDocument(args.document as DocumentNode) ? "query" : null);
      if (!where) return;
      const key = where
        .replace(/^\./, "")
        .replace(/^input\./, "")
        .split(".")
        .map(snake)
        .join(".");
      throw validationError({ [key]: ["The text is not valid: it holds a NUL character or a lone surrogate."] });
    },
  };
}
