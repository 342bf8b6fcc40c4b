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
