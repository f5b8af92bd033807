import type { VellumMetrics } from "./metrics.js";
import { RequestMetrics } from "./request-metrics.js";

export type CoreMetrics = ReturnType<typeof registerCoreMetrics>;

/** Metrics the kernel owns; the queue gauges are registered by the queue wiring. */
export function registerCoreMetrics(metrics: VellumMetrics) {
  metrics.gauge({
    name: "service_memory_bytes",
    help: "Resident set size of the process in bytes",
    collect() {
      this.set(process.memoryUsage.rss());
    },
  });
  return {
    requests: new RequestMetrics(metrics.registry),
    lockouts: metrics.counter({
      name: "service_auth_lockouts_total",
      help: "Client IPs locked out after repeated failed authentications",
    }),
    jobFailures: metrics.counter({
      name: "service_job_failures_total",
      help: "Failed runs of scheduled jobs",
      labelNames: ["job"],
    }),
    hookFailures: metrics.counter({
      name: "service_hook_failures_total",
      help: "Failed hook subscribers that were isolated (reported, never failing the operation)",
      labelNames: ["plugin", "hook"],
    }),
  };
}
