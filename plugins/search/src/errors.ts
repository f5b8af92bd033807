import { createErrorType } from "@vellum/core";

export const SearchErrors = {
  notInstalled: createErrorType(
    "VELLUM_SEARCH_NOT_INSTALLED",
    () => "the search plugin is not installed; add search() to the plugins of this instance",
  ),
  noSource: createErrorType(
    "VELLUM_SEARCH_NO_SOURCE",
    () => "reindexing reads the articles service, which no plugin provides; add the articles plugin",
  ),
  reindexRunning: createErrorType(
    "VELLUM_SEARCH_REINDEX_RUNNING",
    (generation: number) => `search index generation ${generation} is already being built; wait for it to finish`,
  ),
  queryFailed: createErrorType(
    "VELLUM_SEARCH_QUERY_FAILED",
    (reason: string) => `a search query failed (${reason}); the response was degraded`,
  ),
  indexWriteFailed: createErrorType(
    "VELLUM_SEARCH_INDEX_WRITE_FAILED",
    (generation: number, reason: string) =>
      `writing to search index generation ${generation} failed (${reason}); it is marked broken and will be rebuilt`,
  ),
};

/**
 * A safe one-word description of a failure: the SQLite error code or the error's name. Error
 * messages are never passed on, because a database message can quote the statement's input.
 */
export function failureReason(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && /^[A-Z0-9_]{1,64}$/.test(code)) return code;
  return error instanceof Error && /^[A-Za-z]{1,64}$/.test(error.name) ? error.name : "unknown";
}
