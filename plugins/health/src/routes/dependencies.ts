import { isFault } from "../checks/state.js";
import { storageBody } from "../checks/storage.js";
import { componentStates, type Inspector } from "../inspector.js";
import { json } from "../respond.js";
import { dependenciesSchema } from "./schemas.js";

/**
 * `/health/dependencies`: this plugin's own checks (with `counters` when a shared store keeps the
 * rate-limit and lockout counters), then the expected components (`absent` until
 * a plugin registers them), then every registered component with the detail it reported.
 * `status` is `degraded` when `/health` would be.
 */
export function registerDependenciesRoute(inspector: Inspector): void {
  inspector.ctx.router.get(
    "/health/dependencies",
    async () => {
      const o = await inspector.overview();
      const dependencies: Record<string, Record<string, unknown>> = {
        db: { status: o.db.state, latency_ms: o.db.latency_ms, wal_size_bytes: o.db.wal_size_bytes },
        storage: {
          status: o.storage.status,
          used_ratio: storageBody(o.storage).used_ratio,
          warning: o.storage.warning,
        },
        queue: { status: o.queue.state, queue_depth: o.queue.queue_depth, dead_letter: o.queue.dead_letter },
        migrations: { status: o.migrations.state, drift: o.migrations.drift, pending: o.migrations.pending.length },
      };
      if (o.counters) {
        const { state, ...counters } = o.counters;
        dependencies.counters = { status: state, ...counters };
      }
      for (const name of inspector.options.expect) dependencies[name] ??= { status: "absent" };
      for (const [name, result] of o.components) dependencies[name] = { ...result.detail, status: result.state };
      const degraded = Object.values(componentStates(o, inspector.options.expect)).some(isFault);
      return json({ status: degraded ? "degraded" : "ok", dependencies });
    },
    { auth: "none", schema: dependenciesSchema },
  );
}
