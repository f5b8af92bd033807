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

export interface SearchIndexedEvent {
  kind: "article";
  id: string;
  durationMs: number;
}

declare module "@vellum/core" {
  interface VellumServices {
    search: SearchService;
  }
  interface VellumHooks {
    /** After an article write that changed the index has committed. */
    "search:indexed": (payload: SearchIndexedEvent) => void | Promise<void>;
    "search:removed": (payload: SearchIndexedEvent) => void | Promise<void>;
  }
}
