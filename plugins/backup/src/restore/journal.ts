import { readFile, unlink } from "node:fs/promises";
import { basename, dirname, isAbsolute } from "node:path";
import { errnoCode, RestoreError } from "./errors.js";
import { fsyncDir, writeFileAtomic } from "./durable.js";
import type { RestoreNames } from "./names.js";

/** `<parent>/.<basename>.restore-journal.json` (§3.2 step 7). */
export interface RestoreJournal {
  phase: "swap";
  /** The staging directory, absolute. */
  staging: string;
  /** The data dir, absolute. */
  dest: string;
  /** Where the old data dir goes, or null when there is none. */
  replaced: string | null;
}

/** Writes the journal via temp + fsync + rename + fsync(parent). */
export async function writeJournal(names: RestoreNames, journal: RestoreJournal): Promise<void> {
  await writeFileAtomic(
    names.parent,
    basename(names.journal),
    names.journalTempPrefix,
    Buffer.from(`${JSON.stringify(journal, null, 2)}\n`),
  );
}

/**
 * Reads the journal beside `names.dest`: undefined when there is none. A journal that does not
 * parse, or names a staging directory or data dir other than this one's, is `E_RECOVERY`: recovery
 * then touches nothing.
 */
export async function readJournal(names: RestoreNames): Promise<RestoreJournal | undefined> {
  let text: string;
  try {
    text = await readFile(names.journal, "utf8");
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return undefined;
    throw new RestoreError("E_RECOVERY", `cannot read the restore journal ${names.journal}`, {
      path: names.journal,
      cause: error,
    });
  }
  const invalid = (why: string) =>
    new RestoreError("E_RECOVERY", `the restore journal ${names.journal} ${why}; nothing was changed`, {
      path: names.journal,
    });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid("is not JSON");
  }
  if (typeof value !== "object" || value === null) throw invalid("is not a JSON object");
  const j = value as Record<string, unknown>;
  if (j.phase !== "swap") throw invalid('has no phase "swap"');
  if (j.dest !== names.dest) throw invalid(`names another data dir (${String(j.dest)})`);
  const { staging, replaced } = j;
  if (
    typeof staging !== "string" ||
    !isAbsolute(staging) ||
    dirname(staging) !== names.parent ||
    !basename(staging).startsWith(names.stagingPrefix)
  ) {
    throw invalid("names a staging directory that is not one of this data dir's");
  }
  if (replaced !== null && (typeof replaced !== "string" || !replaced.startsWith(`${names.dest}.replaced-`))) {
    throw invalid("names an unexpected replaced directory");
  }
  return { phase: "swap", staging, dest: names.dest, replaced };
}

/** Deletes the journal, then fsyncs the parent (§3.2 step 8c). */
export async function deleteJournal(names: RestoreNames): Promise<void> {
  try {
    await unlink(names.journal);
  } catch (error) {
    if (errnoCode(error) !== "ENOENT") throw error;
  }
  await fsyncDir(names.parent);
}
