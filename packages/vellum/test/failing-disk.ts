import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// A real disk that fails under a running service: an ext4 file system in an image file on a loop
// device, then shut down with ext4's EXT4_IOC_SHUTDOWN ioctl. From then on every read and write of
// a file on it fails with EIO, as when a disk dies or its cable comes out. It needs root, a free
// loop device, mkfs.ext4 and python3 (Node has no ioctl); tests probe for them first and are skipped,
// saying so, where one is missing.

/** `_IOR('X', 125, __u32)`; its argument 2 (`EXT4_GOING_FLAGS_NOLOGFLUSH`) cuts the disk off at once. */
const SHUTDOWN = `
import fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.ioctl(fd, 0x8004587D, struct.pack("I", 2))
`;

export interface FailingDisk {
  /** Where the file system is mounted (mode 0700). */
  dir: string;
  /** Shuts the file system down: every later read or write under `dir` fails with EIO. */
  fail(): void;
  /** Unmounts it and removes the loop device and the image. */
  remove(): void;
}

const run = (command: string, args: string[]) =>
  execFileSync(command, args, { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" }).trim();

/** Mounts a new ext4 file system of `bytes` on a new directory; throws with the failing command's message. */
export function mountFailingDisk(bytes: number): FailingDisk {
  const base = mkdtempSync(join(tmpdir(), "vellum-failing-disk-"));
  const image = join(base, "disk.img");
  const dir = join(base, "mnt");
  let device: string | undefined;
  let mounted = false;
  const remove = () => {
    if (mounted) run("umount", [dir]);
    mounted = false;
    if (device) run("losetup", ["-d", device]);
    device = undefined;
    rmSync(base, { recursive: true, force: true });
  };
  try {
    writeFileSync(image, "");
    truncateSync(image, bytes);
    device = run("losetup", ["-f", "--show", image]);
    run("mkfs.ext4", ["-q", device]);
    mkdirSync(dir);
    run("mount", [device, dir]);
    mounted = true;
    chmodSync(dir, 0o700);
    return { dir, fail: () => run("python3", ["-c", SHUTDOWN, dir]), remove };
  } catch (error) {
    remove();
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(stderr || (error instanceof Error ? error.message : String(error)));
  }
}

/** Why this process cannot make a failing disk, or undefined when it can (probed with a small one). */
export function failingDiskUnavailable(): string | undefined {
  try {
    const disk = mountFailingDisk(8 * 1024 * 1024);
    try {
      disk.fail();
    } finally {
      disk.remove();
    }
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}
