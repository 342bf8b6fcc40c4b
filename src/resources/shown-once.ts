/**
 * What one answer shows and no other (a webhook's secret, an OAuth client's secret, an API key, a sign-in link's URL):
 * kept by request context and row id for the `once` computed field that shows it, and forgotten with the request. A
 * value made before its row has an id (in `beforeWrite` of a create) is held under a token of the row's own (its hash)
 * until `afterCreate` reveals it by id.
 */
export class ShownOnce {
  readonly #byRow = new WeakMap<object, Map<number, string>>();
  readonly #held = new WeakMap<object, Map<string, string>>();

  reveal(ctx: object, rowId: number, value: string): void {
    let values = this.#byRow.get(ctx);
    if (!values) this.#byRow.set(ctx, (values = new Map()));
    values.set(rowId, value);
  }

  /** The value this request revealed for the row, or null (every other request's answer). */
  shown(ctx: object, rowId: number): string | null {
    return this.#byRow.get(ctx)?.get(rowId) ?? null;
  }

  hold(ctx: object, token: string, value: string): void {
    let values = this.#held.get(ctx);
    if (!values) this.#held.set(ctx, (values = new Map()));
    values.set(token, value);
  }

  /** Reveals for `rowId` what was held under `token`, if anything was. */
  revealHeld(ctx: object, token: string | null, rowId: number): void {
    const value = token === null ? undefined : this.#held.get(ctx)?.get(token);
    if (value !== undefined) this.reveal(ctx, rowId, value);
  }
}
