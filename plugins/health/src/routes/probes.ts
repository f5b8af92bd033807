import { type ComponentState, isFault } from "../checks/state.js";
import { componentStates, type Inspector } from "../inspector.js";
import { json } from "../respond.js";
import { healthSchema, liveSchema, readySchema } from "./schemas.js";

/** The same entries with their keys in alphabetical order, so the body does not depend on plugin order. */
const byName = <V>(record: Record<string, V>): Record<string, V> =>
  Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : 1)));

/**
 * `/health`, `/health/live` and `/health/ready`: probe routes, answered before start-up has
 * finished and during shutdown too (route meta `probe: true`), without the API key; like every
 * page a browser opens, they hand out the `svc_csrf` cookie (contract §4). Ready means:
 * the kernel is ready, and neither db, storage nor a component registered with `readiness: true`
 * is unavailable.
 */
export function registerProbeRoutes(inspector: Inspector): void {
  const { ctx } = inspector;
  const probe = { auth: "none", probe: true, csrfCookie: true } as const;

  ctx.router.get(
    "/health",
    async () => {
      const components = componentStates(await inspector.overview(), inspector.options.expect);
      if (ctx.kernel.state() !== "ready") components.service = "unavailable";
      const degraded = Object.values(components).some(isFault);
      return json({
        status: degraded ? "degraded" : "ok",
        version: ctx.kernel.version,
        uptime_seconds: Math.floor((Date.now() - ctx.kernel.startedAt.getTime()) / 1000),
        ...(degraded ? { components } : {}),
      });
    },
    { ...probe, schema: healthSchema },
  );

  ctx.router.get("/health/live", () => json({ live: true }), { ...probe, schema: liveSchema });

  ctx.router.get(
    "/health/ready",
    async () => {
      const state = ctx.kernel.state();
      const [db, storage, components] = await Promise.all([
        inspector.database(),
        inspector.storage(),
        inspector.components((c) => c.readiness === true),
      ]);
      const checks: Record<string, ComponentState> = { db: db.state, storage: storage.state };
      for (const [name, result] of components) checks[name] = result.state;
      const ready = state === "ready" && Object.values(checks).every((s) => s !== "unavailable");
      return json({ ready, state, checks: byName(checks) }, ready ? 200 : 503);
    },
    { ...probe, schema: readySchema },
  );
}
