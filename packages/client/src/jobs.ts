import { sleep } from "./abort.js";
import { VellumJobFailedError, VellumTimeoutError } from "./errors.js";
import type { RequestOptions } from "./options.js";
import type { Transport } from "./transport.js";
import type { Job } from "./types.js";
import { segment } from "./url.js";

export interface WaitOptions extends RequestOptions {
  /** Give up after this many ms (finite) with a `VellumTimeoutError`; the write may still be applied later. Default 60 000. */
  timeoutMs?: number;
  /** Delay before the second poll; each next delay doubles. Default 25. */
  intervalMs?: number;
  /** The longest delay between two polls. Default 1 000. */
  maxIntervalMs?: number;
}

/** `GET /api/v1/jobs/:id`: how a queued write turned out. */
export class JobsApi {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  async get(id: string, options: RequestOptions = {}): Promise<Job> {
    return this.#transport.json<Job>({ method: "GET", path: `/api/v1/jobs/${segment(id)}`, signal: options.signal });
  }

  /**
   * Polls the job with exponential backoff until it is `applied` (resolves with it) or `failed` (throws a
   * `VellumJobFailedError`). Rejects with a `VellumTimeoutError` after `timeoutMs`, with the signal's reason when
   * `signal` aborts, and with the `VellumApiError` of a poll that fails (an unknown id is `not_found`).
   */
  async wait(id: string, options: WaitOptions = {}): Promise<Job> {
    const { timeoutMs = 60_000, intervalMs = 25, maxIntervalMs = 1_000 } = options;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    try {
      for (let delay = intervalMs; ; delay = Math.min(delay * 2, maxIntervalMs)) {
        const job = await this.get(id, { signal });
        if (job.status === "applied") return job;
        if (job.status === "failed") {
          throw new VellumJobFailedError(
            id,
            job.error?.code ?? "internal_error",
            job.error?.message ?? "The write failed.",
          );
        }
        await sleep(delay, signal);
      }
    } catch (error) {
      if (timeout.aborted && error === timeout.reason) throw new VellumTimeoutError(id, timeoutMs);
      throw error;
    }
  }
}
