import { ApiError } from "@vellum/core";

/** How long a measured queue depth is trusted; creates accepted meanwhile are added to it. */
const DEPTH_MAX_AGE_MS = 100;

/**
 * Refuses creates while the articles queue holds `limit` or more waiting jobs: `503
 * service_unavailable` with `Retry-After`, counted by `onRefused`. The depth is counted in the
 * database at most every 100 ms, and every create accepted since is added to it, so a burst is
 * stopped at the bound without a count per request.
 */
export class Backpressure {
  readonly #queue: { depth(): Promise<number> };
  readonly #limit: number;
  readonly #onRefused: () => void;
  #depth = 0;
  #measuredAt = Number.NEGATIVE_INFINITY;

  constructor(queue: { depth(): Promise<number> }, limit: number, onRefused: () => void) {
    this.#queue = queue;
    this.#limit = limit;
    this.#onRefused = onRefused;
  }

  /** Throws `service_unavailable` while the queue is full; otherwise counts one more waiting job. */
  async admit(): Promise<void> {
    if (Date.now() - this.#measuredAt > DEPTH_MAX_AGE_MS) {
      this.#measuredAt = Date.now();
      this.#depth = await this.#queue.depth();
    }
    if (this.#depth >= this.#limit) {
      this.#onRefused();
      throw new ApiError("service_unavailable", "Too many writes are waiting to be applied; retry shortly.", {
        headers: { "retry-after": "1" },
      });
    }
    this.#depth++;
  }
}
