import type { HealthComponent, KernelInfo } from "@vellum/core";
import type { CacheOptions } from "./options.js";
import type { CacheStore } from "./store.js";

/**
 * `/health/cache`: what the local cache holds against its bounds and, when purges are forwarded
 * to a CDN, how many wait and how many were dead-lettered (then the CDN may serve stale pages
 * until its own `s-maxage` runs out: degraded).
 */
export function cacheComponent(deps: {
  store: CacheStore | undefined;
  options: Readonly<CacheOptions>;
  kernel: KernelInfo;
  cdnQueue: string | undefined;
}): HealthComponent {
  const { store, options, kernel, cdnQueue } = deps;
  return {
    name: "cache",
    async check() {
      const local = store
        ? { entries: store.entries, bytes: store.bytes, max_entries: options.maxEntries, max_bytes: options.maxBytes }
        : { entries: 0, bytes: 0, max_entries: 0, max_bytes: 0 };
      if (!cdnQueue) return { state: "ok", detail: { local: Boolean(store), ...local, cdn_forwarding: false } };
      const stats = (await kernel.jobs.stats()).find((s) => s.queue === cdnQueue);
      const cdn = { cdn_forwarding: true, cdn_purges_queued: stats?.queued ?? 0, cdn_purges_dead: stats?.failed ?? 0 };
      return {
        state: cdn.cdn_purges_dead > 0 ? "degraded" : "ok",
        detail: { local: Boolean(store), ...local, ...cdn },
      };
    },
  };
}
