import { AsyncLocalStorage } from "node:async_hooks";
import { ApiError } from "../errors.ts";

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

// The reader, the writer and Prisma are shared by every request, so the budget travels with the request's async
// context rather than through their arguments; it is entered around one operation's execution.
const budgets = new AsyncLocalStorage<RowBudget>();

/** `work` with a fresh budget of `cap` rows for everything it reads. */
export function withRowBudget<T>(cap: number, work: () => T): T {
  return budgets.run({ cap, read: 0 }, work);
}

/** Counts `n` rows just read against the current request's budget; throws once it is passed. No budget: no count. */
export function takeRows(n: number): void {
  const budget = budgets.getStore();
  if (!budget || n === 0) return;
  budget.read += n;
  if (budget.read > budget.cap) throw new RowCapExceeded(budget.cap);
}

/** Whether the code running belongs to a request with a row budget. */
export const hasRowBudget = () => budgets.getStore() !== undefined;
