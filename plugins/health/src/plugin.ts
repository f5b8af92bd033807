import { CoreErrors, DEFAULT_STORAGE_QUOTA_BYTES, definePlugin } from "@vellum/core";
import { Inspector } from "./inspector.js";
import { registerHealthMetrics } from "./metrics.js";
import { type HealthOptions, resolveOptions } from "./options.js";
import { registerComponentRoutes } from "./routes/components.js";
import { registerGovernanceRoutes } from "./routes/governance.js";
import { registerMetricsRoute } from "./routes/metrics.js";
import { registerProbeRoutes } from "./routes/probes.js";
import { StorageUsage } from "./storage-usage.js";
import { WalUpkeep } from "./wal-upkeep.js";

/**
 * Health endpoints (contract §8), `/metrics`, WAL upkeep and storage accounting. Other plugins
 * take part only through the `health:check` and `storage:changed` hooks; this plugin imports none.
 */
export const health = definePlugin<HealthOptions>({
  name: "health",
  setup(ctx) {
    const options = resolveOptions(ctx.options);
    const quota = ctx.config.storageQuotaBytes ?? DEFAULT_STORAGE_QUOTA_BYTES;
    if (!(quota > 0)) {
      throw CoreErrors.configInvalid(["storageQuotaBytes", "expected a positive number of bytes"], {
        plugin: "health",
      });
    }

    const usage = new StorageUsage(ctx.dataDir, ctx.database, quota);
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

    ctx.hooks.hook("storage:changed", (change) => usage.apply(change?.bytes));
    ctx.onStart(async () => {
      await usage.rescan().catch((error: unknown) => ctx.captureError(error, { task: "storage-scan" }));
    });
    ctx.schedule("wal-upkeep", { everyMs: options.wal.checkIntervalMs }, async () => {
      await upkeep.tick();
    });
    ctx.schedule("storage-rescan", { everyMs: options.storage.rescanIntervalMs, jitterMs: 1000 }, () => usage.rescan());

    registerProbeRoutes(inspector);
    registerComponentRoutes(inspector, upkeep);
    registerGovernanceRoutes(inspector);
    registerMetricsRoute(inspector);
  },
});
