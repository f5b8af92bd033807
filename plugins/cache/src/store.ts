import { LRUCache } from "lru-cache";
import type { CacheEntry } from "./entry.js";

export type EvictionReason = "entries" | "bytes";

/**
 * Where cached responses live. `get` is synchronous because hits are answered before routing,
 * from prepared bytes. A store shared by several processes (Redis) keeps such a local tier in
 * front and sends `purge` to its peers; the plugin only ever calls these methods.
 */
export interface CacheStore {
  get(key: string): CacheEntry | undefined;
  /** Keeps `entry` under `key` unless it is too large for the store; false when not kept. */
  set(key: string, entry: CacheEntry): boolean;
  /** Removes every entry that carries one of `tags`; how many were removed. */
  purge(tags: readonly string[]): number;
  clear(): void;
  readonly entries: number;
  readonly bytes: number;
}

export interface MemoryStoreOptions {
  maxEntries: number;
  maxBytes: number;
  maxEntryBytes: number;
  onEvict(reason: EvictionReason): void;
}

/**
 * The local store: lru-cache bounded by entries and by bytes, plus an index from each tag to the
 * keys that carry it, kept in step through lru-cache's dispose callback (evictions included), so a
 * purge touches only the entries it removes.
 */
export class MemoryCacheStore implements CacheStore {
  readonly #lru: LRUCache<string, CacheEntry>;
  readonly #byTag = new Map<string, Set<string>>();
  readonly #maxEntries: number;

  constructor(options: MemoryStoreOptions) {
    this.#maxEntries = options.maxEntries;
    this.#lru = new LRUCache<string, CacheEntry>({
      max: options.maxEntries,
      maxSize: options.maxBytes,
      maxEntrySize: options.maxEntryBytes,
      sizeCalculation: (entry) => entry.bytes,
      dispose: (entry, key, reason) => {
        this.#untag(key, entry);
        if (reason === "evict") options.onEvict(this.#lru.size >= this.#maxEntries ? "entries" : "bytes");
      },
    });
  }

  get(key: string): CacheEntry | undefined {
    return this.#lru.get(key);
  }

  set(key: string, entry: CacheEntry): boolean {
    this.#lru.set(key, entry);
    if (this.#lru.peek(key) !== entry) return false;
    for (const tag of entry.tags) {
      let keys = this.#byTag.get(tag);
      if (!keys) this.#byTag.set(tag, (keys = new Set()));
      keys.add(key);
    }
    return true;
  }

  purge(tags: readonly string[]): number {
    let removed = 0;
    for (const tag of tags) {
      const keys = this.#byTag.get(tag);
      if (!keys) continue;
      for (const key of [...keys]) if (this.#lru.delete(key)) removed++;
    }
    return removed;
  }

  clear(): void {
    this.#lru.clear();
  }

  get entries(): number {
    return this.#lru.size;
  }

  get bytes(): number {
    return this.#lru.calculatedSize;
  }

  #untag(key: string, entry: CacheEntry): void {
    for (const tag of entry.tags) {
      const keys = this.#byTag.get(tag);
      if (!keys) continue;
      keys.delete(key);
      if (keys.size === 0) this.#byTag.delete(tag);
    }
  }
}
