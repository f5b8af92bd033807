import { createHmac } from "node:crypto";
import type { JobRecord, KernelTables, Kysely, PluginQueue, Transaction } from "@vellum/core";

type Queue = PluginQueue<KernelTables>;

export const CDN_PURGE_JOB = "cdn-purge";
const TIMEOUT_MS = 10_000;

interface PurgePayload {
  tags: string[];
}

/**
 * Forwards purges to a CDN (or a small relay in front of its API): each purge is a job of the
 * plugin's `cdn` queue, enqueued with the change that caused it, and delivered at least once as
 * a POST of `{"tags":[…]}` signed like webhooks (`X-Service-Signature: sha256=<hex HMAC-SHA256 of
 * "<timestamp>.<body>">`). Non-2xx answers, timeouts and network errors are retried with backoff,
 * then dead-lettered; redirects are not followed.
 */
export class CdnForwarder {
  readonly #queue: Queue;
  readonly #url: string;
  readonly #secret: string;

  constructor(queue: Queue, url: string, secret: string) {
    this.#queue = queue;
    this.#url = url;
    this.#secret = secret;
  }

  get queue(): Queue {
    return this.#queue;
  }

  /** Queues the purge of `tags` through `executor`: inside a write's transaction it exists only if that commits. */
  async enqueue(executor: Kysely<KernelTables> | Transaction<KernelTables>, tags: readonly string[]): Promise<void> {
    const payload: PurgePayload = { tags: [...tags] };
    await this.#queue.enqueue(executor, CDN_PURGE_JOB, payload);
  }

  /** The queue's handler: one signed POST; throws (so the queue retries) unless the CDN answers 2xx. */
  readonly deliver = async (job: JobRecord, signal: AbortSignal): Promise<void> => {
    const { tags } = job.payload as PurgePayload;
    const body = JSON.stringify({ tags });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = createHmac("sha256", this.#secret).update(`${timestamp}.${body}`).digest("hex");
    const response = await fetch(this.#url, {
      method: "POST",
      body,
      redirect: "manual",
      // Cut at the timeout, or at once when the instance shuts down (the purge is sent again after it).
      signal: AbortSignal.any([signal, AbortSignal.timeout(TIMEOUT_MS)]),
      headers: {
        "content-type": "application/json",
        "x-service-event": "cache.purge",
        "x-service-delivery": job.id,
        "x-service-timestamp": timestamp,
        "x-service-signature": `sha256=${signature}`,
      },
    });
    await response.body?.cancel();
    if (response.status < 200 || response.status > 299) {
      throw new Error(`the CDN purge endpoint answered ${response.status}`);
    }
  };
}

/** Retry delays for forwarded purges: 5 s doubling per attempt, at most 10 minutes, ±25 % jitter. */
export function cdnBackoff(attempt: number): number {
  const delay = Math.min(5000 * 2 ** Math.max(0, attempt - 1), 600_000);
  return Math.round(delay * (0.75 + Math.random() * 0.5));
}
