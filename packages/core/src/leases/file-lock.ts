import { rmSync, statSync } from "node:fs";
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

type DatabaseConstructor = Awaited<ReturnType<typeof loadDriver>>;

/**
 * Whether a process holds the `acquireFileLock` lock on the file at `path`: true while one does,
 * false when the lock is free (its holder ended, however it ended), undefined when there is no such
 * file or it is not a lock file. Takes the lock for an instant when it is free.
 */
export function probeFileLock(Database: DatabaseConstructor, path: string): boolean | undefined {
  let probe: InstanceType<DatabaseConstructor>;
  try {
    probe = new Database(path, { fileMustExist: true, timeout: 0 });
  } catch {
    return undefined;
  }
  try {
    probe.exec("BEGIN IMMEDIATE");
    probe.exec("ROLLBACK");
    return false;
  } catch (error) {
    return /^SQLITE_BUSY/.test(String((error as { code?: unknown }).code)) ? true : undefined;
  } finally {
    probe.close();
  }
}

/**
 * Whether a live process on this host holds the `acquireFileLock` lock at `path` (undefined when
 * there is no such file): the operating system's word, so it holds in containers and pid
 * namespaces, where a process id says nothing.
 */
export async function fileLockHeld(path: string): Promise<boolean | undefined> {
  return probeFileLock(await loadDriver(), path);
}

/** The identity of the file `path` names now, or undefined when there is none. */
function fileAt(path: string): string | undefined {
  const info = statSync(path, { throwIfNoEntry: false });
  return info && `${info.dev}:${info.ino}`;
}

/**
 * An exclusive lock between the processes of this host, held on the file at `path` (created, and
 * removed on release): waits, without blocking the event loop, while another process holds it. It
 * is an exclusive SQLite lock on an empty database file, so the operating system drops it when the
 * holder ends, however it ends, and no stale lock outlives a crash. For steps that must not run in
 * two processes at once, such as a restore at start while two processes start together.
 *
 * A holder removes the file before it lets the lock go, so a process that waited on that file may
 * win a lock on a file nobody can find any more while a newcomer locks a new one at the path. So
 * the lock counts only when the path still names the file locked (its device and inode, read
 * before it was opened, are the same after): otherwise it is dropped and the path's new file waited
 * for. Whoever holds it must still check, under the lock, whether its work is left to do (a
 * restore into an empty data dir).
 */
export async function acquireFileLock(path: string, options: FileLockOptions = {}): Promise<FileLock> {
  const Database = await loadDriver();
  let waited = false;
  const wait = async () => {
    if (!waited) options.onWait?.();
    waited = true;
    await new Promise((resolve) => setTimeout(resolve, options.retryMs ?? 50));
  };
  for (;;) {
    const before = fileAt(path);
    const lock = new Database(path, { timeout: 0 }); // creates the file when there is none
    if (before === undefined) {
      lock.close();
      continue; // its identity is read before it is opened: open again the file made now
    }
    try {
      for (;;) {
        try {
          lock.pragma("journal_mode = MEMORY"); // no journal file beside it: the lock is all it is for
          lock.exec("BEGIN EXCLUSIVE");
          break;
        } catch (error) {
          if (!/^SQLITE_BUSY/.test(String((error as { code?: unknown }).code))) throw error;
          await wait();
        }
      }
    } catch (error) {
      lock.close();
      throw error;
    }
    if (fileAt(path) === before) {
      return {
        release() {
          if (!lock.open) return;
          rmSync(path, { force: true });
          lock.close();
        },
      };
    }
    lock.close(); // its holder removed it meanwhile: the lock is on the file at the path now
  }
}
