import type { RateLimitStore } from "./rate-limit.js";

export interface LockoutOptions {
  /** Failed authentications from one client IP within `windowMs` that trigger a lockout. */
  maxFailures: number;
  windowMs: number;
  /** How long the client stays locked out of writes. */
  durationMs: number;
}

export const DEFAULT_LOCKOUT: LockoutOptions = { maxFailures: 10, windowMs: 10 * 60_000, durationMs: 15 * 60_000 };

/** Counts failed authentications per client IP and locks the IP out of writes (contract §4). */
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
    const until = await this.#store.getFlag(`lock:${client}`);
    return until === undefined ? 0 : Math.max(1, Math.ceil((until - Date.now()) / 1000));
  }

  /** Records one failure; returns true when it started a lockout. */
  async recordFailure(client: string): Promise<boolean> {
    const { count } = await this.#store.increment(`authfail:${client}`, this.options.windowMs);
    if (count < this.options.maxFailures) return false;
    await this.#store.setFlag(`lock:${client}`, this.options.durationMs);
    await this.#store.delete(`authfail:${client}`);
    this.#onLockout();
    return true;
  }

  /** Lockouts in force right now (for `/health/security`). */
  active(): Promise<number> {
    return this.#store.countFlags("lock:");
  }
}
