import type { VellumMetrics } from "@vellum/core";
import type { CacheStore, EvictionReason } from "./store.js";

export type HitReason = "fresh" | "not_modified";
/** `absent`: not held, now stored; `raced`: a purge ran while it was read, so not stored; `too_large`, `off`. */
export type MissReason = "absent" | "raced" | "too_large" | "off";
export type PurgeReason = "write" | "api" | "elsewhere";

export type CacheMetrics = ReturnType<typeof createCacheMetrics>;

/**
 * A counter by `reason` kept in plain numbers and handed to prom-client when the metrics are read:
 * prom-client hashes the labels on every `inc`, and hits and misses count every cacheable read.
 */
function tally<R extends string>(metrics: VellumMetrics, name: string, help: string): (reason: R) => void {
  const counts = new Map<R, number>();
  metrics.counter({
    name,
    help,
    labelNames: ["reason"],
    collect() {
      this.reset();
      for (const [reason, count] of counts) this.inc({ reason }, count);
    },
  });
  return (reason) => void counts.set(reason, (counts.get(reason) ?? 0) + 1);
}

/** The cache's metrics. */
export function createCacheMetrics(metrics: VellumMetrics, store: () => CacheStore | undefined) {
  const hit = tally<HitReason>(
    metrics,
    "service_cache_hits_total",
    "Reads answered from the local response cache, by reason (fresh: 200, not_modified: 304)",
  );
  const miss = tally<MissReason>(
    metrics,
    "service_cache_misses_total",
    "Cacheable reads the local cache did not answer, by what happened to the response",
  );
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
  return {
    hit,
    miss,
    evicted: (reason: EvictionReason) => evictions.inc({ reason }),
    purged(reason: PurgeReason, entries: number, counted: boolean) {
      if (counted) purges.inc({ reason });
      if (entries > 0) purged.inc({ reason }, entries);
    },
  };
}
