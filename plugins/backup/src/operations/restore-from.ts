import { existsSync } from "node:fs";
import { mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { acquireFileLock, type FileLock, type PluginOfflineContext } from "@vellum/core";
import { describeFailure } from "../failure.js";
import type { BackupOptions } from "../options.js";
import { listGenerations } from "../policy/index.js";
import { fsyncDir } from "../restore/durable.js";
import { recoverRestores, restoreGeneration } from "../restore/index.js";
import { refuseNewerApp } from "../version.js";

/**
 * Where SERVICE_RESTORE_FROM restores into an existing empty data dir (a mounted volume cannot be
 * renamed): `<dataDir>/.vellum-restore/data`, whose entries then move up one level.
 */
const INSIDE = ".vellum-restore";

/** The lock processes starting together on one data dir take turns on while one of them restores. */
const LOCK = ".vellum-restore.lock";

/**
 * The plugin's `prepare` step, before anything opens the data dir (backup-format.md §3.2):
 * 1. crash recovery of an interrupted restore swap (step 10), and of an interrupted
 *    SERVICE_RESTORE_FROM into an existing dir (a complete copy moves up; an incomplete one goes);
 * 2. SERVICE_RESTORE_FROM on a fresh deploy: when the data dir is missing or empty, restore the
 *    given generation (or, for a directory, the newest one that restores: every one is verified in
 *    full before anything moves into place). A failure refuses the start: the service must not come
 *    up empty and begin writing generations. A data dir with anything in it is left alone and the
 *    setting ignored (logged), so restarts never restore again.
 */
export async function prepareBackupDataDir(ctx: PluginOfflineContext<BackupOptions>): Promise<void> {
  const lock = await lockWhileRestoring(ctx);
  try {
    await prepare(ctx);
  } finally {
    lock?.release();
  }
}

/**
 * Processes started together on one data dir (cluster mode) take turns while a restore may be under
 * way: the first restores, the next finds the data dir filled (checked again under the lock) and
 * leaves it alone. The lock is inside the data dir when it exists, else beside it (where the restore
 * creates it), and only taken when a restore may run or is unfinished: a data dir that is in use
 * needs none, so its parent need not be writable.
 */
async function lockWhileRestoring(ctx: PluginOfflineContext<BackupOptions>): Promise<FileLock | undefined> {
  const { dataDir, options, logger } = ctx;
  const entries = existsSync(dataDir) ? await readdir(dataDir) : undefined;
  const unfinished = entries?.includes(INSIDE) ?? false;
  const filled = entries !== undefined && entries.some((name) => name !== LOCK);
  if (!unfinished && (filled || !options.restoreFrom)) return undefined;
  const parent = dirname(dataDir);
  if (!entries) await mkdir(parent, { recursive: true, mode: 0o700 });
  const path = entries ? join(dataDir, LOCK) : join(parent, `.${basename(dataDir)}.restore.lock`);
  return acquireFileLock(path, {
    onWait: () => logger.info("another process is preparing this data dir (a restore at start); waiting for it"),
  });
}

async function prepare(ctx: PluginOfflineContext<BackupOptions>): Promise<void> {
  const { dataDir, options, logger } = ctx;
  if (existsSync(dirname(dataDir))) {
    const recovery = await recoverRestores(dataDir);
    if (recovery.rolledForward) logger.warn(`finished an interrupted restore into ${dataDir}`);
  }
  await finishInsideRestore(dataDir, ctx.logger);
  if (!options.restoreFrom) return;
  const existing = existsSync(dataDir) ? (await readdir(dataDir)).filter((name) => name !== LOCK) : undefined;
  if (existing && existing.length > 0) {
    logger.info("SERVICE_RESTORE_FROM ignored: the data dir is not empty");
    return;
  }
  const candidates = await restoreCandidates(options.restoreFrom);
  await mkdir(existing ? join(dataDir, INSIDE) : dirname(dataDir), { recursive: true, mode: 0o700 });
  const dest = existing ? join(dataDir, INSIDE, "data") : dataDir;
  for (const file of candidates) {
    try {
      const restored = await restoreGeneration({
        file,
        dest,
        passphrase: options.passphrase ?? "",
        previousPassphrase: options.previousPassphrase,
        checkManifest: refuseNewerApp,
      });
      await finishInsideRestore(dataDir, ctx.logger);
      logger.info(`SERVICE_RESTORE_FROM: restored generation ${restored.generationId} (created ${restored.createdAt})`);
      return;
    } catch (error) {
      logger.error(`SERVICE_RESTORE_FROM: ${file} could not be restored: ${describeFailure(error).message}`);
    }
  }
  await rm(join(dataDir, INSIDE), { recursive: true, force: true });
  throw new Error(
    `SERVICE_RESTORE_FROM: no generation could be restored from ${options.restoreFrom}; refusing to start with an empty data dir`,
  );
}

/**
 * A restore into `<dataDir>/.vellum-restore/data`: once that copy is complete (the §3.2 swap made
 * it), its entries move up into the data dir (renames on one filesystem) and the folder goes; an
 * incomplete one is removed.
 */
async function finishInsideRestore(dataDir: string, logger: PluginOfflineContext["logger"]): Promise<void> {
  const inside = join(dataDir, INSIDE);
  if (!existsSync(inside)) return;
  const copy = join(inside, "data");
  if (existsSync(copy)) {
    for (const name of await readdir(copy)) await rename(join(copy, name), join(dataDir, name));
    await fsyncDir(dataDir);
    logger.debug(`moved the restored data dir up from ${copy}`);
  }
  await rm(inside, { recursive: true, force: true });
  await fsyncDir(dataDir);
}

/** The file itself, or a directory's generations newest first (names that disagree with their headers left out). */
async function restoreCandidates(source: string): Promise<string[]> {
  const path = resolve(source);
  const info = await stat(path).catch(() => undefined);
  if (!info) throw new Error(`SERVICE_RESTORE_FROM: ${path} does not exist`);
  if (!info.isDirectory()) return [path];
  const { generations } = await listGenerations(path);
  const usable = generations.filter((g) => g.nameMatches).map((g) => g.path);
  if (usable.length === 0) throw new Error(`SERVICE_RESTORE_FROM: ${path} holds no generation`);
  return usable;
}
