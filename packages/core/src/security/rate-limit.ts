import { LRUCache } from "lru-cache";
import { rateKey } from "./rate-key.js";

/** Where a store keeps its counters and how it is doing (`/health/security`). */
export interface RateLimitStoreStatus {
  /** `memory`, `redis`, …. */
  kind: string;
  /** Whether every process of the deployment sees the same counters. */
  shared?: boolean;
  /** `degraded`: a shared store cannot be reached, and each process counts on its own meanwhile. */
  state: "ok" | "degraded";
  /** What is wrong, without secrets. */
  detail?: string;
}

/**
 * Counters for rate limits and lockouts. The memory store serves one process; `@vellum/redis`'s
 * store serves every process of a deployment. Keys are namespaced: the text up to and
 * including the first `:` (`rl:`, `authfail:`, `lock:`) is the key's namespace.
 */
export interface RateLimitStore {
  /** Adds one to the fixed-window counter `key`; the window starts at the first hit. */
  increment(key: string, windowMs: number): Promise<{ count: number; resetAt: number }>;
  /** Sets a flag that expires after `ttlMs`. */
  setFlag(key: string, ttlMs: number): Promise<void>;
  /** Expiry time (epoch ms) of a live flag, or undefined. */
  getFlag(key: string): Promise<number | undefined>;
  /** Removes a counter or flag. */
  delete(key: string): Promise<void>;
  /**
   * Number of live flags in the namespace `prefix` (`"lock:"`). Called on every
   * `/health/security`, so it must not walk the store: keep a count per namespace (the memory
   * store does; a Redis store can keep a sorted set per namespace scored by expiry).
   */
  countFlags(prefix: string): Promise<number>;
  /** How the store is doing; a store without it is reported as `custom`. */
  status?(): RateLimitStoreStatus;
  close?(): Promise<void>;
}

export interface MemoryRateLimitStoreOptions {
  /**
   * Most counters held at once (default 100,000: about 30 MB). Past it the least recently used
   * counter is dropped; it restarts at zero if its client comes back.
   */
  maxEntries?: number;
  /** Most flags (lockouts) held at once (default 10,000); kept apart so counters cannot evict them. */
  maxFlags?: number;
  /** How often expired counters are dropped (default every 60 s); the bound holds regardless. */
  sweepEveryMs?: number;
}

export const DEFAULT_MAX_ENTRIES = 100_000;
export const DEFAULT_MAX_FLAGS = 10_000;

interface Entry {
  count: number;
  expiresAt: number;
}

/** The cache's clock is `Date.now()`, like the `resetAt` and flag expiry times the store reports. */
const wallClock = { now: () => Date.now() };

const namespaceOf = (key: string) => key.slice(0, key.indexOf(":") + 1);

/**
 * In-process store, bounded: counters and flags live in two LRU caches (`lru-cache`), each with
 * its own entry limit and per-entry TTL. Live flags are counted per namespace as they are set,
 * expire, get deleted or evicted, so `countFlags` is O(1).
 */
export class MemoryRateLimitStore implements RateLimitStore {
  readonly maxEntries: number;
  readonly maxFlags: number;
  readonly #counters: LRUCache<string, Entry>;
  readonly #flags: LRUCache<string, Entry>;
  readonly #flagCounts = new Map<string, number>();
  readonly #sweep: NodeJS.Timeout;

  constructor(options: MemoryRateLimitStoreOptions = {}) {
    this.maxEntries = positive(options.maxEntries, DEFAULT_MAX_ENTRIES, "maxEntries");
    this.maxFlags = positive(options.maxFlags, DEFAULT_MAX_FLAGS, "maxFlags");
    this.#counters = new LRUCache<string, Entry>({ max: this.maxEntries, perf: wallClock, ttlResolution: 0 });
    this.#flags = new LRUCache<string, Entry>({
      max: this.maxFlags,
      perf: wallClock,
      ttlResolution: 0,
      // Every way a flag leaves (expiry, eviction, delete, overwrite, clear) passes here once.
      dispose: (_value, key) => this.#addFlag(namespaceOf(key), -1),
    });
    this.#sweep = setInterval(() => this.#counters.purgeStale(), options.sweepEveryMs ?? 60_000);
    this.#sweep.unref();
  }

  /** Counters and flags held right now, expired ones not yet dropped included (never above the bounds). */
  get size(): number {
    return this.#counters.size + this.#flags.size;
  }

  #addFlag(namespace: string, delta: number): void {
    const n = (this.#flagCounts.get(namespace) ?? 0) + delta;
    if (n > 0) this.#flagCounts.set(namespace, n);
    else this.#flagCounts.delete(namespace);
  }

  async increment(key: string, windowMs: number) {
    const now = Date.now();
    // `get` marks the counter recently used; a counter keeps the expiry of its first hit.
    let entry = this.#counters.get(key);
    if (!entry || entry.expiresAt <= now) {
      entry = { count: 0, expiresAt: now + windowMs };
      this.#counters.set(key, entry, { ttl: windowMs });
    }
    entry.count += 1;
    return { count: entry.count, resetAt: entry.expiresAt };
  }

  async setFlag(key: string, ttlMs: number) {
    if (!(ttlMs > 0)) {
      // Already expired (and a TTL of 0 would mean "forever" to the cache).
      this.#flags.delete(key);
      return;
    }
    // A new object each time: overwriting a flag disposes the old one (-1) before this one counts (+1).
    const entry: Entry = { count: 1, expiresAt: Date.now() + ttlMs };
    this.#flags.set(key, entry, { ttl: ttlMs });
    this.#addFlag(namespaceOf(key), 1);
    this.#expireLater(key, entry, ttlMs);
  }

  /**
   * One unref'd timer per flag drops it once it has expired, so the count goes down on time. A
   * timer can fire a little before the wall clock says the flag expired: it then waits again.
   */
  #expireLater(key: string, entry: Entry, delayMs: number): void {
    setTimeout(() => {
      if (this.#flags.peek(key, { allowStale: true }) !== entry) return;
      const left = entry.expiresAt - Date.now();
      if (left > 0) this.#expireLater(key, entry, left);
      else this.#flags.delete(key);
    }, delayMs).unref();
  }

  async getFlag(key: string) {
    const entry = this.#flags.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt > Date.now()) return entry.expiresAt;
    this.#flags.delete(key); // expired, its purge timer not run yet
    return undefined;
  }

  async delete(key: string) {
    this.#counters.delete(key);
    this.#flags.delete(key);
  }

  async countFlags(prefix: string) {
    if (prefix === namespaceOf(prefix) && prefix.length > 0) return this.#flagCounts.get(prefix) ?? 0;
    // Not a namespace: walk the flags (at most `maxFlags`).
    const now = Date.now();
    let n = 0;
    for (const [key, entry] of this.#flags.entries()) if (key.startsWith(prefix) && entry.expiresAt > now) n++;
    return n;
  }

  status(): RateLimitStoreStatus {
    return { kind: "memory", shared: false, state: "ok" };
  }

  async close() {
    clearInterval(this.#sweep);
    this.#counters.clear();
    this.#flags.clear();
  }
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1)
    throw new TypeError(`MemoryRateLimitStore: ${name} must be a positive integer`);
  return value;
}

export interface RateLimitRule {
  /** Bucket name (a route family); counters are per bucket and client (see `rateKey`). */
  name: string;
  limit: number;
  windowMs: number;
}

/**
 * Counts one request of `client` against `rule`: whether it is allowed, and the counters to send.
 * The counter is per `rateKey(client)`: per IPv4 address, per IPv6 /64.
 */
export async function takeToken(store: RateLimitStore, rule: RateLimitRule, client: string) {
  const { count, resetAt } = await store.increment(`rl:${rule.name}:${rateKey(client)}`, rule.windowMs);
  const resetSeconds = Math.max(1, Math.ceil((resetAt - Date.now()) / 1000));
  return { allowed: count <= rule.limit, limit: rule.limit, remaining: Math.max(0, rule.limit - count), resetSeconds };
}
