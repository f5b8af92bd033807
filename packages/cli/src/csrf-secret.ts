import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

export function csrfSecretPath(dataDir: string): string {
  return join(dataDir, "settings", "csrf-secret");
}

/**
 * The HMAC secret for CSRF cookies, kept in `<dataDir>/settings/csrf-secret` with mode 0600 so
 * tokens survive restarts. An existing file (also one an embedded kernel wrote) is tightened to 0600.
 */
export async function ensureCsrfSecret(dataDir: string): Promise<string> {
  const path = csrfSecretPath(dataDir);
  try {
    const stored = (await readFile(path, "utf8")).trim();
    if (stored.length >= 32) {
      await chmod(path, 0o600);
      return stored;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const secret = randomBytes(32).toString("base64url");
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await writeFile(path, secret, { mode: 0o600 });
  await chmod(path, 0o600);
  return secret;
}
