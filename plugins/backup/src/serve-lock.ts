import { readdir, readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { acquireFileLock, type FileLock, fileLockHeld, ulidFactory } from "@vellum/core";
import { DATA_DIR_LOCK, processLockName } from "./restore/index.js";

const instanceId = ulidFactory();

/**
 * Marks the data dir as served while the service runs, so a restore into it refuses ("stop the
 * service first"): `<dataDir>/.vellum.lock` ({pid, startedAt}) names the process that started
 * last, and each process holds an operating-system lock on a file of its own,
 * `.vellum.lock.<pid>.<instance>`, until it stops or ends however it ends. With several processes
 * on one data dir the first one to stop took `.vellum.lock` with it while the others still ran;
 * their own files keep the restore out until the last one stops, also when they share a pid (two
 * containers on one volume) or run where a restore cannot see their pid.
 */
export class ServeLock {
  readonly #dataDir: string;
  readonly #path: string;
  #own: FileLock | undefined;

  constructor(dataDir: string) {
    this.#dataDir = dataDir;
    this.#path = join(dataDir, DATA_DIR_LOCK);
  }

  /** Writes `.vellum.lock`, takes this process's lock file, and removes those of processes that ended (a crash). */
  async take(): Promise<void> {
    const body = `${JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString() })}\n`;
    await writeFile(this.#path, body, { mode: 0o600 });
    this.#own = await acquireFileLock(join(this.#dataDir, processLockName(process.pid, instanceId())));
    for (const name of await readdir(this.#dataDir)) {
      const path = join(this.#dataDir, name);
      if (name.startsWith(`${DATA_DIR_LOCK}.`) && (await fileLockHeld(path)) !== true)
        await unlink(path).catch(() => undefined);
    }
  }

  /** Lets this process's lock go (its file with it), and removes `.vellum.lock` if it still names this process. */
  async release(): Promise<void> {
    this.#own?.release();
    this.#own = undefined;
    const text = await readFile(this.#path, "utf8").catch(() => "");
    if (text.includes(`"pid":${process.pid},`)) await unlink(this.#path).catch(() => undefined);
  }
}
