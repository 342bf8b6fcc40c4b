import { Kind, visit, type DocumentNode } from "graphql";
import type { Plugin } from "graphql-yoga";
import { validationError } from "../errors.ts";
import { snake } from "../graphql/names.ts";

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
// PostgreSQL cannot store NUL in text; SQLite would, so it is refused on both for one behaviour.
const wellFormed = (text: string) => !loneSurrogate.test(text) && !text.includes("\u0000");

/** The path of the first string under `value` that is not well-formed UTF-16 (a lone surrogate), if any. */
function malformedAt(value: unknown, path: string): string | null {
  if (typeof value === "string") return wellFormed(value) ? null : path;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = malformedAt(item, `${path}.${i}`);
      if (found) return found;
    }
  } else if (value && typeof value === "object" && !(value instanceof Blob)) {
    for (const [key, item] of Object.entries(value)) {
      const found = malformedAt(key, `${path}.${key}`) ?? malformedAt(item, path ? `${path}.${key}` : key);
      if (found) return found;
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
  return {
    onExecute({ args }) {
      const inVariables = malformedAt(args.variableValues ?? {}, "");
      let inDocument = false;
      visit(args.document as DocumentNode, {
        [Kind.STRING]: (node) => {
          if (!wellFormed(node.value)) inDocument = true;
        },
      });
      const where = inVariables ?? (inDocument ? "query" : null);
      if (!where) return;
      const key = where.replace(/^\./, "").replace(/^input\./, "").split(".").map(snake).join(".");
      throw validationError({ [key]: ["The text is not valid: it holds a NUL character or a lone surrogate."] });
    },
  };
}
