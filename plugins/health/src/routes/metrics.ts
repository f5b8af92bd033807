import { ApiError, isLoopback } from "@vellum/core";
import type { Inspector } from "../inspector.js";

/**
 * `/metrics` in Prometheus text format. Loopback clients (as the trust-proxy rule sees them) and
 * requests carrying the API key are served; anyone else gets 403 `forbidden`. The route is
 * `auth: "none"` for the kernel because this handler enforces the rule itself.
 */
export function registerMetricsRoute(inspector: Inspector): void {
  const { ctx } = inspector;
  ctx.router.get(
    "/metrics",
    async (event) => {
      if (!isLoopback(ctx.kernel.clientIp(event)) && !ctx.kernel.security.authorize(event.req)) {
        throw new ApiError("forbidden", "Metrics are served to loopback clients and to requests with the API key.");
      }
      const { registry } = ctx.metrics;
      return new Response(await registry.metrics(), {
        headers: { "content-type": registry.contentType, "cache-control": "no-store" },
      });
    },
    { auth: "none" },
  );
}
