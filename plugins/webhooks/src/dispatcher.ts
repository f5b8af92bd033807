import { type JobRecord, ulidTime } from "@vellum/core";
import type { WebhookMetrics } from "./metrics.js";
import type { DeliveryPayload } from "./outbox.js";
import type { Receiver } from "./receivers.js";
import { DeliveryFailure, sendDelivery } from "./send.js";
import { signWebhook } from "./verify.js";

/** What a delivered job keeps once its body is dropped: the event and the receiver's answer. */
export interface DeliveryResult {
  event: string;
  status?: number;
  duration_ms?: number;
  /** Why nothing was sent: the receiver was removed from the configuration since. */
  skipped?: string;
}

export interface DispatcherOptions {
  receivers: readonly Receiver[];
  secret: string;
  timeoutMs: number;
  /** Attempts before the queue dead-letters a delivery (retries + 1). */
  maxAttempts: number;
  metrics: WebhookMetrics;
  /** The body of an event, from the outbox. */
  body(event: string): Promise<string | undefined>;
  /** A receiver answered 2xx (for `/health/dependencies`' last success). */
  onDelivered(receiver: Receiver, at: Date): void;
}

/**
 * The delivery queue's handler: one signed POST of the event's body to the job's receiver (its
 * key), with contract §7's headers. The timestamp is the attempt's, so a retry hours later is not
 * refused as stale by the receiver; the event id stays the same across attempts.
 */
export function createDispatcher(
  options: DispatcherOptions,
): (job: JobRecord, signal: AbortSignal) => Promise<DeliveryResult> {
  const byUrl = new Map(options.receivers.map((receiver) => [receiver.url, receiver]));
  // `signal` aborts at shutdown: the attempt in flight ends at once and goes out again after a restart.
  return async (job, signal) => {
    const payload = job.payload as DeliveryPayload;
    const receiver = job.key === null ? undefined : byUrl.get(job.key);
    if (!receiver) return { event: payload.event, skipped: "receiver is no longer in SERVICE_WEBHOOK_URLS" };
    const body = await options.body(payload.event);
    if (body === undefined) throw new DeliveryFailure(`the body of event ${payload.event} is gone from the outbox`);
    const timestamp = Math.floor(Date.now() / 1000);
    const started = performance.now();
    try {
      const status = await sendDelivery({
        receiver,
        body,
        timeoutMs: options.timeoutMs,
        signal,
        headers: {
          "content-type": "application/json",
          "user-agent": "Vellum-Webhooks",
          "x-service-event": job.type,
          "x-service-delivery": payload.event,
          "x-service-timestamp": String(timestamp),
          "x-service-signature": signWebhook(options.secret, timestamp, body),
        },
      });
      const seconds = (performance.now() - started) / 1000;
      options.metrics.attempt(receiver.name, "delivered", seconds);
      // From the commit, which made the event's id, not from the delivery's row (the fan-out's time).
      options.metrics.delivered(receiver.name, (Date.now() - ulidTime(payload.event)) / 1000);
      options.onDelivered(receiver, new Date());
      return { event: payload.event, status, duration_ms: Math.round(seconds * 1000) };
    } catch (error) {
      // An attempt cut by shutdown is neither a failure of the receiver nor one of its attempts.
      if (!signal.aborted) {
        const last = job.attempts + 1 >= options.maxAttempts;
        options.metrics.attempt(receiver.name, last ? "dead" : "failed", (performance.now() - started) / 1000);
      }
      throw error instanceof DeliveryFailure ? error : new DeliveryFailure(`${String(error)} at ${receiver.name}`);
    }
  };
}
