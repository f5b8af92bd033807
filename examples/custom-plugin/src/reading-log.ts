import { definePlugin } from "@vellum/core";
// Only the hook's type: this plugin never imports the reading-time plugin's code.
import type { ReadingTimeChanged } from "./events.js";

/** How many changes the log keeps (the oldest go first). */
const KEEP = 100;

/**
 * A second plugin that subscribes to a hook another plugin declares: it keeps the last changes
 * announced on `reading_time:changed` in memory and serves them at `GET /api/v1/reading-log`.
 * Subscribing to a hook no installed plugin declares fails the start, with the closest name.
 */
export const readingLog = definePlugin({
  name: "reading_log",
  setup(ctx) {
    const changes: ReadingTimeChanged[] = [];
    ctx.hooks.hook("reading_time:changed", (change) => {
      changes.push(change);
      if (changes.length > KEEP) changes.shift();
    });
    ctx.router.get("/api/v1/reading-log", () => ({ changes }));
  },
});
