import type { EngineStats, SearchEngine } from "./engine/types.js";
import type { ReindexOptions, ReindexStatus, ReindexSummary } from "./reindex.js";

/** What the search plugin provides to the host and other plugins as service `search`. */
export interface SearchService {
  readonly engine: SearchEngine;
  /** Rebuilds the index without interrupting search or writes; one at a time per process. */
  reindex(options?: ReindexOptions): Promise<ReindexSummary>;
  reindexStatus(): ReindexStatus;
  stats(): Promise<EngineStats>;
}

declare module "@vellum/core" {
  interface VellumServices {
    search: SearchService;
  }
}
