import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { type FileHandle, open, rename, rm, unlink } from "node:fs/promises";
import { join } from "node:path";

/** fsync a directory, so the entries created or renamed in it are durable. */
export async function fsyncDir(path: string): Promise<void> {
  const handle = await open(path, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Writes all of `data` to a new file (O_EXCL, O_NOFOLLOW, 0600) and fsyncs it. */
export async function writeNewFile(path: string, data: Uint8Array): Promise<void> {
  const handle = await open(
    path,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    await handle.chmod(0o600);
    await writeAll(handle, data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Writes every byte of `data` (a single write may be short). */
export async function writeAll(handle: FileHandle, data: Uint8Array): Promise<void> {
  let at = 0;
  while (at < data.length) {
    const { bytesWritten } = await handle.write(data, at, data.length - at);
    at += bytesWritten;
  }
}

/**
 * Replaces `path` durably: a temporary file beside it (`<dir>/<tempPrefix><random>`, O_EXCL,
 * 0600), fsync, rename over `path`, fsync the directory (§3.2 step 7).
 */
export async function writeFileAtomic(dir: string, name: string, tempPrefix: string, data: Uint8Array): Promise<void> {
  const temp = join(dir, `${tempPrefix}${randomBytes(6).toString("hex")}`);
  try {
    await writeNewFile(temp, data);
    await rename(temp, join(dir, name));
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await fsyncDir(dir);
}

/** Removes a file or directory tree; returns false (instead of throwing) when that failed. */
export async function removeBestEffort(path: string): Promise<boolean> {
  try {
    await rm(path, { recursive: true, force: true });
    return true;
  } catch {
    return false;
  }
}
