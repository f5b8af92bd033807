/** How long after a transactional queue applied a batch the writes still count as busy. */
const BUSY_WINDOW_MS = 20;

/** While writes are busy, an at-least-once queue still starts deliveries at least this often. */
export const MAX_YIELD_MS = 250;

/**
 * Queued writes come first. While a transactional queue keeps applying batches (a burst of
 * creates), at-least-once queues (deliveries: network I/O on the same event loop) and background
 * transactional queues (a fan-out) start new work at most every {@link MAX_YIELD_MS}, so they take
 * little of the loop and of the one writer from the writes and the API, and they catch up once the
 * burst is over. Between bursts nothing waits.
 */
export class WritePressure {
  #busyUntil = 0;

  /** A transactional queue (not a background one) is applying a batch, or has just applied one. */
  busy(now = Date.now()): void {
    this.#busyUntil = now + BUSY_WINDOW_MS;
  }

  /**
   * How long a delivery queue that last started work at `lastStartAt` waits before starting more:
   * 0 when the writes are not busy or it has waited {@link MAX_YIELD_MS} already.
   */
  wait(lastStartAt: number, now = Date.now()): number {
    if (now >= this.#busyUntil) return 0;
    const waitedEnough = lastStartAt + MAX_YIELD_MS;
    return waitedEnough <= now ? 0 : Math.min(waitedEnough, this.#busyUntil) - now;
  }
}
