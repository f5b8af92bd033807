import { CoreErrors } from "@vellum/core";

export interface WalUpkeepOptions {
  /** Checkpoint once the write-ahead log reaches this many bytes (seed: 32 MB). */
  checkpointBytes: number;
  /** How often the WAL size and write activity are sampled. */
  checkIntervalMs: number;
  /** Quiet period (no write, no request in flight) after which an idle checkpoint runs. */
  idleMs: number;
}

export interface StorageOptions {
  /** Full walk of the data dir that corrects the incrementally kept total. */
  rescanIntervalMs: number;
  /** `warning` at this share of the quota (seed: 80 %). */
  warnRatio: number;
  /** `/health/storage` answers 503 above this share of the quota (seed: 90 %). */
  fullRatio: number;
  /** `warning` when the disk holding the data dir is fuller than this (seed: data disk 80 %). */
  diskWarnRatio: number;
}

export interface QueueOptions {
  /** Queued jobs (all queues) above which the queue counts as degraded (seed alert: 1000). */
  depthLimit: number;
  /** Dead-letter jobs above which the queue counts as degraded (seed alert: 10). */
  deadLetterLimit: number;
}

/** What `health({...})` and `pluginOptions.health` accept; anything left out takes its default. */
export interface HealthOptions {
  wal?: Partial<WalUpkeepOptions>;
  storage?: Partial<StorageOptions>;
  queue?: Partial<QueueOptions>;
  /** Longest one check may take; a check that takes longer is reported unavailable. */
  checkTimeoutMs?: number;
  /**
   * Environment the ethics check inspects for telemetry exporters (names only, never values).
   * Default: `process.env`, read at request time.
   */
  environment?: Readonly<Record<string, string | undefined>>;
}

/** The options with every default filled in. */
export interface ResolvedHealthOptions {
  wal: WalUpkeepOptions;
  storage: StorageOptions;
  queue: QueueOptions;
  checkTimeoutMs: number;
  environment?: Readonly<Record<string, string | undefined>>;
}

const MIB = 1024 * 1024;

export const HEALTH_DEFAULTS: ResolvedHealthOptions = {
  wal: { checkpointBytes: 32 * MIB, checkIntervalMs: 1000, idleMs: 30_000 },
  storage: { rescanIntervalMs: 10 * 60_000, warnRatio: 0.8, fullRatio: 0.9, diskWarnRatio: 0.8 },
  queue: { depthLimit: 1000, deadLetterLimit: 10 },
  checkTimeoutMs: 2000,
};

const isNumber = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);
const RULES = {
  positive: [(v: unknown) => isNumber(v) && v > 0, "expected a positive number"],
  count: [(v: unknown) => isNumber(v) && v >= 0, "expected a number of at least 0"],
  ratio: [(v: unknown) => isNumber(v) && v >= 0 && v <= 1, "expected a ratio from 0 to 1"],
} as const;

function expectOption(rule: keyof typeof RULES, path: string, value: unknown): void {
  const [valid, expectation] = RULES[rule];
  if (!valid(value))
    throw CoreErrors.configInvalid([`pluginOptions.health.${path}`, expectation], { plugin: "health" });
}

/** Fills in the defaults and throws `VELLUM_CONFIG_INVALID` naming the first bad option. */
export function resolveOptions(input: Readonly<HealthOptions>): ResolvedHealthOptions {
  const options: ResolvedHealthOptions = {
    wal: { ...HEALTH_DEFAULTS.wal, ...input.wal },
    storage: { ...HEALTH_DEFAULTS.storage, ...input.storage },
    queue: { ...HEALTH_DEFAULTS.queue, ...input.queue },
    checkTimeoutMs: input.checkTimeoutMs ?? HEALTH_DEFAULTS.checkTimeoutMs,
    ...(input.environment ? { environment: input.environment } : {}),
  };
  expectOption("positive", "wal.checkpointBytes", options.wal.checkpointBytes);
  expectOption("positive", "wal.checkIntervalMs", options.wal.checkIntervalMs);
  expectOption("positive", "wal.idleMs", options.wal.idleMs);
  expectOption("positive", "storage.rescanIntervalMs", options.storage.rescanIntervalMs);
  expectOption("ratio", "storage.warnRatio", options.storage.warnRatio);
  expectOption("ratio", "storage.fullRatio", options.storage.fullRatio);
  expectOption("ratio", "storage.diskWarnRatio", options.storage.diskWarnRatio);
  expectOption("count", "queue.depthLimit", options.queue.depthLimit);
  expectOption("count", "queue.deadLetterLimit", options.queue.deadLetterLimit);
  expectOption("positive", "checkTimeoutMs", options.checkTimeoutMs);
  if (options.storage.warnRatio > options.storage.fullRatio) {
    throw CoreErrors.configInvalid(["pluginOptions.health.storage.warnRatio", "must not exceed fullRatio"], {
      plugin: "health",
    });
  }
  return options;
}
