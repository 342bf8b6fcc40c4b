import { Redis } from "ioredis";
import type { Config } from "../core/config.ts";

/** One stored public read: the response as the pipeline answered it before compression, and what it was built from. */
export interface CachedResponse {
  status: number;
  contentType: string;
  body: string;
  etag: string;
  /** The generation names it depends on (`<account>:<resource>`, `<account>:*` for the account epoch)... */
  names: string[];
  /** ...and their generations, read before its operation ran: any other value now means a write may have changed it. */
  generations: number[];
  /** The rate-limit bucket it was charged to (`Auth.credential`); null: the client address's. */
  credential: string | null;
  /** Units of that allowance the operation cost (one per root field; one for an anonymous request). */
  points: number;
  /** The publishable key's origins when it was stored: a hit from one of them needs no CORS lookup. */
  origins?: string[];
}

/**
 * Where the shared response cache keeps its entries and its generation counters: Redis (every instance shares both),
 * or this process's memory (a bounded LRU of entries; counters never evicted, a few per account and resource).
 */
export interface ResponseCacheStore {
  read(key: string): Promise<CachedResponse | null>;
  write(key: string, entry: CachedResponse, ttlSeconds: number): Promise<void>;
  /** The current generation of each name, 0 for one never bumped. */
  generations(names: readonly string[]): Promise<number[]>;
  bump(names: readonly string[]): Promise<void>;
  /** True when every instance sees the same counters (Redis): no instance need bump for another's writes. */
  readonly shared: boolean;
  close(): Promise<void>;
}

/** Bytes an entry holds in memory, roughly: its body and names (UTF-16 strings), plus a fixed overhead. */
const sizeOf = (entry: CachedResponse) =>
  2 * (entry.body.length + entry.names.reduce((n, name) => n + name.length, 0)) + 256;

export function memoryResponseCacheStore({ maxEntries, maxBytes }: { maxEntries: number; maxBytes: number }) {
  const entries = new Map<string, { entry: CachedResponse; expires: number; bytes: number }>();
  const counters = new Map<string, number>();
  let bytes = 0;
  const drop = (key: string) => {
    const held = entries.get(key);
    if (!held) return;
    entries.delete(key);
    bytes -= held.bytes;
  };
  const store: ResponseCacheStore = {
    shared: false,
    async read(key) {
      const held = entries.get(key);
      if (!held) return null;
      if (held.expires <= Date.now()) {
        drop(key);
        return null;
      }
      // Most recently used last: eviction takes from the front.
      entries.delete(key);
      entries.set(key, held);
      return held.entry;
    },
    async write(key, entry, ttlSeconds) {
      drop(key);
      const size = sizeOf(entry);
      if (size > maxBytes) return;
      while (entries.size >= maxEntries || bytes + size > maxBytes) {
        const oldest = entries.keys().next();
        if (oldest.done) break;
        drop(oldest.value);
      }
      entries.set(key, { entry, expires: Date.now() + ttlSeconds * 1000, bytes: size });
      bytes += size;
    },
    async generations(names) {
      return names.map((name) => counters.get(name) ?? 0);
    },
    async bump(names) {
      for (const name of names) counters.set(name, (counters.get(name) ?? 0) + 1);
    },
    async close() {},
  };
  return Object.assign(store, { size: () => ({ entries: entries.size, bytes }) });
}

/**
 * Entries under `<REDIS_PREFIX>:rc:e:<key>` (expiring with their max-age), counters under `<REDIS_PREFIX>:rc:g:<name>`.
 * The client never queues: while Redis is unreachable a read is a miss, a write is skipped, and a bump fails (and is
 * reported by the caller): entries already stored then stay served until they expire, at most their max-age.
 */
export function redisResponseCacheStore(url: string, prefix: string): ResponseCacheStore {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 1000,
    connectTimeout: 2000,
  });
  // Reported where it matters (a failed bump); an "error" event must not end the process.
  client.on("error", () => {});
  const entryKey = (key: string) => `${prefix}:rc:e:${key}`;
  const counterKey = (name: string) => `${prefix}:rc:g:${name}`;
  return {
    shared: true,
    async read(key) {
      const text = await client.get(entryKey(key));
      return text === null ? null : (JSON.parse(text) as CachedResponse);
    },
    async write(key, entry, ttlSeconds) {
      await client.set(entryKey(key), JSON.stringify(entry), "EX", ttlSeconds);
    },
    async generations(names) {
      if (!names.length) return [];
      const values = await client.mget(names.map(counterKey));
      return values.map((value) => Number(value ?? 0));
    },
    async bump(names) {
      if (!names.length) return;
      const pipeline = client.multi();
      for (const name of names) pipeline.incr(counterKey(name));
      const results = await pipeline.exec();
      const failed = results?.find(([error]) => error)?.[0];
      if (failed) throw failed;
    },
    async close() {
      client.disconnect();
    },
  };
}

export function responseCacheStore(config: Config): ResponseCacheStore {
  return config.redisUrl
    ? redisResponseCacheStore(config.redisUrl, config.redisPrefix)
    : memoryResponseCacheStore({ maxEntries: config.responseCacheMaxEntries, maxBytes: config.responseCacheMaxBytes });
}
