import { readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DATA_DIR_LOCK } from "./restore/index.js";

/**
 * `<dataDir>/.vellum.lock` while the service runs ({pid, startedAt}): a restore into this data
 * dir refuses while the process it names is alive ("stop the service first").
 */
export class ServeLock {
  readonly #path: string;

  constructor(dataDir: string) {
    this.#path = join(dataDir, DATA_DIR_LOCK);
  }

  async take(): Promise<void> {
    const body = JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString() });
    await writeFile(this.#path, `${body}\n`, { mode: 0o600 });
  }

  /** Removes the lock if it is still this process's. */
  async release(): Promise<void> {
    const text = await readFile(this.#path, "utf8").catch(() => "");
    if (text.includes(`"pid":${process.pid},`)) await unlink(this.#path).catch(() => undefined);
  }
}
