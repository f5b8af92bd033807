import type { VellumMetrics } from "./metrics.js";

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
    requests: metrics.counter({
      name: "service_requests_total",
      help: "HTTP requests by method, route pattern and status class",
      labelNames: ["method", "route", "status"],
    }),
    duration: metrics.histogram({
      name: "service_request_duration_seconds",
      help: "HTTP request duration in seconds by method, route pattern and status class",
      labelNames: ["method", "route", "status"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    }),
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
