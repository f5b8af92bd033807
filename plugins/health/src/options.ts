import { type SettingDeclarations, type SettingProblem, setting } from "@vellum/core";

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

/**
 * The plugin's options. The declared settings (`storageQuotaBytes`, `checkTimeoutMs`, `expect`)
 * always hold a value (the kernel fills in their defaults); the nested groups may be partial.
 */
export interface HealthOptions {
  /** Quota of the data directory in bytes (`STORAGE_QUOTA_GB`). */
  storageQuotaBytes: number;
  /** Longest one check may take; a check that takes longer is reported unavailable. */
  checkTimeoutMs: number;
  /** Components the operator expects some plugin to register; one nobody registers shows as `absent`. */
  expect: string[];
  wal?: Partial<WalUpkeepOptions>;
  storage?: Partial<StorageOptions>;
  queue?: Partial<QueueOptions>;
  /**
   * Environment the ethics check inspects for telemetry exporters (names only, never values).
   * Default: `process.env`, read at request time.
   */
  environment?: Readonly<Record<string, string | undefined>>;
}

/** The options with every default filled in. */
export interface ResolvedHealthOptions extends HealthOptions {
  wal: WalUpkeepOptions;
  storage: StorageOptions;
  queue: QueueOptions;
}

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;
const COMPONENT_NAME = /^[a-z0-9][a-z0-9_-]*$/;

export const HEALTH_SETTINGS: SettingDeclarations<HealthOptions> = {
  storageQuotaBytes: setting.amount({
    env: "STORAGE_QUOTA_GB",
    unit: "GB",
    scale: GIB,
    max: 1_000_000,
    default: 10 * GIB,
    defaultText: "10",
    description: "quota for the data directory; /health/storage is 503 above 90 %",
  }),
  checkTimeoutMs: setting.integer({
    description: "longest one health check may take, in milliseconds, before it counts as unavailable",
    default: 2000,
    min: 1,
    max: 60_000,
  }),
  expect: setting.list({
    description: "health components expected from other plugins; one nobody registers shows as absent",
    default: [],
    item: (name) => (COMPONENT_NAME.test(name) ? undefined : "is not a component name (a-z, 0-9, _ and -)"),
  }),
};

const NESTED_DEFAULTS: Pick<ResolvedHealthOptions, "wal" | "storage" | "queue"> = {
  wal: { checkpointBytes: 32 * MIB, checkIntervalMs: 1000, idleMs: 30_000 },
  storage: { rescanIntervalMs: 10 * 60_000, warnRatio: 0.8, fullRatio: 0.9, diskWarnRatio: 0.8 },
  queue: { depthLimit: 1000, deadLetterLimit: 10 },
};

/** Fills in the defaults of the nested groups (the kernel has filled in the declared settings). */
export function resolveOptions(options: Readonly<HealthOptions>): ResolvedHealthOptions {
  return {
    ...options,
    wal: { ...NESTED_DEFAULTS.wal, ...options.wal },
    storage: { ...NESTED_DEFAULTS.storage, ...options.storage },
    queue: { ...NESTED_DEFAULTS.queue, ...options.queue },
  };
}

const isNumber = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);
const RULES = {
  positive: [(v: unknown) => isNumber(v) && v > 0, "expected a positive number"],
  count: [(v: unknown) => isNumber(v) && v >= 0, "expected a number of at least 0"],
  ratio: [(v: unknown) => isNumber(v) && v >= 0 && v <= 1, "expected a ratio from 0 to 1"],
} as const;

/** The nested options' problems, for the kernel's check at setup (it names `pluginOptions.health.<path>`). */
export function nestedProblems(input: Readonly<HealthOptions>): SettingProblem[] {
  const { wal, storage, queue } = resolveOptions(input);
  const checks: Array<[keyof typeof RULES, string, unknown]> = [
    ["positive", "wal.checkpointBytes", wal.checkpointBytes],
    ["positive", "wal.checkIntervalMs", wal.checkIntervalMs],
    ["positive", "wal.idleMs", wal.idleMs],
    ["positive", "storage.rescanIntervalMs", storage.rescanIntervalMs],
    ["ratio", "storage.warnRatio", storage.warnRatio],
    ["ratio", "storage.fullRatio", storage.fullRatio],
    ["ratio", "storage.diskWarnRatio", storage.diskWarnRatio],
    ["count", "queue.depthLimit", queue.depthLimit],
    ["count", "queue.deadLetterLimit", queue.deadLetterLimit],
  ];
  const problems: SettingProblem[] = [];
  for (const [rule, path, value] of checks) {
    const [valid, message] = RULES[rule];
    if (!valid(value)) problems.push({ setting: path, message });
  }
  if (problems.length === 0 && storage.warnRatio > storage.fullRatio) {
    problems.push({ setting: "storage.warnRatio", message: "must not exceed fullRatio" });
  }
  return problems;
}
