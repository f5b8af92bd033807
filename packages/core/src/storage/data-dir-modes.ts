import { chmod, readdir } from "node:fs/promises";
import { join } from "node:path";
import { createErrorType } from "../errors/vellum-error.js";

const modesFailed = createErrorType(
  "VELLUM_CONFIG_DATA_DIR_MODES",
  (path: string, reason: string) => `cannot restrict access to ${path}: ${reason}`,
);

/** Folders whose files hold secrets or the data itself: readable by the owner only. */
const PRIVATE_FOLDERS = new Set(["settings", "db"]);

async function restrict(path: string, mode: number): Promise<void> {
  await chmod(path, mode).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "ENOENT") throw modesFailed([path, error.code ?? error.message], { cause: error });
  });
}

/**
 * Sets the data dir's modes at every start, whatever its history (a directory made 0755 by hand, a
 * database created under another umask): 0700 on the data dir and its folders, 0600 on the files
 * of `settings/` and `db/` and on the database with its WAL and shared-memory files wherever it
 * lives. A failure stops the start (`VELLUM_CONFIG_DATA_DIR_MODES`, exit 2 under the CLI).
 */
export async function restrictDataDir(dataDir: string, databasePath: string | undefined): Promise<void> {
  await restrict(dataDir, 0o700);
  for (const entry of await readdir(dataDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const folder = join(dataDir, entry.name);
    await restrict(folder, 0o700);
    if (!PRIVATE_FOLDERS.has(entry.name)) continue;
    for (const file of await readdir(folder, { withFileTypes: true })) {
      if (file.isFile()) await restrict(join(folder, file.name), 0o600);
    }
  }
  if (databasePath)
    for (const suffix of ["", "-wal", "-shm", ".leases", ".leases-wal", ".leases-shm"])
      await restrict(`${databasePath}${suffix}`, 0o600);
}
