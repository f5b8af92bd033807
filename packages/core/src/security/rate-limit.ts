/**
 * Counters for rate limits and lockouts. The memory store serves one process; a Redis store with
 * the same interface will serve several (scale-out).
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
  /** Number of live flags whose key starts with `prefix`. */
  countFlags(prefix: string): Promise<number>;
  close?(): Promise<void>;
}

interface Entry {
  count: number;
  expiresAt: number;
}

/** In-process store; expired entries are dropped lazily and by a periodic sweep. */
export class MemoryRateLimitStore implements RateLimitStore {
  readonly #entries = new Map<string, Entry>();
  readonly #sweep: NodeJS.Timeout;

  constructor(sweepEveryMs = 60_000) {
    this.#sweep = setInterval(() => this.#dropExpired(Date.now()), sweepEveryMs);
    this.#sweep.unref();
  }

  #live(key: string, now: number): Entry | undefined {
    const entry = this.#entries.get(key);
    if (entry && entry.expiresAt <= now) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  #dropExpired(now: number): void {
    for (const [key, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(key);
  }

  async increment(key: string, windowMs: number) {
    const now = Date.now();
    const entry = this.#live(key, now) ?? { count: 0, expiresAt: now + windowMs };
    entry.count += 1;
    this.#entries.set(key, entry);
    return { count: entry.count, resetAt: entry.expiresAt };
  }

  async setFlag(key: string, ttlMs: number) {
    this.#entries.set(key, { count: 1, expiresAt: Date.now() + ttlMs });
  }

  async getFlag(key: string) {
    return this.#live(key, Date.now())?.expiresAt;
  }

  async delete(key: string) {
    this.#entries.delete(key);
  }

  async countFlags(prefix: string) {
    const now = Date.now();
    let n = 0;
    for (const [key, entry] of this.#entries) if (key.startsWith(prefix) && entry.expiresAt > now) n++;
    return n;
  }

  async close() {
    clearInterval(this.#sweep);
    this.#entries.clear();
  }
}

export interface RateLimitRule {
  /** Bucket name (a route family); counters are per bucket and client IP. */
  name: string;
  limit: number;
  windowMs: number;
}

/** Counts one request of `client` against `rule`: whether it is allowed, and the counters to send. */
export async function takeToken(store: RateLimitStore, rule: RateLimitRule, client: string) {
  const { count, resetAt } = await store.increment(`rl:${rule.name}:${client}`, rule.windowMs);
  const resetSeconds = Math.max(1, Math.ceil((resetAt - Date.now()) / 1000));
  return { allowed: count <= rule.limit, limit: rule.limit, remaining: Math.max(0, rule.limit - count), resetSeconds };
}
