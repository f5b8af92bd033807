import { existsSync } from "node:fs";
import { mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import type { PluginOfflineContext } from "@vellum/core";
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
  const { dataDir, options, logger } = ctx;
  if (existsSync(dirname(dataDir))) {
    const recovery = await recoverRestores(dataDir);
    if (recovery.rolledForward) logger.warn(`finished an interrupted restore into ${dataDir}`);
  }
  await finishInsideRestore(dataDir, ctx.logger);
  if (!options.restoreFrom) return;
  const existing = existsSync(dataDir) ? await readdir(dataDir) : undefined;
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
