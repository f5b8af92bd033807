import { setTimeout as sleep } from "node:timers/promises";
import { readdir } from "node:fs/promises";
import type { PluginOfflineContext } from "@vellum/core";
import { BackupCatalog, type BackupRunResult } from "../catalog.js";
import { describeFailure } from "../failure.js";
import { type GenerationResult, writeGeneration } from "../generation/index.js";
import type { BackupOptions } from "../options.js";
import { targetProblem } from "../options.js";
import { applyRetention, listGenerations, planRetention } from "../policy/index.js";
import { DATA_DIR_LOCK } from "../restore/index.js";
import { BackupError, WALKED_FOLDERS } from "../snapshot/index.js";

const LOCK_POLL_MS = 250;

/** Where the data lives, for one backup run. */
export interface BackupScope {
  dataDir: string;
  databasePath: string | undefined;
  options: Readonly<BackupOptions>;
  logger: PluginOfflineContext["logger"];
  /** The wall clock (tests place generations in time). */
  now?: () => number;
  /** Bytes written so far and expected (a progress bar). */
  onProgress?: (written: number, expected: number) => void;
  /** How long to wait while another process holds the target's lock (a manual backup waits); default 0. */
  waitForLockMs?: number;
}

/** A published generation and what retention removed after it. */
export interface BackupOutcome {
  generation: GenerationResult;
  removed: string[];
}

/**
 * One generation (backup-format.md §2.6): the checks, the snapshot and publish with its
 * read-after-write check (`writeGeneration`), the catalog record, then retention (§4) with the
 * new generation protected. The run's result, failed or not, is recorded as the last backup.
 */
export async function runBackup(scope: BackupScope): Promise<BackupOutcome> {
  const { options, dataDir, logger } = scope;
  const catalog = new BackupCatalog(dataDir);
  const now = scope.now ?? Date.now;
  const began = performance.now();
  /** This run's record for `/health/backup`, stamped with its end and duration. */
  const recordRun = (result: Pick<BackupRunResult, "ok" | "generation" | "code" | "error">) =>
    catalog.recordBackup({
      at: new Date(now()).toISOString(),
      durationMs: Math.round(performance.now() - began),
      ...result,
    });
  try {
    const target = options.target;
    if (!target) throw new BackupError("E_USAGE", "BACKUP_TARGET is not set: there is nowhere to write a backup");
    if (options.off) throw new BackupError("E_DISABLED", "backups disabled (BACKUP_OFF=true)");
    if (!options.passphrase) {
      throw new BackupError("E_USAGE", "SERVICE_BACKUP_PASSPHRASE is not set; there are no unencrypted backups");
    }
    const overlap = targetProblem(target, dataDir);
    if (overlap) throw new BackupError("E_TARGET", `BACKUP_TARGET ${overlap}`);
    await warnUnwalked(dataDir, logger);
    const passphrase = options.passphrase;
    const write = () =>
      writeGeneration({
        dataDir,
        target,
        passphrase,
        kdf: options.kdf,
        now,
        dbPath: scope.databasePath,
        warn: (line) => logger.warn(line),
        onProgress: scope.onProgress,
      });
    const generation = await waitingForLock(write, scope.waitForLockMs ?? 0);
    // The generation is published and checked. Its records in the data dir only serve the drill
    // (which falls back to the generation's MANIFEST) and health; on a full data disk they cannot
    // be written. That is said, and the run goes on: failing it here skipped retention, so the
    // target gained a generation every interval for as long as the data disk stayed full.
    const unrecorded = (what: string) => (error: unknown) =>
      logger.warn(
        `backup: ${generation.name} was published, but ${what} in ${catalog.dir} could not be written ` +
          `(${describeFailure(error).message})`,
      );
    await catalog
      .recordGeneration(generation)
      .catch(unrecorded("its record (the drill compares it with its MANIFEST)"));
    const removed = await retain(scope, target, generation.name, catalog);
    await recordRun({ ok: true, generation: generation.name }).catch(
      unrecorded("the record of the last backup (/health/backup shows the one before)"),
    );
    return { generation, removed };
  } catch (error) {
    const failure = describeFailure(error);
    await recordRun({ ok: false, code: failure.code, error: failure.message }).catch(() => undefined);
    throw error;
  }
}

/** Top-level entries of the data dir a generation does not hold (another plugin's own folder, say): said, not silent. */
async function warnUnwalked(dataDir: string, logger: BackupScope["logger"]): Promise<void> {
  const known = new Set(["db", "backup", ".vellum", DATA_DIR_LOCK, ...WALKED_FOLDERS]);
  const others = (await readdir(dataDir).catch(() => [] as string[])).filter(
    (name) => !known.has(name) && !name.startsWith(`${DATA_DIR_LOCK}.`),
  );
  if (others.length > 0)
    logger.warn(`backup: not part of a generation (unknown data dir entries): ${others.join(", ")}`);
}

/** Retries `write` while another process holds the lock, up to `waitMs`. */
async function waitingForLock<T>(write: () => Promise<T>, waitMs: number): Promise<T> {
  const deadline = performance.now() + waitMs;
  for (;;) {
    try {
      return await write();
    } catch (error) {
      if (!BackupError.is(error, "E_LOCKED") || performance.now() >= deadline) throw error;
      await sleep(LOCK_POLL_MS);
    }
  }
}

/** §4 retention after a published, verified generation; suspicious and future-dated ones are reported. */
async function retain(scope: BackupScope, target: string, newest: string, catalog: BackupCatalog): Promise<string[]> {
  const { options, logger } = scope;
  const listing = await listGenerations(target);
  const plan = planRetention(listing.generations, {
    now: (scope.now ?? Date.now)(),
    keepCount: options.keepGenerations,
    keepMs: options.keepMs,
    protect: newest,
  });
  for (const g of plan.suspicious) {
    logger.warn(`backup: ${g.name} disagrees with the time in its header (renamed?); kept, not used for --at`);
  }
  for (const g of plan.futureDated) logger.warn(`backup: ${g.name} is dated in the future; kept`);
  const removed = await applyRetention(target, plan);
  await catalog.forgetExcept(new Set(plan.keep.map((g) => g.name)));
  return removed;
}
