import { type ConsolaInstance, LogLevels } from "consola";
import type { H3Event } from "h3";
import type { Counter, Histogram } from "prom-client";
import type { CoreMetrics } from "../metrics/core-metrics.js";
import { requestId } from "./request-id.js";

type Labels = "method" | "route" | "status";

/**
 * Records one request: `service_requests_total` and `service_request_duration_seconds` by
 * method, route pattern and status class (labelled children cached per combination), plus one
 * access-log line with the path only — never the query string, where search terms live.
 */
export function createRequestObserver(metrics: CoreMetrics, logger: ConsolaInstance, accessLog: boolean) {
  const children = new Map<string, { count: Counter.Internal; time: Histogram.Internal<Labels> }>();
  return (event: H3Event, route: string, status: number): void => {
    try {
      record(event, route, status);
    } catch {
      // Metrics and the access log never turn an answer into a failure.
    }
  };

  function record(event: H3Event, route: string, status: number): void {
    const labels = { method: event.req.method, route, status: `${Math.floor(status / 100)}xx` };
    const key = `${labels.method} ${route} ${labels.status}`;
    let child = children.get(key);
    if (!child) {
      child = { count: metrics.requests.labels(labels), time: metrics.duration.labels(labels) };
      children.set(key, child);
    }
    const started = event.context.startedAt;
    const seconds = typeof started === "number" ? (performance.now() - started) / 1000 : 0;
    child.count.inc();
    child.time.observe(seconds);
    if (accessLog && logger.level >= LogLevels.info) {
      logger.info(
        `${labels.method} ${event.url.pathname} ${status} ${(seconds * 1000).toFixed(1)}ms ${requestId(event)}`,
      );
    }
  }
}
