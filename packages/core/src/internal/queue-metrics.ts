import type { VellumMetrics } from "../metrics/metrics.js";
import type { JobQueue } from "../queue/job-queue.js";

/**
 * `service_write_queue_depth` and `service_dead_letter_queue_size`, read from the queue table at
 * scrape time: one sample per queue, `0` for an empty one.
 */
export function registerQueueMetrics(metrics: VellumMetrics, queue: JobQueue): void {
  const depth = metrics.gauge({
    name: "service_write_queue_depth",
    help: "Jobs waiting to be applied, per queue",
    labelNames: ["queue"],
    collect: () => refresh(),
  });
  const dead = metrics.gauge({
    name: "service_dead_letter_queue_size",
    help: "Jobs that used up their retries and wait in the dead-letter queue, per queue",
    labelNames: ["queue"],
    collect: () => refresh(),
  });
  let pending: Promise<void> | undefined;
  function refresh(): Promise<void> {
    pending ??= queue
      .stats()
      .then((rows) => {
        depth.reset();
        dead.reset();
        // Every queue with a worker has a sample, 0 when empty: an alert needs a value to compare.
        for (const name of queue.queues()) {
          depth.set({ queue: name }, 0);
          dead.set({ queue: name }, 0);
        }
        for (const row of rows) {
          depth.set({ queue: row.queue }, row.queued);
          dead.set({ queue: row.queue }, row.failed);
        }
      })
      .catch(() => undefined)
      .finally(() => {
        pending = undefined;
      });
    return pending;
  }
}
