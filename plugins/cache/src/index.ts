export type { CdnForwarder } from "./cdn.js";
export {
  buildEntry,
  type CacheEntry,
  type CachingHeaders,
  cachingHeaders,
  matchesIfNoneMatch,
  strongEtag,
} from "./entry.js";
export type { CachePurgedEvent } from "./events.js";
export type { HitReason, MissReason, PurgeReason } from "./metrics.js";
export type { CacheOptions } from "./options.js";
export { cache, cacheControlFor } from "./plugin.js";
export { type CacheStore, type EvictionReason, MemoryCacheStore, type MemoryStoreOptions } from "./store.js";
