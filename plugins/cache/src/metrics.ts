import type { VellumMetrics } from "@vellum/core";
import type { CacheStore, EvictionReason } from "./store.js";

export type HitReason = "fresh" | "not_modified";
/** `absent`: not held, now stored; `raced`: a purge ran while it was read, so not stored; `too_large`, `off`. */
export type MissReason = "absent" | "raced" | "too_large" | "off";
export type PurgeReason = "write" | "api" | "elsewhere";

export type CacheMetrics = ReturnType<typeof createCacheMetrics>;

/** The cache's metrics, with the labelled children the hot path uses made once. */
export function createCacheMetrics(metrics: VellumMetrics, store: () => CacheStore | undefined) {
  const hits = metrics.counter({
    name: "service_cache_hits_total",
    help: "Reads answered from the local response cache, by reason (fresh: 200, not_modified: 304)",
    labelNames: ["reason"],
  });
  const misses = metrics.counter({
    name: "service_cache_misses_total",
    help: "Cacheable reads the local cache did not answer, by what happened to the response",
    labelNames: ["reason"],
  });
  const evictions = metrics.counter({
    name: "service_cache_evictions_total",
    help: "Entries the local cache dropped to stay within its bounds, by the bound (entries, bytes)",
    labelNames: ["reason"],
  });
  const purges = metrics.counter({
    name: "service_cache_purges_total",
    help: "Purges, by reason (write: an article change, api: POST /api/v1/cache/purge, elsewhere: another process wrote)",
    labelNames: ["reason"],
  });
  const purged = metrics.counter({
    name: "service_cache_purged_entries_total",
    help: "Entries removed by purges, by reason",
    labelNames: ["reason"],
  });
  metrics.gauge({
    name: "service_cache_bytes",
    help: "Bytes held by the local response cache",
    collect() {
      this.set(store()?.bytes ?? 0);
    },
  });
  metrics.gauge({
    name: "service_cache_entries",
    help: "Responses held by the local response cache",
    collect() {
      this.set(store()?.entries ?? 0);
    },
  });
  const fresh = hits.labels({ reason: "fresh" });
  const notModified = hits.labels({ reason: "not_modified" });
  return {
    hit: (reason: HitReason) => (reason === "fresh" ? fresh : notModified).inc(),
    miss: (reason: MissReason) => misses.inc({ reason }),
    evicted: (reason: EvictionReason) => evictions.inc({ reason }),
    purged(reason: PurgeReason, entries: number, counted: boolean) {
      if (counted) purges.inc({ reason });
      if (entries > 0) purged.inc({ reason }, entries);
    },
  };
}
