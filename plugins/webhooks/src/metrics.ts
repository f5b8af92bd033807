import type { VellumMetrics } from "@vellum/core";

export type DeliveryOutcome = "delivered" | "failed" | "dead";

export interface WebhookMetrics {
  /** One attempt to `receiver` ended with `outcome` after `seconds`. */
  attempt(receiver: string, outcome: DeliveryOutcome, seconds: number): void;
  /** An event reached `receiver` `seconds` after its change committed. */
  delivered(receiver: string, seconds: number): void;
}

/**
 * Attempts by receiver and outcome (`failed`: retried later; `dead`: the last attempt failed and
 * the delivery is dead-lettered, as `service_dead_letter_queue_size` then counts), how long one
 * attempt takes and how long an event takes from commit to delivery.
 */
export function createWebhookMetrics(metrics: VellumMetrics): WebhookMetrics {
  const attempts = metrics.counter({
    name: "service_webhook_deliveries_total",
    help: "Webhook delivery attempts, by receiver host and outcome (delivered, failed and retried later, dead)",
    labelNames: ["receiver", "outcome"],
  });
  const duration = metrics.histogram({
    name: "service_webhook_delivery_duration_seconds",
    help: "Time of one webhook delivery attempt, request to the end of the answer",
    labelNames: ["receiver"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  });
  const lag = metrics.histogram({
    name: "service_webhook_delivery_lag_seconds",
    help: "Time from an article change's commit to its event's delivery, retries included",
    labelNames: ["receiver"],
    buckets: [0.01, 0.05, 0.25, 1, 5, 15, 60, 300, 1800, 7200, 21_600, 86_400],
  });
  return {
    attempt(receiver, outcome, seconds) {
      attempts.inc({ receiver, outcome });
      duration.observe({ receiver }, seconds);
    },
    delivered: (receiver, seconds) => lag.observe({ receiver }, seconds),
  };
}
