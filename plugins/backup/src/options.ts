import { existsSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { type SettingDeclarations, type SettingProblem, setting } from "@vellum/core";
import type { KdfParams } from "./format/index.js";

export interface BackupOptions {
  /** BACKUP_TARGET: the directory generations are written to. Unset: no backups are taken. */
  target?: string;
  /** SERVICE_BACKUP_PASSPHRASE: encrypts every generation; required while backups are on. */
  passphrase?: string;
  /** SERVICE_BACKUP_PASSPHRASE_PREVIOUS: also tried by restore, verify and the drill after a rotation. */
  previousPassphrase?: string;
  /** BACKUP_OFF: no scheduled backups and no drills; restore and verify still work. */
  off: boolean;
  /** SERVICE_RESTORE_FROM: a generation (or a directory of them) restored into an empty data dir at start. */
  restoreFrom?: string;
  /** Milliseconds between generations while writes happen. Default 5 minutes. */
  intervalMs: number;
  /** The longest interval while idle, in milliseconds. Default 6 hours. */
  idleMaxMs: number;
  /** Generations always kept, newest first. Default 24. */
  keepGenerations: number;
  /** Generations younger than this (ms) are kept whatever their rank. Default 30 days. */
  keepMs: number;
  /** Milliseconds between restore drills. Default 12 hours. */
  drillEveryMs: number;
  /** Argon2id parameters of new generations (code or config file only); default the format's. */
  kdf?: KdfParams;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const MIN_PASSPHRASE = 16;

export const BACKUP_SETTINGS: SettingDeclarations<BackupOptions> = {
  target: setting.string({
    env: "BACKUP_TARGET",
    description: "directory the encrypted generations are written to (outside the data dir); unset: no backups",
  }),
  passphrase: setting.string({
    env: "SERVICE_BACKUP_PASSPHRASE",
    description: "passphrase every generation is encrypted with (at least 16 characters); required with BACKUP_TARGET",
    minLength: MIN_PASSPHRASE,
    secret: true,
  }),
  previousPassphrase: setting.string({
    env: "SERVICE_BACKUP_PASSPHRASE_PREVIOUS",
    description: "the passphrase before a rotation: restore, verify and the drill try it when the current one fails",
    minLength: MIN_PASSPHRASE,
    secret: true,
  }),
  off: setting.boolean({
    env: "BACKUP_OFF",
    description: "true: no scheduled backups and no drills (restore and verify still work)",
    default: false,
  }),
  restoreFrom: setting.string({
    env: "SERVICE_RESTORE_FROM",
    description: "a generation, or a directory of them, restored into an empty data dir before the first start",
  }),
  intervalMs: setting.amount({
    env: "BACKUP_INTERVAL_MINUTES",
    description: "minutes between generations while writes happen (the interval doubles while idle)",
    default: 5 * MINUTE,
    unit: "minutes",
    scale: MINUTE,
    max: 1440,
  }),
  idleMaxMs: setting.amount({
    env: "BACKUP_IDLE_MAX_HOURS",
    description: "the longest interval between generations while nothing is written",
    default: 6 * HOUR,
    unit: "hours",
    scale: HOUR,
    max: 168,
  }),
  keepGenerations: setting.integer({
    env: "BACKUP_KEEP_GENERATIONS",
    description: "generations always kept, newest first (a generation goes only past this rank and age)",
    default: 24,
    min: 1,
    max: 100_000,
  }),
  keepMs: setting.amount({
    env: "BACKUP_KEEP_DAYS",
    description: "days a generation is kept whatever its rank",
    default: 30 * DAY,
    unit: "days",
    scale: DAY,
    max: 3650,
  }),
  drillEveryMs: setting.amount({
    env: "BACKUP_DRILL_HOURS",
    description: "hours between restore drills (the newest generation restored into a scratch dir and checked)",
    default: 12 * HOUR,
    unit: "hours",
    scale: HOUR,
    max: 720,
  }),
};

/** Whether scheduled backups run: a target is set and BACKUP_OFF is not. */
export function backupsEnabled(options: Readonly<BackupOptions>): boolean {
  return Boolean(options.target) && !options.off;
}

/** `path` through its nearest existing ancestor's realpath (symlinks resolved), absolute. */
export function realish(path: string): string {
  const absolute = resolve(path);
  if (existsSync(absolute)) return realpathSync(absolute);
  const parent = dirname(absolute);
  return parent === absolute ? absolute : join(realish(parent), basename(absolute));
}

/** True when `child` is `parent` or lies inside it (both real paths). */
export function within(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/** Why `target` cannot hold the data dir's backups, or undefined: it must not equal, lie in or contain it. */
export function targetProblem(target: string, dataDir: string): string | undefined {
  const realTarget = realish(target);
  const realData = realish(dataDir);
  if (within(realData, realTarget)) return `lies inside the data dir ${realData} (or is it); refused`;
  if (within(realTarget, realData)) return `contains the data dir ${realData}; refused`;
  return undefined;
}

/**
 * Why the target cannot be written to now: it must exist and be a directory. It is never created:
 * a volume that is not mounted would otherwise take the backups on the wrong disk.
 */
function missingTarget(target: string): string | undefined {
  if (!existsSync(target)) return `${resolve(target)} does not exist (create it, or mount its volume)`;
  if (!statSync(target).isDirectory()) return `${resolve(target)} is not a directory`;
  return undefined;
}

/** Rules between settings (checked at start, by `--dry-run` and before every backup). */
export function checkBackupSettings(options: Readonly<BackupOptions>, dataDir: string): SettingProblem[] {
  const problems: SettingProblem[] = [];
  if (options.target) {
    const problem = targetProblem(options.target, dataDir) ?? missingTarget(options.target);
    if (problem) problems.push({ setting: "target", message: problem });
  }
  if (backupsEnabled(options) && !options.passphrase) {
    problems.push({
      setting: "passphrase",
      message:
        "is required while BACKUP_TARGET is set (there are no unencrypted backups; BACKUP_OFF=true disables them)",
    });
  }
  if (options.restoreFrom && !options.passphrase) {
    problems.push({ setting: "passphrase", message: "is required to restore from SERVICE_RESTORE_FROM" });
  }
  return problems;
}
