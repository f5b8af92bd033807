import { existsSync } from "node:fs";
import { mkdir, readdir, rmdir, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { PluginOfflineContext } from "@vellum/core";
import { describeFailure } from "../failure.js";
import type { BackupOptions } from "../options.js";
import { listGenerations } from "../policy/index.js";
import { recoverRestores, restoreGeneration } from "../restore/index.js";
import { refuseNewerApp } from "../version.js";

/**
 * The plugin's `prepare` step, before anything opens the data dir (backup-format.md §3.2):
 * 1. crash recovery of an interrupted restore swap (step 10);
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
  if (!options.restoreFrom) return;
  if (!(await missingOrEmpty(dataDir))) {
    logger.info("SERVICE_RESTORE_FROM ignored: the data dir is not empty");
    return;
  }
  const candidates = await restoreCandidates(options.restoreFrom);
  if (existsSync(dataDir)) await rmdir(dataDir);
  await mkdir(dirname(dataDir), { recursive: true, mode: 0o700 });
  for (const file of candidates) {
    try {
      const restored = await restoreGeneration({
        file,
        dest: dataDir,
        passphrase: options.passphrase ?? "",
        previousPassphrase: options.previousPassphrase,
        checkManifest: refuseNewerApp,
      });
      logger.info(`SERVICE_RESTORE_FROM: restored generation ${restored.generationId} (created ${restored.createdAt})`);
      return;
    } catch (error) {
      logger.error(`SERVICE_RESTORE_FROM: ${file} could not be restored: ${describeFailure(error).message}`);
    }
  }
  throw new Error(
    `SERVICE_RESTORE_FROM: no generation could be restored from ${options.restoreFrom}; refusing to start with an empty data dir`,
  );
}

async function missingOrEmpty(dir: string): Promise<boolean> {
  if (!existsSync(dir)) return true;
  return (await readdir(dir)).length === 0;
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
