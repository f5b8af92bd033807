import type { VellumMetrics } from "@vellum/core";
import type { StorageUsage } from "./storage-usage.js";

type Gauge = ReturnType<VellumMetrics["gauge"]>;
type Counter = ReturnType<VellumMetrics["counter"]>;

export interface HealthMetrics {
  /** Duration of the last WAL checkpoint (ms); see docs/operations.md for why a gauge. */
  checkpointDuration: Gauge;
  checkpoints: Counter;
}

export interface MetricSources {
  walSizeBytes(): number;
  /** Whether migrations have drifted; undefined when it cannot be told (the gauge keeps its value). */
  drift(): Promise<boolean | undefined>;
  storage: StorageUsage;
}

/**
 * The seed's metrics that belong to health (WAL size, checkpoint duration, migration drift) and
 * storage gauges for the quota and data-disk alerts. Everything that can be read at scrape time is
 * read then (`collect`), so a scrape always shows the current value.
 */
export function registerHealthMetrics(metrics: VellumMetrics, sources: MetricSources): HealthMetrics {
  metrics.gauge({
    name: "service_wal_size_bytes",
    help: "Size of the database write-ahead log in bytes",
    collect() {
      this.set(sources.walSizeBytes());
    },
  });
  metrics.gauge({
    name: "service_migration_drift_detected",
    help: "1 when an applied migration is missing from the code or its checksum changed, else 0",
    async collect() {
      const drifted = await sources.drift();
      if (drifted !== undefined) this.set(drifted ? 1 : 0);
    },
  });
  const checkpointDuration = metrics.gauge({
    name: "service_wal_checkpoint_duration_ms",
    help: "Duration of the most recent WAL checkpoint in milliseconds (0 before the first)",
  });
  const checkpoints = metrics.counter({
    name: "service_wal_checkpoints_total",
    help: "WAL checkpoints run by the upkeep, by trigger (size, idle) and result (done, busy)",
    labelNames: ["trigger", "result"],
  });
  metrics.gauge({
    name: "service_storage_used_bytes",
    help: "Bytes used under the data directory (files plus database)",
    collect() {
      this.set(sources.storage.usedBytes());
    },
  });
  metrics.gauge({
    name: "service_storage_quota_bytes",
    help: "Storage quota of the data directory in bytes (STORAGE_QUOTA_GB)",
    collect() {
      this.set(sources.storage.quotaBytes);
    },
  });
  metrics.gauge({
    name: "service_data_disk_used_ratio",
    help: "Share of the disk holding the data directory in use, from 0 to 1",
    async collect() {
      const disk = await sources.storage.disk();
      if (disk) this.set(disk.used_ratio);
    },
  });
  return { checkpointDuration, checkpoints };
}
