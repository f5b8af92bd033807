/** Bytes a plugin added to (positive) or removed from (negative) the data dir. */
export interface StorageChange {
  bytes: number;
  /** Storage mount the change happened in (e.g. `media`), for logs only. */
  mount?: string;
}

declare module "@vellum/core" {
  interface VellumHooks {
    /**
     * Announced by plugins that write files under the data dir (media uploads and deletions), so
     * `/health/storage` stays current between full rescans. Call it after the file is written or
     * removed: `await ctx.hooks.callHook("storage:changed", { bytes: size, mount: "media" })`.
     */
    "storage:changed": (payload: StorageChange) => void | Promise<void>;
  }
}
