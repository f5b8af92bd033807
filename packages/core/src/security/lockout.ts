import type { RateLimitStore } from "./rate-limit.js";
import { rateKey } from "./rate-key.js";

export interface LockoutOptions {
  /** Failed authentications from one client IP within `windowMs` that trigger a lockout. */
  maxFailures: number;
  windowMs: number;
  /** How long the client stays locked out of writes. */
  durationMs: number;
}

export const DEFAULT_LOCKOUT: LockoutOptions = { maxFailures: 10, windowMs: 10 * 60_000, durationMs: 15 * 60_000 };

/**
 * Counts failed authentications per client and locks the client out of writes (contract §4). A
 * client is `rateKey(ip)`: an IPv4 address, or an IPv6 /64 (rotating addresses inside one /64
 * shares one failure budget and one lockout).
 */
export class LockoutTracker {
  readonly options: LockoutOptions;
  readonly #store: RateLimitStore;
  readonly #onLockout: () => void;

  constructor(store: RateLimitStore, options: Partial<LockoutOptions>, onLockout: () => void) {
    this.options = { ...DEFAULT_LOCKOUT, ...options };
    this.#store = store;
    this.#onLockout = onLockout;
  }

  /** Seconds until the lockout of `client` ends, or 0 when it is not locked out. */
  async retryAfterSeconds(client: string): Promise<number> {
    const until = await this.#store.getFlag(`lock:${rateKey(client)}`);
    return until === undefined ? 0 : Math.max(1, Math.ceil((until - Date.now()) / 1000));
  }

  /** Records one failure; returns true when it started a lockout. */
  async recordFailure(client: string): Promise<boolean> {
    const key = rateKey(client);
    const { count } = await this.#store.increment(`authfail:${key}`, this.options.windowMs);
    if (count < this.options.maxFailures) return false;
    await this.#store.setFlag(`lock:${key}`, this.options.durationMs);
    await this.#store.delete(`authfail:${key}`);
    this.#onLockout();
    return true;
  }

  /** Lockouts in force right now (for `/health/security`); the store keeps the count, no walk. */
  active(): Promise<number> {
    return this.#store.countFlags("lock:");
  }
}
