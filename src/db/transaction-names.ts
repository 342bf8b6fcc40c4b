/**
 * Names of rows a write transaction has already read, by model and id, so its hooks can word a headline (a user's
 * name, a rank's) without reading the rows again. Only a transaction has a memo (`trackNames`): outside one, a
 * remembered name could be stale by the next request. Within one, it is as current as a second read would be.
 */
const namesOf = new WeakMap<object, Map<string, string>>();

export function trackNames(tx: object): void {
  namesOf.set(tx, new Map());
}

export function rememberName(tx: object, model: string, row: { id?: unknown; name?: unknown } | null | undefined): void {
  if (row?.id != null && typeof row.name === "string") namesOf.get(tx)?.set(`${model}:${row.id}`, row.name);
}

export function rememberedName(tx: object, model: string, id: number): string | undefined {
  return namesOf.get(tx)?.get(`${model}:${id}`);
}

/**
 * Whole rows a write transaction has read, by model and id, for the old values of its updates' events. Only on SQLite
 * (`trackRows`), which runs one write transaction at a time: a row read in it stays current until the transaction
 * itself changes it, and the tracked writes keep the memo up to date. PostgreSQL reads the old row in the UPDATE.
 */
const rowsOf = new WeakMap<object, Map<string, Record<string, unknown>>>();

export function trackRows(tx: object): void {
  rowsOf.set(tx, new Map());
}

/** Whether `tx` remembers whole rows (`trackRows`). */
export const tracksRows = (tx: object): boolean => rowsOf.has(tx);

export function rememberRow(tx: object, model: string, row: Record<string, unknown> | null | undefined): void {
  if (row?.id != null) rowsOf.get(tx)?.set(`${model}:${row.id}`, row);
}

export function forgetRow(tx: object, model: string, id: unknown): void {
  rowsOf.get(tx)?.delete(`${model}:${id}`);
}

export function rememberedRow(tx: object, model: string, id: number): Record<string, unknown> | undefined {
  return rowsOf.get(tx)?.get(`${model}:${id}`);
}
