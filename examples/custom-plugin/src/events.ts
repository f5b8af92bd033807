/** What `reading_time:changed` carries: an article's reading time after a committed change. */
export interface ReadingTimeChanged {
  slug: string;
  minutes: number;
  /** `estimate`: computed from an article write; `override`: set by hand through the API. */
  source: "estimate" | "override";
}

// The hook's type, shared by the plugin that emits it and every plugin that subscribes to it. The
// type lives here, by augmentation; the hook itself (its name and kind) is declared by the
// reading-time plugin's definition (`hooks`). A subscriber imports this file, never the emitter.
declare module "@vellum/core" {
  interface VellumHooks {
    /** An article's reading time changed (after the transaction that changed it committed). */
    "reading_time:changed": (payload: ReadingTimeChanged) => void | Promise<void>;
  }
}
