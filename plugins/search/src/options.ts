import { type SettingDeclarations, type SettingProblem, setting } from "@vellum/core";

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

const path = (description: string, value: string) =>
  setting.string({ description, default: value, pattern: /^\//, hint: "must be a path starting with /" });

/** The plugin's settings (none has an environment variable: set them in options or the config file). */
export const SEARCH_SETTINGS: SettingDeclarations<SearchOptions> = {
  path: path("path of the search endpoint", "/api/v1/search"),
  reindexPath: path("path of the administrative reindex endpoint (POST starts, GET reports)", "/admin/reindex"),
  aiPrefix: path("prefix of the beta endpoints, served with SERVICE_FEATURES=ai", "/api/v1/ai"),
  reindexBatchSize: setting.integer({
    description: "articles per transaction while rebuilding",
    default: 200,
    min: 1,
    max: 10_000,
  }),
  autoRepair: setting.boolean({
    description: "rebuild by itself when the index is missing, broken, or stale on two checks in a row",
    default: true,
  }),
  repairIntervalMs: setting.integer({
    description: "how often the repair job looks, in milliseconds",
    default: 60_000,
    min: 1,
  }),
};

/** Options that are not settings of their own: the rate limit is an object or `false`. */
export const SEARCH_DEFAULTS: Partial<SearchOptions> = { rateLimit: { limit: 10, windowMs: 1000 } };

const positiveInteger = (value: unknown) => Number.isInteger(value) && (value as number) > 0;

/** The rate limit: `false`, or `{ limit, windowMs }` with positive integers. */
export function checkRateLimit(options: Readonly<SearchOptions>): SettingProblem[] {
  const { rateLimit } = options;
  if (rateLimit === false || (positiveInteger(rateLimit?.limit) && positiveInteger(rateLimit?.windowMs))) return [];
  return [{ setting: "rateLimit", message: "must be false or { limit, windowMs } with positive integers" }];
}
