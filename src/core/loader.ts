import DataLoader from "dataloader";

/** A request's batching loader: one promise per key, whatever the number of rows asking for it. */
export interface KeyedLoader<K, V> {
  load(key: K): Promise<V>;
}

/**
 * The request's DataLoader under `key`, made on first use. The promise of each key is kept here rather than in
 * DataLoader's cache, which answers a repeated key with a new promise each time: 2,000 records of 50 ranks then wait on
 * 50 images, not 2,000 (the planned executor completes the rows waiting on one promise together).
 */
/** A loader of any keys and values, as a request keeps them side by side (`Context.loaders`). */
export type AnyLoader = KeyedLoader<never, unknown>;

export function loader<K, V>(
  ctx: { loaders: Map<string, AnyLoader> },
  key: string,
  batch: (keys: readonly K[]) => Promise<V[]>,
): KeyedLoader<K, V> {
  let found = ctx.loaders.get(key) as KeyedLoader<K, V> | undefined;
  if (!found) {
    // Bounded `IN (...)` lists: a page is at most 100 rows, but a batch response may carry 1000.
    const batched = new DataLoader<K, V>(batch, { maxBatchSize: 500, cache: false });
    const promises = new Map<K, Promise<V>>();
    found = {
      load(id: K) {
        let promise = promises.get(id);
        if (!promise) promises.set(id, (promise = batched.load(id)));
        return promise;
      },
    };
    ctx.loaders.set(key, found);
  }
  return found;
}
