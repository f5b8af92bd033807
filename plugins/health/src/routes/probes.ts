import { reported } from "../checks/reports.js";
import { isFault } from "../checks/state.js";
import { componentStates, type Inspector } from "../inspector.js";
import { json } from "../respond.js";

/**
 * `/health`, `/health/live` and `/health/ready`: probe routes, answered before start-up has
 * finished and during shutdown too (route meta `probe: true`), without the API key.
 */
export function registerProbeRoutes(inspector: Inspector): void {
  const { ctx } = inspector;
  const probe = { auth: "none", probe: true } as const;

  ctx.router.get(
    "/health",
    async () => {
      const components = componentStates(await inspector.overview());
      if (ctx.kernel.state() !== "ready") components.service = "unavailable";
      const degraded = Object.values(components).some(isFault);
      return json({
        status: degraded ? "degraded" : "ok",
        version: ctx.kernel.version,
        uptime_seconds: Math.floor((Date.now() - ctx.kernel.startedAt.getTime()) / 1000),
        ...(degraded ? { components } : {}),
      });
    },
    probe,
  );

  ctx.router.get("/health/live", () => json({ live: true }), probe);

  ctx.router.get(
    "/health/ready",
    async () => {
      const state = ctx.kernel.state();
      const [db, storage, reports] = await Promise.all([
        inspector.database(),
        inspector.storage(),
        inspector.reports(),
      ]);
      const checks = { db: db.state, search: reported(reports, "search").state, storage: storage.state };
      const ready = state === "ready" && Object.values(checks).every((s) => s !== "unavailable");
      return json({ ready, state, checks }, ready ? 200 : 503);
    },
    probe,
  );
}
