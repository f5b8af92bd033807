import { lstat, rename } from "node:fs/promises";
import { errnoCode, RestoreError } from "./errors.js";
import { fsyncDir } from "./durable.js";
import { replacedCandidate } from "./names.js";

/** Whether nothing (not even a dangling symlink) is at `path`. */
export async function isFree(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return false;
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return true;
    throw error;
  }
}

/**
 * The first free name among `<dest>.replaced-<UTC YYYYMMDD-HHMMSS>`, `…-1`, `…-2`, … (§3.2 step
 * 8a: an existing name is never replaced).
 */
export async function chooseReplacedPath(dest: string, nowMs: number): Promise<string> {
  for (let attempt = 0; attempt < 10_000; attempt += 1) {
    const candidate = replacedCandidate(dest, nowMs, attempt);
    if (await isFree(candidate)) return candidate;
  }
  throw new RestoreError("E_IO", `no free name for the previous data dir beside ${dest}`, { path: dest });
}

/**
 * Renames `from` to `to` unless something is at `to` (POSIX rename would replace an empty
 * directory or a file), then fsyncs `parent`. The check and the rename are two steps; the
 * procedure runs with the service stopped, so nothing else creates these names meanwhile.
 */
export async function renameNoReplace(from: string, to: string, parent: string): Promise<void> {
  if (!(await isFree(to))) {
    throw new RestoreError("E_IO", `${to} appeared during the restore; nothing was replaced`, { path: to });
  }
  await rename(from, to);
  await fsyncDir(parent);
}
