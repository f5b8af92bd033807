import { definePlugin } from "@vellum/core";
import { Inspector } from "./inspector.js";
import { registerHealthMetrics } from "./metrics.js";
import { HEALTH_SETTINGS, type HealthOptions, nestedProblems, resolveOptions } from "./options.js";
import { refuseReservedNames } from "./reserved-names.js";
import { registerComponentRoute } from "./routes/component.js";
import { registerComponentRoutes } from "./routes/components.js";
import { registerDependenciesRoute } from "./routes/dependencies.js";
import { registerGovernanceRoutes } from "./routes/governance.js";
import { registerMetricsRoute } from "./routes/metrics.js";
import { registerProbeRoutes } from "./routes/probes.js";
import { StorageUsage } from "./storage-usage.js";
import { WalUpkeep } from "./wal-upkeep.js";

/**
 * Health endpoints (contract §8), `/metrics`, WAL upkeep and storage accounting. Other plugins
 * take part by registering components (`ctx.healthComponent`) and through the `storage:changed` hook, and
 * read the quota and its use through service `storage`; this plugin imports none and names none.
 */
export const health = definePlugin<HealthOptions>({
  name: "health",
  settings: HEALTH_SETTINGS,
  checkSettings: nestedProblems,
  setup(ctx) {
    const options = resolveOptions(ctx.options);
    const usage = new StorageUsage(ctx.dataDir, ctx.database, options.storageQuotaBytes);
    const inspector = new Inspector(ctx, options, usage);
    const metrics = registerHealthMetrics(ctx.metrics, {
      walSizeBytes: () => ctx.database.walSizeBytes(),
      drift: async () => {
        const check = await inspector.migrations();
        return check.state === "unavailable" ? undefined : check.drift;
      },
      storage: usage,
    });
    const upkeep = new WalUpkeep(ctx, options.wal, metrics);

    ctx.hooks.hook("storage:changed", (change) => usage.apply(change));
    ctx.hooks.hook("storage:accounted", ({ folder, bytes }) => usage.account(folder, bytes));
    ctx.provide("storage", { quotaBytes: usage.quotaBytes, usedBytes: (options) => usage.usedBytes(options?.except) });
    ctx.onStart(async () => {
      refuseReservedNames(ctx.kernel.components());
      await usage.rescan().catch((error: unknown) => ctx.captureError(error, { task: "storage-scan" }));
    });
    // Both in every process sharing the database: each reports its own WAL upkeep and counts its own usage.
    ctx.schedule("wal-upkeep", { everyMs: options.wal.checkIntervalMs, everyProcess: true }, async () => {
      await upkeep.tick();
    });
    const rescan = { everyMs: options.storage.rescanIntervalMs, jitterMs: 1000, everyProcess: true };
    ctx.schedule("storage-rescan", rescan, () => usage.rescan());

    registerProbeRoutes(inspector);
    registerComponentRoutes(inspector, upkeep);
    registerDependenciesRoute(inspector);
    registerGovernanceRoutes(inspector);
    registerMetricsRoute(inspector);
    registerComponentRoute(inspector);
  },
});
