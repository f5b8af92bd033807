import { randomBytes } from "node:crypto";
import { chmod, link, mkdir, open, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

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
 * base64url) with mode 0600 and publishes it with `publishSecretFile`, so two processes starting
 * together agree on one. An existing file is tightened to 0600; one too short to be a secret is
 * replaced.
 */
export async function loadOrCreateSecret(dataDir: string, name: string): Promise<string> {
  if (!FOLDER.test(name)) throw new Error(`'${name}' is not a secret name (a-z, 0-9, '-' and '_')`);
  const path = join(await dataFolder(dataDir, "settings"), name);
  const stored = await readSecret(path);
  if (stored !== undefined && stored.length >= MIN_SECRET_LENGTH) {
    await chmod(path, 0o600);
    return stored;
  }
  const secret = randomBytes(32).toString("base64url");
  if (stored === undefined) return publishSecretFile(path, secret);
  await writeDurably(path, secret, "replace");
  return secret;
}

/**
 * Publishes `content` as file `path` (mode 0600) unless the name exists, and returns what the file
 * holds then, trimmed: this content, or what another process published first. The content is
 * written and synced under a temporary name, then linked, which fails when the name exists; the
 * folder is synced after. No reader sees a half-written file, and neither a full disk nor a crash
 * leaves an empty one that a later start would take for the secret.
 */
export async function publishSecretFile(path: string, content: string): Promise<string> {
  try {
    await writeDurably(path, content, "once");
    return content.trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    const published = await readSecret(path);
    if (published === undefined) throw error;
    return published;
  }
}

/** Writes `content` to `path` through a synced temporary file: linked (`once`: EEXIST when `path` exists) or renamed over it. */
async function writeDurably(path: string, content: string, mode: "once" | "replace"): Promise<void> {
  const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    await writeFile(temporary, content, { mode: 0o600, flush: true });
    if (mode === "once") await link(temporary, path);
    else await rename(temporary, path);
  } finally {
    await rm(temporary, { force: true });
  }
  const folder = await open(dirname(path), "r");
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

async function readSecret(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, "utf8")).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}
