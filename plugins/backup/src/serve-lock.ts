import { readdir, readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DATA_DIR_LOCK, lockPid, processAlive, processLockName } from "./restore/index.js";

/**
 * Marks the data dir as served while the service runs, so a restore into it refuses ("stop the
 * service first"): `<dataDir>/.vellum.lock` ({pid, startedAt}) names the process that started last,
 * and each process also writes `.vellum.lock.<pid>` of its own. With several processes on one data
 * dir the first one to stop took `.vellum.lock` with it while the others still ran; their own files
 * keep the restore out until the last one stops.
 */
export class ServeLock {
  readonly #dataDir: string;
  readonly #path: string;
  readonly #own: string;

  constructor(dataDir: string) {
    this.#dataDir = dataDir;
    this.#path = join(dataDir, DATA_DIR_LOCK);
    this.#own = join(dataDir, processLockName(process.pid));
  }

  /** Writes both files, and removes the per-process files of processes that are gone (a crash). */
  async take(): Promise<void> {
    const body = `${JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString() })}\n`;
    await writeFile(this.#own, body, { mode: 0o600 });
    await writeFile(this.#path, body, { mode: 0o600 });
    for (const name of await readdir(this.#dataDir)) {
      const pid = name.startsWith(`${DATA_DIR_LOCK}.`) ? lockPid(name.slice(DATA_DIR_LOCK.length + 1)) : undefined;
      if (pid !== undefined && !processAlive(pid)) await unlink(join(this.#dataDir, name)).catch(() => undefined);
    }
  }

  /** Removes this process's file, and `.vellum.lock` if it still names this process. */
  async release(): Promise<void> {
    await unlink(this.#own).catch(() => undefined);
    const text = await readFile(this.#path, "utf8").catch(() => "");
    if (text.includes(`"pid":${process.pid},`)) await unlink(this.#path).catch(() => undefined);
  }
}
