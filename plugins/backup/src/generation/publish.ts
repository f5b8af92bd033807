import { link, lstat, readdir, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { verifyVpbk, VpbkError, type VpbkWriteSummary } from "../format/index.js";
import { isCode } from "../file-io.js";
import { BackupError } from "../snapshot/errors.js";
import { isPartialName } from "./naming.js";

/** `*.partial-*` files older than this are removed after a successful generation (§2.6 step 7). */
export const PARTIAL_MAX_AGE_MS = 60 * 60 * 1000;

/**
 * §2.6 step 6, the read-after-write check: the written file is read back with the generation's
 * data key, every frame authenticated, the record stream and the content root checked (the root
 * rebuilt from the digests the stream carries). It runs on the partial file while its fsync is
 * under way, the two being independent (the re-read comes from the page cache either way), and
 * the generation is published under `finalPath` only once both succeeded: a generation that
 * fails its check is never published.
 */
export async function readAfterWrite(
  partialPath: string,
  finalPath: string,
  dataKey: Buffer,
  written: VpbkWriteSummary,
): Promise<void> {
  try {
    const check = await verifyVpbk(partialPath, { dataKey, trustContentDigests: true });
    if (check.contentRoot !== written.contentRoot || check.generationId !== written.generationId) {
      throw new BackupError("E_VERIFY", "the re-read generation differs from what was written");
    }
  } catch (error) {
    if (error instanceof BackupError) throw error;
    const reason = error instanceof VpbkError ? error.describe() : String(error);
    throw new BackupError("E_VERIFY", `${finalPath} failed its read-after-write check: ${reason}`, { cause: error });
  }
}

/** Publishes without clobbering: link() (EEXIST → E_NAME_TAKEN); without hard links, exists? → error, else rename. */
export async function publish(tmpPath: string, finalPath: string): Promise<void> {
  try {
    await link(tmpPath, finalPath);
    return;
  } catch (error) {
    if (isCode(error, "EEXIST")) {
      throw new BackupError("E_NAME_TAKEN", `${finalPath} already exists; nothing was replaced`, { cause: error });
    }
    if (
      !isCode(error, "EPERM") &&
      !isCode(error, "ENOTSUP") &&
      !isCode(error, "EOPNOTSUPP") &&
      !isCode(error, "ENOSYS")
    ) {
      throw error;
    }
  }
  // No hard links on this file system: check and rename, under the lock we hold.
  try {
    await lstat(finalPath);
    throw new BackupError("E_NAME_TAKEN", `${finalPath} already exists; nothing was replaced`);
  } catch (error) {
    if (!isCode(error, "ENOENT")) throw error;
  }
  await rename(tmpPath, finalPath);
}

/** Removes the `*.partial-*` files in `target` older than {@link PARTIAL_MAX_AGE_MS}. */
export async function removeOldPartials(target: string, nowMs: number): Promise<void> {
  for (const name of await readdir(target)) {
    if (!isPartialName(name)) continue;
    const path = join(target, name);
    try {
      const stats = await lstat(path);
      if (stats.isFile() && nowMs - stats.mtimeMs > PARTIAL_MAX_AGE_MS) await unlink(path);
    } catch (error) {
      if (!isCode(error, "ENOENT")) throw error;
    }
  }
}
