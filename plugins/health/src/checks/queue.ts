import type { KernelInfo, QueueStats } from "@vellum/core";
import type { QueueOptions } from "../options.js";
import { type FailureLog, withDeadline } from "./state.js";

export interface QueueCheck {
  state: "ok" | "degraded" | "unavailable";
  /** Jobs waiting to be applied, all queues together; null when the queue table could not be read. */
  queue_depth: number | null;
  /** Jobs in the dead-letter queue, all queues together. */
  dead_letter: number | null;
  /** Whether the workers are running (between start and shutdown). */
  running: boolean;
  /** Every queue with a registered worker, plus any queue that still holds jobs without one. */
  workers: Array<{ queue: string; queued: number; dead_letter: number; worked_here: boolean }>;
}

function workerRows(kernel: KernelInfo, rows: QueueStats[]): QueueCheck["workers"] {
  const registered = kernel.jobs.queues();
  const byQueue = new Map(rows.map((r) => [r.queue, r]));
  const names = [...new Set([...registered, ...byQueue.keys()])].sort();
  return names.map((queue) => ({
    queue,
    queued: byQueue.get(queue)?.queued ?? 0,
    dead_letter: byQueue.get(queue)?.failed ?? 0,
    worked_here: kernel.jobs.workedHere(queue),
  }));
}

/**
 * Reads the backlog of every durable queue. Degraded above the seed's alert levels (depth above 1000,
 * dead letters above 10, both configurable); unavailable when the queue table cannot be read.
 */
export async function checkQueue(
  kernel: KernelInfo,
  options: QueueOptions,
  timeoutMs: number,
  log: FailureLog,
): Promise<QueueCheck> {
  const running = kernel.state() === "ready";
  try {
    const rows = await withDeadline(kernel.jobs.stats(), timeoutMs, "queue stats");
    const depth = rows.reduce((sum, r) => sum + r.queued, 0);
    const dead = rows.reduce((sum, r) => sum + r.failed, 0);
    log.passed("queue");
    const over = depth > options.depthLimit || dead > options.deadLetterLimit;
    return {
      state: over ? "degraded" : "ok",
      queue_depth: depth,
      dead_letter: dead,
      running,
      workers: workerRows(kernel, rows),
    };
  } catch (error) {
    log.failed("queue", error);
    return { state: "unavailable", queue_depth: null, dead_letter: null, running, workers: [] };
  }
}
