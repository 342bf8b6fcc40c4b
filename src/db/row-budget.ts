import { ApiError } from "../core/errors.ts";

/** The rows one request may still read. */
export interface RowBudget {
  readonly cap: number;
  read: number;
}

/** Refusal once a request has read more than its rows: a 422 (REST names `include` when includes asked for them). */
export class RowCapExceeded extends ApiError {
  constructor(readonly cap: number) {
    const message = `The request would load more than ${cap} rows (MAX_ROWS_PER_REQUEST): ask for fewer or smaller lists.`;
    super("VALIDATION", message, { query: [message] });
  }
}

/** A fresh budget of `cap` rows. */
export const rowBudget = (cap: number): RowBudget => ({ cap, read: 0 });

/**
 * Counts `n` rows just read against `budget`; throws once it is passed. No budget (work outside a request): no count.
 * The budget is passed along explicitly (a request's store carries it, `Store.withBudget`) rather than found in the
 * async context: an AsyncLocalStorage turns on promise hooks for every promise the process makes, 3.5% of a REST
 * request's CPU (bench/FINDINGS.md).
 */
export function takeRows(budget: RowBudget | null, n: number): void {
  if (!budget || n === 0) return;
  budget.read += n;
  if (budget.read > budget.cap) throw new RowCapExceeded(budget.cap);
}
