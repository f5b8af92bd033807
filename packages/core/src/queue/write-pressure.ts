/** How long after a transactional queue applied a batch the writes still count as busy. */
const BUSY_WINDOW_MS = 20;

/** While writes are busy, an at-least-once queue still starts deliveries at least this often. */
export const MAX_YIELD_MS = 250;

/**
 * The fewest jobs in a batch that make the writes busy. Group commit takes what piled up since the
 * last commit, so batches grow only when writes come faster than they are applied (measured in
 * docs/benchmarks.md, "Webhooks (issue 13)").
 */
export const BUSY_BATCH = 8;

/**
 * Queued writes come first. While a transactional queue applies a batch of {@link BUSY_BATCH} jobs
 * or more (a burst of creates), and for {@link BUSY_WINDOW_MS} after it, at-least-once queues
 * (deliveries: network I/O on the same event loop) and background transactional queues (a fan-out)
 * start new work at most every {@link MAX_YIELD_MS}, so they take little of the loop and of the one
 * writer from the writes and the API, and they catch up once the burst is over. Between bursts, and
 * under a load the writes keep up with (small batches), nothing waits.
 */
export class WritePressure {
  /** Batches of {@link BUSY_BATCH} or more being applied now. */
  #applying = 0;
  #busyUntil = 0;

  /**
   * A transactional queue (not a background one) starts applying a batch of `jobs`; it calls what
   * this returns once the batch is done, whether it committed or not. However long the batch takes,
   * the writes are busy until then.
   */
  applying(jobs: number): (end?: number) => void {
    if (jobs < BUSY_BATCH) return () => undefined;
    this.#applying++;
    return (end = Date.now()) => {
      this.#applying--;
      this.#busyUntil = Math.max(this.#busyUntil, end + BUSY_WINDOW_MS);
    };
  }

  /**
   * How long a delivery queue that last started work at `lastStartAt` waits before starting more:
   * 0 when the writes are not busy or it has waited {@link MAX_YIELD_MS} already.
   */
  wait(lastStartAt: number, now = Date.now()): number {
    const applying = this.#applying > 0;
    if (!applying && now >= this.#busyUntil) return 0;
    const waitedEnough = lastStartAt + MAX_YIELD_MS;
    if (waitedEnough <= now) return 0;
    return applying ? waitedEnough - now : Math.min(waitedEnough, this.#busyUntil) - now;
  }
}
