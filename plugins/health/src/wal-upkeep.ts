import type { VellumPluginContext } from "@vellum/core";
import type { HealthMetrics } from "./metrics.js";
import type { WalUpkeepOptions } from "./options.js";

export type CheckpointTrigger = "size" | "idle";

export interface CheckpointRecord {
  at: string;
  trigger: CheckpointTrigger;
  duration_ms: number;
  /** True when a reader kept the checkpoint from finishing (it is retried with backoff). */
  busy: boolean;
  wal_bytes_before: number;
  wal_bytes_after: number;
}

const MAX_BUSY_BACKOFF_MS = 60_000;

/**
 * Keeps the write-ahead log short. Every `checkIntervalMs` it samples the WAL size and SQLite's
 * `total_changes()` (rows written through the one shared connection, so any write by any plugin
 * or the queue moves it); either one moving counts as a write (the WAL size also catches schema
 * changes and other processes). It checkpoints (TRUNCATE) when the WAL reaches `checkpointBytes`,
 * and when the service is idle: no request in flight and no write for `idleMs`. Each
 * checkpoint's duration goes to `service_wal_checkpoint_duration_ms`.
 */
export class WalUpkeep {
  readonly #ctx: VellumPluginContext<object>;
  readonly #options: WalUpkeepOptions;
  readonly #metrics: HealthMetrics;
  #lastChanges: number | undefined;
  #lastWalBytes: number | undefined;
  #lastWriteAt = 0;
  #idleDone = false;
  #busyStreak = 0;
  #retryAt = 0;
  #last: CheckpointRecord | undefined;

  constructor(ctx: VellumPluginContext<object>, options: WalUpkeepOptions, metrics: HealthMetrics) {
    this.#ctx = ctx;
    this.#options = options;
    this.#metrics = metrics;
  }

  /** The most recent checkpoint this upkeep ran, if any. */
  last(): CheckpointRecord | undefined {
    return this.#last;
  }

  /** One sampling step (scheduled every `checkIntervalMs`); returns the checkpoint it ran, if any. */
  async tick(now = Date.now()): Promise<CheckpointRecord | undefined> {
    const db = this.#ctx.database;
    if (!db.isOpen()) return undefined;
    const changes = await this.#totalChanges();
    const wal = db.walSizeBytes();
    if (changes !== this.#lastChanges || wal !== this.#lastWalBytes) {
      this.#lastChanges = changes;
      this.#lastWalBytes = wal;
      this.#lastWriteAt = now;
      this.#idleDone = false;
    }
    if (now < this.#retryAt) return undefined;
    if (wal >= this.#options.checkpointBytes) return this.#checkpoint("size", wal, now);
    const idle = this.#ctx.kernel.inFlight() === 0 && now - this.#lastWriteAt >= this.#options.idleMs;
    if (idle && wal > 0 && !this.#idleDone) return this.#checkpoint("idle", wal, now);
    return undefined;
  }

  async #totalChanges(): Promise<number> {
    const row = await this.#ctx.db
      .selectNoFrom((eb) => eb.fn<number>("total_changes", []).as("n"))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async #checkpoint(trigger: CheckpointTrigger, before: number, now: number): Promise<CheckpointRecord> {
    const db = this.#ctx.database;
    const { durationMs, busy } = await db.checkpoint();
    const record: CheckpointRecord = {
      at: new Date(now).toISOString(),
      trigger,
      duration_ms: Math.round(durationMs * 1000) / 1000,
      busy,
      wal_bytes_before: before,
      wal_bytes_after: db.walSizeBytes(),
    };
    this.#lastWalBytes = record.wal_bytes_after;
    this.#metrics.checkpointDuration.set(record.duration_ms);
    this.#metrics.checkpoints.inc({ trigger, result: busy ? "busy" : "done" });
    if (busy) {
      this.#busyStreak++;
      this.#retryAt = now + Math.min(MAX_BUSY_BACKOFF_MS, this.#options.checkIntervalMs * 2 ** this.#busyStreak);
    } else {
      this.#busyStreak = 0;
      this.#retryAt = 0;
      this.#idleDone = trigger === "idle";
    }
    this.#last = record;
    this.#ctx.logger.debug(
      `WAL checkpoint (${trigger}) ${before} → ${record.wal_bytes_after} bytes in ${record.duration_ms} ms${busy ? ", busy" : ""}`,
    );
    return record;
  }
}
