/** Announced by the search plugin after an index change committed. */
export interface SearchIndexedEvent {
  kind: "article";
  id: string;
  durationMs: number;
}

declare module "@vellum/core" {
  interface VellumHooks {
    /** An article's index entry was written (after commit). */
    "search:indexed": (payload: SearchIndexedEvent) => void | Promise<void>;
    /** An article's index entry was removed (after commit). */
    "search:removed": (payload: SearchIndexedEvent) => void | Promise<void>;
  }
}
