import { lstat, readdir, rename, rm, unlink } from "node:fs/promises";
import { join, resolve } from "node:path";
import { asRestoreFailure, errnoCode, RestoreError } from "./errors.js";
import { fsyncDir } from "./durable.js";
import { deleteJournal, readJournal } from "./journal.js";
import { restoreNames, type RestoreNames } from "./names.js";

/** Staging directories and journal temp files older than this are left-overs (§3.2 step 10). */
export const STALE_RESTORE_MS = 60 * 60 * 1000;

export interface RecoverOptions {
  /** The clock, Unix ms (default `Date.now`): what "older than 1 h" is measured against. */
  now?: (() => number) | undefined;
}

/** What crash recovery did. */
export interface RecoveryReport {
  /** The staging directory moved into place as `dest` (journal present, `dest` missing). */
  rolledForward: string | null;
  /** Whether a journal was deleted (after a roll forward, or because `dest` exists). */
  journalDeleted: boolean;
  /** Stale staging directories and journal temp files removed. */
  removed: string[];
}

/**
 * §3.2 step 10, for the data dir `dest`; run by restore and by service start before opening any
 * data dir:
 *
 * - journal present and `dest` missing: roll forward (`rename(staging, dest)`), fsync the parent,
 *   delete the journal;
 * - journal present and `dest` exists: delete the journal;
 * - `.<basename>.restore-<stamp>-<random>` directories (and journal temp files) older than 1 h,
 *   with no journal naming them: delete.
 *
 * A journal that cannot be read or names other paths, or whose staging directory is gone while
 * `dest` is missing, is `E_RECOVERY` (exit 4) and changes nothing.
 */
export async function recoverRestores(dest: string, options: RecoverOptions = {}): Promise<RecoveryReport> {
  const names = restoreNames(resolve(dest));
  const now = options.now ?? Date.now;
  const report: RecoveryReport = { rolledForward: null, journalDeleted: false, removed: [] };
  const journal = await readJournal(names);
  if (journal !== undefined) {
    try {
      if (await exists(names.dest)) {
        await deleteJournal(names);
        report.journalDeleted = true;
      } else {
        const staging = await lstatOrUndefined(journal.staging);
        if (staging === undefined || !staging.isDirectory()) {
          throw new RestoreError(
            "E_RECOVERY",
            `the restore journal ${names.journal} names ${journal.staging}, which is gone, and ${names.dest} is missing` +
              (journal.replaced === null ? "" : `; the previous data dir should be at ${journal.replaced}`),
            { path: names.journal },
          );
        }
        await rename(journal.staging, names.dest);
        await fsyncDir(names.parent);
        report.rolledForward = journal.staging;
        await deleteJournal(names);
        report.journalDeleted = true;
      }
    } catch (error) {
      throw asRestoreFailure(error, `crash recovery of ${names.dest}`);
    }
  }
  try {
    report.removed = await removeStale(names, now() - STALE_RESTORE_MS);
  } catch (error) {
    throw asRestoreFailure(error, `removing stale restore directories beside ${names.dest}`);
  }
  return report;
}

/** Removes this data dir's staging directories and journal temp files last changed before `before`. */
async function removeStale(names: RestoreNames, before: number): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(names.parent);
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return [];
    throw error;
  }
  const staging = stagingPattern(names);
  const removed: string[] = [];
  for (const name of entries) {
    const isTemp = name.startsWith(names.journalTempPrefix);
    if (!isTemp && !staging.test(name)) continue;
    const path = join(names.parent, name);
    const st = await lstatOrUndefined(path);
    if (st === undefined || st.mtimeMs >= before) continue;
    if (isTemp && st.isFile()) await unlink(path);
    else if (!isTemp && st.isDirectory()) await rm(path, { recursive: true, force: true });
    else continue;
    removed.push(path);
  }
  if (removed.length > 0) await fsyncDir(names.parent);
  return removed;
}

/** `.<basename>.restore-YYYYMMDD-HHMMSS-XXXXXX`, as mkdtemp makes them (and nothing else). */
export function stagingPattern(names: RestoreNames): RegExp {
  const escaped = names.stagingPrefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`^${escaped}\\d{8}-\\d{6}-[A-Za-z0-9]{6}$`);
}

async function exists(path: string): Promise<boolean> {
  return (await lstatOrUndefined(path)) !== undefined;
}

async function lstatOrUndefined(path: string) {
  try {
    return await lstat(path);
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return undefined;
    throw error;
  }
}
