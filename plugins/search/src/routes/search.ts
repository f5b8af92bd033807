import { intQuery, type RouteHandler } from "@vellum/core";
import { IndexUnavailableError } from "../engine/fts5/engine.js";
import type { PlanKind, SearchEngine, SearchHit } from "../engine/types.js";
import { failureReason, SearchErrors } from "../errors.js";
import { MAX_LIMIT, MAX_OFFSET } from "../schemas.js";

export { MAX_OFFSET, MAX_QUERY_LENGTH } from "../schemas.js";

/** The body of `GET /api/v1/search`, as `searchSchema` declares it. */
export interface SearchResponseBody {
  results: SearchHit[];
  total: number;
  limit: number;
  offset: number;
  degraded?: true;
}

export interface SearchRouteDeps {
  engine: SearchEngine;
  /** Records how a query was answered (plan kind or `degraded`) and how long it took. */
  observe(outcome: PlanKind | "degraded", seconds: number): void;
  /** Reports an unexpected failure; receives a sanitized error that never carries the query. */
  report(error: Error): void;
}

/**
 * `GET /api/v1/search?q=&limit=&offset=` (contract §6). The query is used for this response only:
 * it is not logged, counted by value, cached or written anywhere, and errors never quote it.
 * When the index is missing or unusable the answer is `200` with no results and `degraded: true`.
 * The kernel has checked `q` against `searchSchema` (1 to 256 code points) before this runs.
 */
export function searchHandler(deps: SearchRouteDeps): RouteHandler {
  return async (event) => {
    const q = event.url.searchParams.get("q") ?? "";
    const limit = intQuery(event, "limit", { min: 1, max: MAX_LIMIT, fallback: 20 });
    const offset = intQuery(event, "offset", { min: 0, max: MAX_OFFSET, fallback: 0 });
    event.res.headers.set("cache-control", "no-store");
    const started = performance.now();
    try {
      const result = await deps.engine.query({ q, limit, offset });
      deps.observe(result.plan, (performance.now() - started) / 1000);
      const body: SearchResponseBody = { results: result.hits, total: result.total, limit, offset };
      return body;
    } catch (error) {
      deps.observe("degraded", (performance.now() - started) / 1000);
      if (!(error instanceof IndexUnavailableError)) deps.report(SearchErrors.queryFailed([failureReason(error)]));
      const body: SearchResponseBody = { results: [], total: 0, limit, offset, degraded: true };
      return body;
    }
  };
}
