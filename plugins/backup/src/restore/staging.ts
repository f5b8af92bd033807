import { chmod, mkdtemp, stat, statfs } from "node:fs/promises";
import { asRestoreFailure, RestoreError } from "./errors.js";
import { removeBestEffort } from "./durable.js";
import { type RestoreNames, stagingTemplate } from "./names.js";

/**
 * §3.2 step 2: `mkdtemp(<parent>/.<basename>.restore-<UTC YYYYMMDD-HHMMSS>-)`, mode 0700, on the
 * parent's filesystem (same `st_dev`, so the final rename is atomic; `E_PRECONDITION` otherwise,
 * after removing it).
 */
export async function createStaging(names: RestoreNames, nowMs: number): Promise<string> {
  let staging: string;
  try {
    staging = await mkdtemp(stagingTemplate(names, nowMs));
  } catch (error) {
    throw asRestoreFailure(error, `cannot create a staging directory in ${names.parent}`);
  }
  try {
    await chmod(staging, 0o700);
    const [stagingStat, parentStat] = await Promise.all([stat(staging), stat(names.parent)]);
    if (stagingStat.dev !== parentStat.dev) {
      throw new RestoreError(
        "E_PRECONDITION",
        `the staging directory ${staging} is not on the filesystem of ${names.parent}`,
        { path: staging },
      );
    }
    return staging;
  } catch (error) {
    await removeBestEffort(staging);
    throw asRestoreFailure(error, `cannot prepare the staging directory ${staging}`);
  }
}

/** Headroom the space pre-flight asks for beyond the archive's size: max(64 MiB, 5 %). */
export function spaceHeadroom(archiveBytes: number): number {
  return Math.max(64 * 1024 * 1024, Math.ceil(archiveBytes * 0.05));
}

/** The bytes an unprivileged process may still write on the filesystem of `dir` (bavail · bsize). */
export async function freeBytes(dir: string): Promise<number> {
  const fs = await statfs(dir);
  return fs.bavail * fs.bsize;
}

/**
 * §3.2 step 3: the archive's size bounds the plaintext, so require `free ≥ archive + headroom`;
 * `E_NO_SPACE` (exit 4) otherwise, before any content is written.
 */
export async function checkSpace(
  dir: string,
  archiveBytes: number,
  free: (dir: string) => Promise<number> = freeBytes,
): Promise<void> {
  let available: number;
  try {
    available = await free(dir);
  } catch (error) {
    throw asRestoreFailure(error, `cannot read the free space of ${dir}`);
  }
  const needed = archiveBytes + spaceHeadroom(archiveBytes);
  if (available < needed) {
    throw new RestoreError(
      "E_NO_SPACE",
      `not enough space in ${dir}: ${available} bytes free, ${needed} needed (the archive's ${archiveBytes} plus headroom)`,
      { path: dir },
    );
  }
}
