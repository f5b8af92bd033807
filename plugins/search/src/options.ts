import { CoreErrors } from "@vellum/core";

export interface SearchOptions {
  /** Path of the search endpoint. */
  path: string;
  /** Path of the administrative reindex endpoint (`POST` starts, `GET` reports). */
  reindexPath: string;
  /** Prefix of the beta endpoints (`/related/:slug`, `/suggest-tags`), served with `SERVICE_FEATURES=ai`. */
  aiPrefix: string;
  /** Requests per window and client IP for search and the ai endpoints; `false` turns the limit off (benchmarks). */
  rateLimit: { limit: number; windowMs: number } | false;
  /** Articles per transaction while rebuilding. */
  reindexBatchSize: number;
  /** Rebuild by itself when the index is missing, broken, or stale on two checks in a row. */
  autoRepair: boolean;
  repairIntervalMs: number;
}

export const DEFAULT_OPTIONS: SearchOptions = {
  path: "/api/v1/search",
  reindexPath: "/admin/reindex",
  aiPrefix: "/api/v1/ai",
  rateLimit: { limit: 10, windowMs: 1000 },
  reindexBatchSize: 200,
  autoRepair: true,
  repairIntervalMs: 60_000,
};

const positiveInteger = (value: unknown, max = Number.MAX_SAFE_INTEGER) =>
  Number.isInteger(value) && (value as number) > 0 && (value as number) <= max;

/** Throws VELLUM_CONFIG_INVALID naming the first bad option. */
export function validateOptions(options: SearchOptions): void {
  const fail = (key: string, reason: string) => {
    throw CoreErrors.configInvalid([`plugins.search.${key}`, reason], { plugin: "search" });
  };
  for (const key of ["path", "reindexPath", "aiPrefix"] as const) {
    if (typeof options[key] !== "string" || !options[key].startsWith("/")) fail(key, "must be a path starting with /");
  }
  const { rateLimit } = options;
  if (rateLimit !== false && !(positiveInteger(rateLimit?.limit) && positiveInteger(rateLimit?.windowMs))) {
    fail("rateLimit", "must be false or { limit, windowMs } with positive integers");
  }
  if (!positiveInteger(options.reindexBatchSize, 10_000))
    fail("reindexBatchSize", "must be an integer from 1 to 10000");
  if (typeof options.autoRepair !== "boolean") fail("autoRepair", "must be true or false");
  if (!positiveInteger(options.repairIntervalMs))
    fail("repairIntervalMs", "must be a positive integer of milliseconds");
}
