export { RedisRateLimitStore, type RedisRateLimitStoreOptions } from "./rate-limit-store.js";
