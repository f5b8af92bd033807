import { type ConsolaInstance, LogLevels } from "consola";
import type { CoreMetrics } from "../metrics/core-metrics.js";

/** What the observer records of one answered request. */
export interface ObservedRequest {
  method: string;
  /** The route pattern (`GET /api/v1/articles/:slug` is recorded as `/api/v1/articles/:slug`), or `unmatched`. */
  route: string;
  pathname: string;
  status: number;
  /** `performance.now()` when the request arrived. */
  startedAt: number | undefined;
  requestId: string;
}

export type RequestObserver = (request: ObservedRequest) => void;

/**
 * Records one request: `service_requests_total` and `service_request_duration_seconds` by
 * method, route pattern and status class, plus one access-log line with the path only — never
 * the query string, where search terms live.
 */
export function createRequestObserver(metrics: CoreMetrics, logger: ConsolaInstance, accessLog: boolean) {
  const observe: RequestObserver = (request) => {
    try {
      record(request);
    } catch {
      // Metrics and the access log never turn an answer into a failure.
    }
  };
  return observe;

  function record({ method, route, pathname, status, startedAt, requestId }: ObservedRequest): void {
    const seconds = typeof startedAt === "number" ? (performance.now() - startedAt) / 1000 : 0;
    metrics.requests.record(method, route, status, seconds);
    if (accessLog && logger.level >= LogLevels.info) {
      const ms = Math.round(seconds * 10_000) / 10;
      // Structured fields for a JSON reporter (`SERVICE_LOG_FORMAT=json`); text logs print the message.
      logger.info({
        message: `${method} ${pathname} ${status} ${ms.toFixed(1)}ms ${requestId}`,
        request_id: requestId,
        method,
        route,
        status,
        duration_ms: ms,
      });
    }
  }
}
