import { ApiError, isLoopback, text } from "@vellum/core";
import type { Inspector } from "../inspector.js";
import { metricsSchema } from "./schemas.js";

/**
 * `/metrics` in Prometheus text format. Loopback clients (as the trust-proxy rule sees them) and
 * requests carrying the API key are served; anyone else gets 403 `forbidden`. A wrong key counts
 * toward the client's lockout like a failed write, and a locked-out client gets 429. The route is
 * `auth: "none"` for the kernel because this handler enforces the rule itself.
 */
export function registerMetricsRoute(inspector: Inspector): void {
  const { ctx } = inspector;
  ctx.router.get(
    "/metrics",
    async (event) => {
      if (!isLoopback(ctx.kernel.clientIp(event))) {
        const check = await ctx.kernel.security.checkKey(event);
        if (check.result === "locked_out") {
          throw new ApiError("locked_out", "Too many failed authentications from this address.", {
            headers: { "retry-after": String(check.retryAfterSeconds) },
          });
        }
        if (check.result !== "ok") {
          throw new ApiError("forbidden", "Metrics are served to loopback clients and to requests with the API key.");
        }
      }
      const { registry } = ctx.metrics;
      return text(await registry.metrics(), {
        headers: { "content-type": registry.contentType, "cache-control": "no-store" },
      });
    },
    { auth: "none", schema: metricsSchema },
  );
}
