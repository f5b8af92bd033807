import type { PurgeReason } from "./metrics.js";

/** Announced by the cache plugin after a purge (an article change, or `POST /api/v1/cache/purge`). */
export interface CachePurgedEvent {
  tags: readonly string[];
  reason: PurgeReason;
  /** Responses removed from this process's local cache. */
  entries: number;
}

declare module "@vellum/core" {
  interface VellumHooks {
    "cache:purged": (payload: CachePurgedEvent) => void | Promise<void>;
  }
}
