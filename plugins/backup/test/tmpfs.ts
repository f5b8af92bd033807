import { execFileSync } from "node:child_process";
import { mkdtempSync, rmdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// A real file system that fills up, for the disk-full tests here and in packages/vellum/test:
// a tmpfs of a given size. Mounting needs the privilege to (root in CI); tests probe it first and
// are skipped, saying so, where it is missing.

/** Mounts a tmpfs of `bytes` (mode 0700) on a new directory; returns it, or throws with mount's message. */
export function mountTmpfs(bytes: number): string {
  const dir = mkdtempSync(join(tmpdir(), "vellum-tmpfs-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${bytes},mode=0700`, "tmpfs", dir], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    return dir;
  } catch (error) {
    rmdirSync(dir);
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(stderr || (error instanceof Error ? error.message : String(error)));
  }
}

export function unmountTmpfs(dir: string): void {
  execFileSync("umount", [dir]);
  rmdirSync(dir);
}

/** Why this process cannot mount a tmpfs, or undefined when it can (probed with a small one). */
export function tmpfsUnavailable(): string | undefined {
  try {
    unmountTmpfs(mountTmpfs(1024 * 1024));
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}
