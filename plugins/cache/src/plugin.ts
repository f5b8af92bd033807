import { definePlugin } from "@vellum/core";
import { CdnForwarder, cdnBackoff } from "./cdn.js";
import { cacheComponent } from "./component.js";
import { subscribeInvalidation } from "./invalidation.js";
import { createCacheMetrics } from "./metrics.js";
import { CACHE_SETTINGS, type CacheOptions, checkCacheSettings } from "./options.js";
import { registerPurgeRoute } from "./purge-route.js";
import { ResponseCache } from "./response-cache.js";
import { type CacheStore, MemoryCacheStore } from "./store.js";
import { cacheMigrations, recordPurge } from "./tables.js";

/** `Cache-Control` of cacheable reads: browsers revalidate every time, shared caches keep them briefly. */
export function cacheControlFor(options: Pick<CacheOptions, "sharedMaxAge" | "staleWhileRevalidate">): string {
  const swr = options.staleWhileRevalidate > 0 ? `, stale-while-revalidate=${options.staleWhileRevalidate}` : "";
  return `public, max-age=0, s-maxage=${options.sharedMaxAge}${swr}`;
}

/**
 * Cache (contract §6): ETag, `Cache-Control`, `Cache-Tag` and `Surrogate-Key` on the reads of
 * routes that declare `meta.cacheTags`, 304s, a bounded local response cache answered before
 * routing, exact purges on every article change, `POST /api/v1/cache/purge` (in every process on
 * the database), and purges forwarded to a CDN when configured.
 */
export const cache = definePlugin<CacheOptions>({
  name: "cache",
  settings: CACHE_SETTINGS,
  checkSettings: (options) => checkCacheSettings(options),
  hooks: { "cache:purged": "isolated" },
  commands: { "cache replay": { description: "requeue the CDN purges that were dead-lettered" } },
  // Only for the articles service (an article's tags, for a purge by slug): never imported.
  optionalDependsOn: ["articles"],
  setup(ctx) {
    const options = ctx.options;
    ctx.migrations(cacheMigrations);
    let store: CacheStore | undefined;
    const metrics = createCacheMetrics(ctx.metrics, () => store);
    if (options.maxEntries > 0) {
      store = new MemoryCacheStore({ ...options, onEvict: (reason) => metrics.evicted(reason) });
    }
    const cache = new ResponseCache({
      store,
      metrics,
      cacheControl: cacheControlFor(options),
      dataVersion: () => ctx.database.dataVersion(),
    });

    let cdn: CdnForwarder | undefined;
    if (options.cdnPurgeUrl !== undefined && options.cdnPurgeSecret !== undefined) {
      cdn = new CdnForwarder(ctx.queue("cdn"), options.cdnPurgeUrl, options.cdnPurgeSecret);
      cdn.queue.process(cdn.deliver, {
        mode: "at-least-once",
        maxAttempts: options.cdnMaxAttempts,
        backoffMs: cdnBackoff,
      });
    }

    if (store) {
      // Without a store nothing is looked up or kept, so there is no epoch to note before a read.
      ctx.router.shortcut(cache.lookup);
      ctx.hooks.hook("http:request", ({ event }) => cache.beforeRead(event));
    }
    ctx.hooks.hook("http:reply", (payload) => cache.afterReply(payload));
    subscribeInvalidation(ctx, cache, cdn);
    registerPurgeRoute(ctx.router, {
      articles: () => ctx.tryInject("articles"),
      async purge(tags) {
        if (tags.length === 0) return;
        // Written, so that the other processes on the database drop what they hold too (tables.ts).
        await ctx.write(async (w) => {
          await recordPurge(w.trx, tags);
          await cdn?.enqueue(w.trx, tags);
        });
        const entries = cache.purge(tags, "api", true);
        void ctx.hooks.callHook("cache:purged", { tags, reason: "api", entries });
      },
    });
    ctx.command("cache replay", async (io) => {
      if (!cdn) {
        io.print("cache replay: CDN forwarding is off (CACHE_CDN_PURGE_URL is not set); nothing to replay");
        return 1;
      }
      io.print(`cache replay: ${await cdn.queue.replay()} dead CDN purge(s) queued again`);
      return 0;
    });
    ctx.healthComponent(cacheComponent({ store, options, kernel: ctx.kernel, cdnQueue: cdn?.queue.name }));
  },
});
