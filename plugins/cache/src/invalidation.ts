import { collectForCommit, type VellumPluginContext } from "@vellum/core";
import type { CdnForwarder } from "./cdn.js";
import type { CacheOptions } from "./options.js";
import type { ResponseCache } from "./response-cache.js";

/**
 * Purges what an article change shows on (the event's `cacheTags`: its page before and after, the
 * list, its tags' pages before and after), whether it comes from a synchronous PUT or DELETE or from
 * the queue applying a create, in two steps:
 *
 * - just before the write commits (collected from `article:commit`, once for a whole batch): the
 *   responses are removed and reads in flight will not be kept. With the synchronous SQLite driver
 *   nothing else runs between that step and the commit, so no read can keep the old state after it.
 *   The forwarded CDN purge is queued here too, in the write's transaction;
 * - once it committed (`article:after*`): the same tags again, which also covers a driver or a
 *   later flush that lets other requests run before the commit.
 *
 * Both run before a PUT or DELETE is answered and before a queued create counts as applied.
 */
export function subscribeInvalidation(
  ctx: VellumPluginContext<CacheOptions>,
  cache: ResponseCache,
  cdn?: CdnForwarder,
): void {
  const optional = { optional: true };
  ctx.hooks.hook(
    "article:commit",
    async ({ cacheTags, trx }) => {
      await collectForCommit(trx, "cache:purge", cacheTags, async (flushTrx, batches) => {
        const all = [...new Set(batches.flat())];
        cache.purge(all, "write", false);
        await cdn?.enqueue(flushTrx, all);
      });
    },
    optional,
  );
  const afterCommit = (tags: string[]) => {
    const entries = cache.purge(tags, "write", true);
    void ctx.hooks.callHook("cache:purged", { tags, reason: "write", entries });
  };
  const changed = ({ cacheTags }: { cacheTags: string[] }) => afterCommit(cacheTags);
  ctx.hooks.hook("article:afterCreate", changed, optional);
  ctx.hooks.hook("article:afterUpdate", changed, optional);
  ctx.hooks.hook("article:afterDelete", changed, optional);
}
