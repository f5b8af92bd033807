import type { JobRecord } from "@vellum/core";
import type { DeliveryResult } from "./dispatcher.js";
import type { DeliveryPayload } from "./outbox.js";
import type { Receiver } from "./receivers.js";
import { statusOfFailure } from "./send.js";

export type DeliveryStatus = "pending" | "retrying" | "delivered" | "skipped" | "dead";

/** A delivery as operators see it (`GET /admin/webhooks/deliveries`): never the body, never a secret. */
export interface DeliveryView {
  /** The delivery: one event to one receiver (what `replay --id` takes). */
  id: string;
  /** The event (`X-Service-Delivery`), shared by its deliveries to every receiver. */
  event_id: string;
  event: string;
  /** The receiver's host (see `Receiver.name`). */
  receiver: string;
  status: DeliveryStatus;
  /** Attempts made so far, the successful one included. */
  attempts: number;
  /** The receiver's answer to the last attempt, or null when it never answered. */
  response_code: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  /** When the next attempt is due, for a delivery not done yet. */
  next_attempt_at: string | null;
}

function hostOf(url: string | null): string {
  try {
    return url === null ? "unknown" : new URL(url).host;
  } catch {
    return "unknown";
  }
}

/** The operator's view of a delivery job. */
export function deliveryView(job: JobRecord, receivers: readonly Receiver[]): DeliveryView {
  const receiver = receivers.find((r) => r.url === job.key)?.name ?? hostOf(job.key);
  const common = {
    id: job.id,
    event: job.type,
    receiver,
    last_error: job.last_error,
    created_at: job.created_at,
    updated_at: job.updated_at,
  };
  if (job.status === "applied") {
    const result = (job.payload ?? {}) as Partial<DeliveryResult>;
    return {
      ...common,
      event_id: result.event ?? "",
      status: result.skipped === undefined ? "delivered" : "skipped",
      attempts: job.attempts + (result.skipped === undefined ? 1 : 0),
      response_code: result.status ?? null,
      next_attempt_at: null,
    };
  }
  const payload = job.payload as DeliveryPayload;
  const waiting = job.status === "queued";
  return {
    ...common,
    event_id: payload.event,
    status: waiting ? (job.attempts > 0 ? "retrying" : "pending") : "dead",
    attempts: job.attempts,
    response_code: statusOfFailure(job.last_error) ?? null,
    next_attempt_at: waiting ? new Date(job.run_at).toISOString() : null,
  };
}
