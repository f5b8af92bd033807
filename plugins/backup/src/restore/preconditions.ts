import { type Stats } from "node:fs";
import { lstat, readdir, readFile, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileLockHeld } from "@vellum/core";
import { errnoCode, RestoreError } from "./errors.js";
import { restoreNames, type RestoreNames } from "./names.js";

/** The name of the lock a running Vellum holds in its data dir. */
export const DATA_DIR_LOCK = ".vellum.lock";

/**
 * The lock file of one serving process, `.vellum.lock.<pid>.<instance>`: several processes may
 * serve one data dir. The process holds an operating-system lock on it while it runs
 * (`acquireFileLock`), so whether it runs is known without trusting its pid, which containers on
 * one volume share (each may be pid 1) and a restore in another container cannot see. The pid is
 * in the name for the messages.
 */
export const processLockName = (pid: number, instance: string) => `${DATA_DIR_LOCK}.${pid}.${instance}`;

/** The pid a process lock file's name gives, for messages. */
const pidOfProcessLock = (name: string) => name.slice(DATA_DIR_LOCK.length + 1).split(".")[0];

/** What the preconditions found. */
export interface RestoreTarget extends RestoreNames {
  /** Whether `dest` exists (a directory: anything else is refused). */
  destExists: boolean;
  /** Set when `<dest>/.vellum.lock` exists but its process is gone. */
  staleLock: { pid: number } | undefined;
}

/**
 * §3.2 step 1 without the unlock: the parent of `dest` exists and is a directory, `dest` is not a
 * symlink (lstat) and, if it exists, is a directory, and no live process holds a lock file of its
 * own (`.vellum.lock.<pid>.<instance>`, asked of the operating system) or `<dest>/.vellum.lock`.
 * Refuses with `E_PRECONDITION` or `E_LOCKED` (exit 5); writes nothing.
 */
export async function checkPreconditions(destInput: string): Promise<RestoreTarget> {
  const names = restoreNames(resolve(destInput));
  const { dest, parent, base } = names;
  if (base === "" || base === "." || base === "..") {
    throw new RestoreError("E_PRECONDITION", `${dest} cannot be a data dir: it has no name of its own`, { path: dest });
  }
  const parentStat = await statOrUndefined(() => stat(parent), parent);
  if (parentStat === undefined || !parentStat.isDirectory()) {
    throw new RestoreError("E_PRECONDITION", `the parent directory of ${dest} does not exist`, { path: parent });
  }
  const destStat = await statOrUndefined(() => lstat(dest), dest);
  if (destStat?.isSymbolicLink()) {
    throw new RestoreError("E_PRECONDITION", `${dest} is a symlink; restore into a real directory`, { path: dest });
  }
  if (destStat !== undefined && !destStat.isDirectory()) {
    throw new RestoreError("E_PRECONDITION", `${dest} exists and is not a directory`, { path: dest });
  }
  let staleLock: RestoreTarget["staleLock"];
  if (destStat !== undefined) {
    for (const name of await readdir(dest)) {
      if (!name.startsWith(`${DATA_DIR_LOCK}.`) || !(await fileLockHeld(join(dest, name)))) continue;
      const lock = join(dest, name);
      throw new RestoreError(
        "E_LOCKED",
        `a running Vellum (pid ${pidOfProcessLock(name)}) holds the data dir; stop the service first (${lock})`,
        { path: lock },
      );
    }
    staleLock = await checkLock(join(dest, DATA_DIR_LOCK));
  }
  return { ...names, destExists: destStat !== undefined, staleLock };
}

/**
 * Refuses (`E_LOCKED`) when the lock names a live process, or cannot be read or understood;
 * returns the pid of a stale lock (its process is gone); undefined when there is no lock.
 */
async function checkLock(lock: string): Promise<{ pid: number } | undefined> {
  const lockStat = await statOrUndefined(() => lstat(lock), lock);
  if (lockStat === undefined) return undefined;
  const refuse = (why: string) =>
    new RestoreError("E_LOCKED", `${why}; stop the service first (${lock})`, { path: lock });
  if (!lockStat.isFile()) throw refuse("the data dir's lock is not a regular file");
  let text: string;
  try {
    text = (await readFile(lock)).subarray(0, 4096).toString("utf8");
  } catch (error) {
    throw refuse(`the data dir's lock cannot be read (${errnoCode(error) ?? String(error)})`);
  }
  const pid = lockPid(text);
  if (pid === undefined) throw refuse("the data dir is locked by a process this restore cannot identify");
  if (processAlive(pid)) throw refuse(`a running Vellum (pid ${pid}) holds the data dir`);
  return { pid };
}

/** The pid in a lock file: JSON `{ "pid": n }`, or a number on the first line. */
function lockPid(text: string): number | undefined {
  let pid: unknown;
  try {
    const parsed: unknown = JSON.parse(text);
    pid = typeof parsed === "object" && parsed !== null ? (parsed as { pid?: unknown }).pid : parsed;
  } catch {
    pid = Number((text.split("\n", 1)[0] ?? "").trim());
  }
  return typeof pid === "number" && Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/** Whether a process with `pid` exists (EPERM means it does, owned by someone else). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errnoCode(error) === "EPERM";
  }
}

async function statOrUndefined(get: () => Promise<Stats>, path: string): Promise<Stats | undefined> {
  try {
    return await get();
  } catch (error) {
    const code = errnoCode(error);
    if (code === "ENOENT") return undefined;
    if (code === "ENOTDIR") {
      throw new RestoreError("E_PRECONDITION", `a component of ${path} is not a directory`, { path });
    }
    throw new RestoreError("E_IO", `cannot inspect ${path}: ${code ?? String(error)}`, { path, cause: error });
  }
}
