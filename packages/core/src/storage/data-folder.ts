import { randomBytes } from "node:crypto";
import { chmod, mkdir, open, readFile } from "node:fs/promises";
import { join } from "node:path";

const FOLDER = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** The kernel's own folders of the data dir: the database, secrets, plugins' storage namespaces. */
const KERNEL_FOLDERS = new Set(["db", "settings", "storage"]);

/** A folder a plugin asked for (`ctx.dataFolder`): any name but the kernel's own. */
export function pluginDataFolder(dataDir: string, name: string): Promise<string> {
  if (KERNEL_FOLDERS.has(name))
    return Promise.reject(new Error(`'${name}' is a folder of the kernel; choose another name`));
  return dataFolder(dataDir, name);
}

/** `<dataDir>/<name>`, created with mode 0700 when missing; its path. */
export async function dataFolder(dataDir: string, name: string): Promise<string> {
  if (!FOLDER.test(name)) throw new Error(`'${name}' is not a data folder name (a-z, 0-9, '-' and '_')`);
  const path = join(dataDir, name);
  await mkdir(path, { recursive: true, mode: 0o700 });
  return path;
}

const MIN_SECRET_LENGTH = 32;

/**
 * Loads secret `name` from `<dataDir>/settings/<name>`, or generates one (32 random bytes,
 * base64url) and writes it with mode 0600, exclusively, so two processes starting together agree.
 * An existing file is tightened to 0600.
 */
export async function loadOrCreateSecret(dataDir: string, name: string): Promise<string> {
  if (!FOLDER.test(name)) throw new Error(`'${name}' is not a secret name (a-z, 0-9, '-' and '_')`);
  const folder = await dataFolder(dataDir, "settings");
  const path = join(folder, name);
  for (let attempt = 0; attempt < 2; attempt++) {
    const stored = await readFile(path, "utf8").then(
      (text) => text.trim(),
      (error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT") return undefined;
        throw error;
      },
    );
    if (stored !== undefined && stored.length >= MIN_SECRET_LENGTH) {
      await chmod(path, 0o600);
      return stored;
    }
    const secret = randomBytes(32).toString("base64url");
    const handle = await open(path, stored === undefined ? "wx" : "w", 0o600).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "EEXIST") return undefined;
      throw error;
    });
    if (!handle) continue;
    try {
      await handle.writeFile(secret);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await chmod(path, 0o600);
    return secret;
  }
  throw new Error(`could not read or create the secret ${path}`);
}
