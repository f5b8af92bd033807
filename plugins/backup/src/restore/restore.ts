import { stat, utimes } from "node:fs/promises";
import { resolve } from "node:path";
import type { KekDerivation } from "../format/kdf.js";
import { openVpbk, type VpbkArchive, type VpbkSummary } from "../format/reader.js";
import type { VpbkManifest } from "../format/records.js";
import { asRestoreFailure, RestoreError } from "./errors.js";
import { removeBestEffort } from "./durable.js";
import { extractInto } from "./extract.js";
import { deleteJournal, writeJournal } from "./journal.js";
import { checkRestoredDb, fsyncTree, type RestoredDbCheck, writeRestoredFrom } from "./postcheck.js";
import { checkPreconditions, type RestoreTarget } from "./preconditions.js";
import { recoverRestores, type RecoveryReport } from "./recover.js";
import { checkSpace, createStaging, freeBytes } from "./staging.js";
import { chooseReplacedPath, isFree, renameNoReplace } from "./swap.js";

/** How often a running restore touches its staging directory (recovery's staleness is 1 h). */
const FRESH_EVERY_MS = 5 * 60_000;

/**
 * The named points of a restore, in order, for {@link RestoreOptions.onStep}:
 * - `staging`: the staging directory exists, still empty (step 2);
 * - `content`: a chunk of a file's content was written into staging (once per chunk);
 * - `record`: a directory was made, or a file written, synced and closed (once per record);
 * - `complete`: the FINAL frame authenticated and the trailer matched (step 5);
 * - `checked`: the database checked, the marker written, the tree fsynced (step 6);
 * - `journal`: the journal is durable and nothing was moved yet (step 7);
 * - `swap-a`: `dest` was moved to `.replaced-…` (8a; only when `dest` existed);
 * - `swap-b`: staging was moved to `dest` (8b), the journal not yet deleted;
 * - `done`: the journal was deleted (8c).
 */
export type RestoreStep =
  "staging" | "content" | "record" | "complete" | "checked" | "journal" | "swap-a" | "swap-b" | "done";

export interface RestoreOptions {
  /** The `.vpbk` generation to restore. */
  file: string;
  /** The data dir to restore into; its parent must exist. */
  dest: string;
  passphrase: string | Uint8Array;
  /** `SERVICE_BACKUP_PASSPHRASE_PREVIOUS`, tried when `passphrase` does not unlock. */
  previousPassphrase?: string | Uint8Array | undefined;
  /** The Argon2id implementation (default the real one); tests pass a memoised one. */
  deriveKek?: KekDerivation | undefined;
  /** The clock, Unix ms (default `Date.now`): names, `restoredAt`, staleness. */
  now?: (() => number) | undefined;
  /** Sees the archive's MANIFEST before anything is written; a throw refuses it (e.g. `E_DB_VERSION` for a newer app). */
  checkManifest?: ((manifest: VpbkManifest) => void | Promise<void>) | undefined;
  /** Refuses a database this binary cannot run (e.g. newer migrations); exit 5 when it throws. */
  checkDb?: RestoredDbCheck | undefined;
  /** Free bytes on the filesystem of a directory (default statfs `bavail · bsize`). */
  freeBytes?: ((dir: string) => Promise<number>) | undefined;
  /** Called after each frame with the archive bytes read so far and the archive's size. */
  onProgress?: ((bytesRead: number, totalBytes: number | undefined) => void) | undefined;
  /** The lines §3.2 prints (steps 1 and 9) and warnings, e.g. a staging dir that could not be removed. */
  log?: ((line: string) => void) | undefined;
  /**
   * Tests only: called synchronously at each {@link RestoreStep}, so a crash test can stop the
   * process at an exact point of the procedure. It must not throw.
   */
  onStep?: ((step: RestoreStep) => void) | undefined;
}

export interface RestoreResult {
  generationId: string;
  /** ISO 8601 UTC. */
  createdAt: string;
  /** The data dir, absolute. */
  dest: string;
  /** Where the previous data dir was kept (absolute), or null when there was none. */
  replaced: string | null;
  summary: VpbkSummary;
  /** What crash recovery did before this restore. */
  recovery: RecoveryReport;
}

/**
 * `restore -in <file> -dest <data_dir>` (backup-format.md §3.2) as a library function.
 *
 * 1. Crash recovery for `dest` (step 10), then the preconditions: the parent exists, `dest` is not
 *    a symlink, no live Vellum holds `<dest>/.vellum.lock` (exit 5); unlock the header.
 * 2. A staging directory beside `dest`, on the same filesystem; the space pre-flight (exit 4).
 * 3. Stream the records into staging (O_EXCL|O_NOFOLLOW, 0600 files, 0700 dirs, fdatasync,
 *    futimes); complete only once the FINAL frame, trailer and content root check out.
 * 4. `PRAGMA integrity_check` on the restored database, `.vellum/restored-from.json`, fsync the
 *    tree bottom-up and the parent.
 * 5. The journal, then `dest` → `<dest>.replaced-<stamp>` (never replacing a name), staging →
 *    `dest`, delete the journal.
 *
 * Any error before the swap removes the staging directory (best effort) and leaves `dest`
 * untouched; it rejects with the archive's {@link VpbkError} (exit 1, 3 or 4) or a
 * {@link RestoreError} (exit 1, 4 or 5).
 */
export async function restoreGeneration(options: RestoreOptions): Promise<RestoreResult> {
  const now = options.now ?? Date.now;
  const log = options.log ?? (() => undefined);
  const file = resolve(options.file);

  const recovery = await recoverRestores(options.dest, { now });
  const target = await checkPreconditions(options.dest);
  if (target.staleLock !== undefined) {
    log(`warning: ${target.dest} has a stale lock (pid ${target.staleLock.pid} is not running)`);
  }
  const archiveBytes = await archiveSize(file);
  const archive = await openVpbk(file, {
    passphrase: options.passphrase,
    previousPassphrase: options.previousPassphrase,
    deriveKek: options.deriveKek,
    onProgress: options.onProgress,
  });
  const generationId = archive.header.generationId;
  const createdAt = new Date(archive.header.createdMs).toISOString();
  log(`generation ${generationId} (created ${createdAt})`);

  const { summary, replaced } = await stage(archive, target, file, archiveBytes, options, now, log);
  log(`restored generation ${generationId} (created ${createdAt}) into ${target.dest}`);
  log(replaced === null ? "no previous data dir" : `previous data dir kept at: ${replaced}`);
  return { generationId, createdAt, dest: target.dest, replaced, summary, recovery };
}

/** Steps 2–8: staging, stream, post-checks, journal and swap. */
async function stage(
  archive: VpbkArchive,
  target: RestoreTarget,
  file: string,
  archiveBytes: number,
  options: RestoreOptions,
  now: () => number,
  log: (line: string) => void,
): Promise<{ summary: VpbkSummary; replaced: string | null }> {
  let staging: string | undefined;
  let fresh: NodeJS.Timeout | undefined;
  let journalWritten = false;
  let summary: VpbkSummary;
  let replaced: string | null;
  const step = options.onStep ?? (() => undefined);
  try {
    staging = await createStaging(target, now());
    fresh = keepFresh(staging);
    step("staging");
    await checkSpace(target.parent, archiveBytes, options.freeBytes ?? freeBytes);
    const extracted = await extractInto(archive, staging, step, options.checkManifest);
    summary = extracted.summary;
    step("complete");
    await checkRestoredDb(staging, options.checkDb);
    const dirs = [...extracted.dirs];
    const madeVellum = await writeRestoredFrom(staging, {
      generationId: summary.generationId,
      createdAt: new Date(summary.createdMs).toISOString(),
      restoredAt: new Date(now()).toISOString(),
      file,
      contentRoot: summary.contentRoot,
    });
    if (madeVellum) dirs.push(".vellum");
    await fsyncTree(staging, dirs, target.parent);
    step("checked");

    // The service may have started, or dest appeared, during a long stream: check again.
    const current = await checkPreconditions(target.dest);
    replaced = current.destExists ? await chooseReplacedPath(target.dest, now()) : null;
    await writeJournal(target, { phase: "swap", staging, dest: target.dest, replaced });
    journalWritten = true;
    step("journal");
    if (replaced !== null) {
      try {
        await renameNoReplace(target.dest, replaced, target.parent);
      } catch (error) {
        if (!(await isFree(target.dest))) throw error;
        // dest moved aside but the parent's fsync failed: keep the journal and the staging
        // directory, so crash recovery rolls the swap forward instead of leaving no data dir.
        throw new RestoreError(
          "E_SWAP_INCOMPLETE",
          `the previous data dir was moved to ${replaced}, then the swap failed; the journal ` +
            `${target.journal} and ${staging} are kept and crash recovery will finish it ` +
            `(${error instanceof Error ? error.message : String(error)})`,
          { path: target.dest, cause: error },
        );
      }
      step("swap-a");
    }
  } catch (error) {
    clearInterval(fresh);
    if (RestoreError.is(error, "E_SWAP_INCOMPLETE")) throw error;
    await archive.close().catch(() => undefined);
    if (journalWritten) await deleteJournal(target).catch(() => undefined);
    if (staging !== undefined && !(await removeBestEffort(staging))) {
      log(`warning: could not remove the staging directory ${staging}; remove it by hand`);
    }
    throw asRestoreFailure(error, `restoring into ${target.dest}`);
  }

  clearInterval(fresh);
  try {
    await renameNoReplace(staging, target.dest, target.parent);
  } catch (error) {
    throw new RestoreError(
      "E_SWAP_INCOMPLETE",
      `the restored data is complete in ${staging} but could not be moved to ${target.dest}` +
        (replaced === null ? "" : ` (the previous data dir is at ${replaced})`) +
        `; the journal ${target.journal} is kept and crash recovery will finish the swap` +
        ` (${error instanceof Error ? error.message : String(error)})`,
      { path: target.dest, cause: error },
    );
  }
  step("swap-b");
  try {
    await deleteJournal(target);
    step("done");
  } catch (error) {
    log(
      `warning: could not delete the restore journal ${target.journal}; crash recovery will ` +
        `(${error instanceof Error ? error.message : String(error)})`,
    );
  }
  return { summary, replaced };
}

/**
 * Touches the staging directory every few minutes while the restore runs: crash recovery removes
 * staging directories unchanged for an hour, and a long stream deep inside one does not change it.
 */
function keepFresh(staging: string): NodeJS.Timeout {
  const timer = setInterval(() => {
    const at = new Date();
    utimes(staging, at, at).catch(() => undefined);
  }, FRESH_EVERY_MS);
  timer.unref();
  return timer;
}

async function archiveSize(file: string): Promise<number> {
  try {
    const st = await stat(file);
    if (!st.isFile()) throw new RestoreError("E_PRECONDITION", `${file} is not a regular file`, { path: file });
    return st.size;
  } catch (error) {
    throw asRestoreFailure(error, `cannot read ${file}`);
  }
}
