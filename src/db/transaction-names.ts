import type { StoredRow } from "./models-by-name.ts";
import type { StoreReads } from "./store-reads.ts";
import { StoreTransaction } from "./transaction.ts";

/*
 * What a write transaction remembers of the rows it has read (`StoreTransaction.names`, `.rows`). Outside a
 * transaction nothing is remembered: a name or row could be stale by the next request.
 */

/**
 * Names of rows a write transaction has already read, by model and id, so its hooks can word a headline (a user's
 * name, a rank's) without reading the rows again. Only a transaction has a memo (`trackNames`). Within one, it is as
 * current as a second read would be.
 */
export function trackNames(tx: StoreTransaction): void {
  tx.names = new Map();
}

const namesOf = (reads: StoreReads) => (reads instanceof StoreTransaction ? reads.names : null);

export function rememberName(
  reads: StoreReads,
  model: string,
  row: { id?: unknown; name?: unknown } | null | undefined,
): void {
  if (row?.id != null && typeof row.name === "string") namesOf(reads)?.set(`${model}:${row.id}`, row.name);
}

export function rememberedName(reads: StoreReads, model: string, id: number): string | undefined {
  return namesOf(reads)?.get(`${model}:${id}`);
}

/**
 * Whole rows a write transaction has read, by model and id, for the old values of its updates' events. Only on SQLite
 * (`trackRows`), which runs one write transaction at a time: a row read in it stays current until the transaction
 * itself changes it, and the tracked writes keep the memo up to date. PostgreSQL reads the old row in the UPDATE.
 */
export function trackRows(tx: StoreTransaction): void {
  tx.rows = new Map();
}

const rowsOf = (reads: StoreReads) => (reads instanceof StoreTransaction ? reads.rows : null);

/** Whether `reads` remembers whole rows (`trackRows`). */
export const tracksRows = (reads: StoreReads): boolean => rowsOf(reads) != null;

export function rememberRow(reads: StoreReads, model: string, row: Record<string, unknown> | null | undefined): void {
  if (row?.id != null) rowsOf(reads)?.set(`${model}:${row.id}`, row as StoredRow);
}

export function forgetRow(reads: StoreReads, model: string, id: unknown): void {
  rowsOf(reads)?.delete(`${model}:${id}`);
}

export function rememberedRow(reads: StoreReads, model: string, id: number): StoredRow | undefined {
  return rowsOf(reads)?.get(`${model}:${id}`);
}
