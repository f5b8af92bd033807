import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { link, lstat, open, readFile, rename, unlink } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { BackupError } from "../snapshot/errors.js";
import { isCode } from "../file-io.js";

/** The single-flight lock file in BACKUP_TARGET (§2.6 step 2). */
export const LOCK_NAME = ".vellum-backup.lock";
/** A lock older than this is stale whatever its pid. */
export const LOCK_STALE_MS = 2 * 60 * 60 * 1000;
/** A lock file with no readable content (its writer died between create and write) is stale after this. */
const UNREADABLE_STALE_MS = 60 * 1000;

/** What the lock file holds. */
export interface LockInfo {
  pid: number;
  startedMs: number;
  host: string;
}

/** A held lock; {@link release} removes the file if it is still ours. */
export interface HeldLock {
  readonly path: string;
  release(): Promise<void>;
}

const held = new Map<string, Promise<void>>();

/**
 * Runs `task` under the in-process mutex for `key` (the target's realpath): calls for the same
 * target in this process run one after the other, never together.
 */
export async function withMutex<T>(key: string, task: () => Promise<T>): Promise<T> {
  const previous = held.get(key) ?? Promise.resolve();
  let done!: () => void;
  const mine = new Promise<void>((resolve) => {
    done = resolve;
  });
  const chained = previous.then(() => mine);
  held.set(key, chained);
  try {
    await previous;
    return await task();
  } finally {
    done();
    if (held.get(key) === chained) held.delete(key);
  }
}

/**
 * Takes `target/.vellum-backup.lock`: created with O_EXCL (mode 0600), holding {pid, startedMs,
 * host}. An existing lock is stale when it is older than 2 h, or when it was taken on this host
 * and its pid is dead; a stale lock is moved aside (atomically, then checked to be the same
 * inode, so a lock another process has just taken is put back, not removed) and the O_EXCL create
 * retried. A live lock refuses with `E_LOCKED`.
 */
export async function acquireLock(target: string, now: () => number = Date.now): Promise<HeldLock> {
  const path = join(target, LOCK_NAME);
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const info: LockInfo = { pid: process.pid, startedMs: now(), host: hostname() };
    try {
      const handle = await open(
        path,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o600,
      );
      let ino: bigint;
      try {
        await handle.writeFile(JSON.stringify(info));
        await handle.sync();
        ino = (await handle.stat({ bigint: true })).ino;
      } finally {
        await handle.close();
      }
      return { path, release: () => releaseLock(path, ino) };
    } catch (error) {
      if (!isCode(error, "EEXIST")) throw error;
    }
    const existing = await readLock(path);
    if (existing === undefined) continue; // vanished meanwhile: try again
    const stale = staleReason(existing, now());
    if (stale === undefined) {
      const who =
        existing.info === undefined
          ? "an unreadable lock"
          : `pid ${existing.info.pid} on ${existing.info.host} since ${new Date(existing.info.startedMs).toISOString()}`;
      throw new BackupError("E_LOCKED", `another backup holds ${path} (${who})`);
    }
    await takeOver(path, existing.ino);
  }
  throw new BackupError("E_LOCKED", `could not take ${path}: other writers keep taking it`);
}

async function readLock(
  path: string,
): Promise<{ ino: bigint; mtimeMs: number; info: LockInfo | undefined } | undefined> {
  try {
    const stats = await lstat(path, { bigint: true });
    const text = await readFile(path, "utf8");
    let info: LockInfo | undefined;
    try {
      const parsed = JSON.parse(text) as Partial<LockInfo>;
      if (
        Number.isSafeInteger(parsed.pid) &&
        Number.isSafeInteger(parsed.startedMs) &&
        typeof parsed.host === "string"
      ) {
        info = parsed as LockInfo;
      }
    } catch {
      info = undefined;
    }
    return { ino: stats.ino, mtimeMs: Number(stats.mtimeMs), info };
  } catch (error) {
    if (isCode(error, "ENOENT")) return undefined;
    throw error;
  }
}

function staleReason(lock: { mtimeMs: number; info: LockInfo | undefined }, nowMs: number): string | undefined {
  if (lock.info === undefined) return nowMs - lock.mtimeMs > UNREADABLE_STALE_MS ? "unreadable" : undefined;
  if (nowMs - lock.info.startedMs > LOCK_STALE_MS) return "older than 2 h";
  if (lock.info.host === hostname() && !pidAlive(lock.info.pid)) return "pid dead";
  return undefined;
}

function pidAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return isCode(error, "EPERM");
  }
}

async function takeOver(path: string, staleIno: bigint): Promise<void> {
  const aside = `${path}.stale-${randomBytes(6).toString("hex")}`;
  try {
    await rename(path, aside);
  } catch (error) {
    if (isCode(error, "ENOENT")) return;
    throw error;
  }
  const moved = await lstat(aside, { bigint: true });
  if (moved.ino !== staleIno) {
    // Another process replaced the stale lock between our read and our rename: put its lock back
    // (without clobbering) and let the next attempt see it.
    await link(aside, path).catch(() => undefined);
  }
  await unlink(aside).catch(() => undefined);
}

async function releaseLock(path: string, ino: bigint): Promise<void> {
  try {
    const stats = await lstat(path, { bigint: true });
    if (stats.ino === ino) await unlink(path);
  } catch (error) {
    if (!isCode(error, "ENOENT")) throw error;
  }
}
