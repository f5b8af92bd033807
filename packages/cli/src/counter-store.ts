import type { RateLimitStore } from "@vellum/core";
import { RedisRateLimitStore } from "@vellum/redis";
import type { ConsolaInstance } from "consola";

/**
 * Where `vellum serve` keeps rate-limit and lockout counters: in Redis when `SERVICE_REDIS_URL` is
 * set, so every process of a deployment counts a client together; otherwise (undefined) in the
 * kernel's memory store. The log says when Redis stops answering (each process then counts on its
 * own) and when it answers again.
 */
export function counterStore(redisUrl: string | undefined, logger: ConsolaInstance): RateLimitStore | undefined {
  if (redisUrl === undefined) return undefined;
  return new RedisRateLimitStore({
    url: redisUrl,
    onStateChange: (status) => {
      if (status.state === "degraded") logger.warn(`rate limits and lockouts: ${status.detail}`);
      else logger.info("rate limits and lockouts: Redis answers again; every process counts together");
    },
  });
}
