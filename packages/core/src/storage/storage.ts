import { join } from "node:path";
import { createStorage, type Driver, type Storage } from "unstorage";
import fsDriver from "unstorage/drivers/fs";
import memoryDriver from "unstorage/drivers/memory";

/** Folders of the data directory that are file-backed mounts (contract §2 layout). */
export const DATA_DIR_MOUNTS = ["media", "mailboxes", "settings", "pgp"] as const;

/**
 * The instance's storage: fs mounts under the data dir for durable namespaces, memory for
 * `cache`; any mount can be replaced by config (`storage: { media: s3Driver(...) }`).
 */
export function createVellumStorage(dataDir: string, overrides: Record<string, Driver> = {}): Storage {
  const storage = createStorage({ driver: memoryDriver() });
  const mounts: Record<string, Driver> = { cache: memoryDriver() };
  for (const name of DATA_DIR_MOUNTS) mounts[name] = fsDriver({ base: join(dataDir, name) });
  for (const [base, driver] of Object.entries({ ...mounts, ...overrides })) storage.mount(base, driver);
  return storage;
}
