import { rmSync } from "node:fs";
import { loadDriver } from "../db/sqlite.js";

export interface FileLockOptions {
  /** Told once, when another process holds the lock and this one starts to wait for it. */
  onWait?: () => void;
  /** How often to try again while another process holds it (default 50 ms). */
  retryMs?: number;
}

export interface FileLock {
  /** Lets the lock go and removes its file. */
  release(): void;
}

/**
 * An exclusive lock between the processes of this host, held on the file at `path` (created, and
 * removed on release): waits, without blocking the event loop, while another process holds it. It
 * is an exclusive SQLite lock on an empty database file, so the operating system drops it when the
 * holder ends, however it ends, and no stale lock outlives a crash. For steps that must not run in
 * two processes at once, such as a restore at start while two processes start together.
 *
 * Removing the file on release lets a process that opens the path afterwards take a new lock while
 * one that waited on the old file takes that one: the lock serialises the processes that wait
 * together, and whoever comes after must check again, under the lock, whether its work is still to
 * do (as a restore into an empty data dir does).
 */
export async function acquireFileLock(path: string, options: FileLockOptions = {}): Promise<FileLock> {
  const Database = await loadDriver();
  const lock = new Database(path, { timeout: 0 });
  let waited = false;
  try {
    for (;;) {
      try {
        lock.pragma("journal_mode = MEMORY"); // no journal file beside it: the lock is all it is for
        lock.exec("BEGIN EXCLUSIVE");
        break;
      } catch (error) {
        if (!/^SQLITE_BUSY/.test(String((error as { code?: unknown }).code))) throw error;
        if (!waited) options.onWait?.();
        waited = true;
        await new Promise((resolve) => setTimeout(resolve, options.retryMs ?? 50));
      }
    }
  } catch (error) {
    lock.close();
    throw error;
  }
  return {
    release() {
      if (!lock.open) return;
      rmSync(path, { force: true });
      lock.close();
    },
  };
}
