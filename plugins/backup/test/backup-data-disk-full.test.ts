import { mkdir, mkdtemp, readdir, rm, statfs, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyVpbk } from "../src/format/index.js";
import { runBackup, type BackupScope } from "../src/operations/backup.js";
import type { BackupOptions } from "../src/options.js";
import { minimalDataDir, PASSPHRASE, TEST_KDF, unlock } from "./support.js";
import { mountTmpfs, tmpfsUnavailable, unmountTmpfs } from "./tmpfs.js";

// A scheduled backup while the data disk is full (the data dir on a tmpfs of 8 MiB that a file
// fills), the backup target elsewhere with room. The generation is published and checked; only
// its records in <data>/backup cannot be written. The run used to fail there ("backup failed:
// E_NO_SPACE: ENOSPC …", though the generation was in the target) before retention, so the
// target gained a generation every interval for as long as the data disk stayed full.

const MiB = 1024 * 1024;

const mountFailure = tmpfsUnavailable();
if (mountFailure !== undefined) {
  console.warn(`skipping the backup on a full data disk test: cannot mount a tmpfs (${mountFailure})`);
}

let disk: string;
let dataDir: string;
let root: string;
let target: string;

beforeAll(async () => {
  if (mountFailure !== undefined) return;
  disk = mountTmpfs(8 * MiB);
  dataDir = join(disk, "data");
  await minimalDataDir(dataDir);
  root = await mkdtemp(join(tmpdir(), "vellum-data-full-target-"));
  target = join(root, "target");
  await mkdir(target);
});

afterAll(async () => {
  if (mountFailure !== undefined) return;
  unmountTmpfs(disk);
  await rm(root, { recursive: true, force: true });
});

function scope(warnings: string[]): BackupScope {
  const options = { target, passphrase: PASSPHRASE, kdf: TEST_KDF, off: false, keepGenerations: 1, keepMs: 0 };
  const logger = { warn: (line: string) => warnings.push(line), info: () => undefined, error: () => undefined };
  return {
    dataDir,
    databasePath: undefined,
    options: options as unknown as BackupOptions,
    logger: logger as unknown as BackupScope["logger"],
  };
}

describe.skipIf(mountFailure !== undefined)("a backup while the data disk is full", () => {
  it("publishes the generation, says its records could not be written, and still applies retention", async () => {
    const first = await runBackup(scope([]));
    const { bavail, bsize } = await statfs(disk);
    await writeFile(join(disk, "filler"), Buffer.alloc(bavail * bsize));

    const warnings: string[] = [];
    const second = await runBackup(scope(warnings));
    expect(second.removed).toEqual([first.generation.name]);
    expect(await readdir(target)).toEqual([second.generation.name]);
    await expect(verifyVpbk(join(target, second.generation.name), unlock())).resolves.toMatchObject({
      generationId: second.generation.id,
    });
    // The generation's record fails; the last-backup record, rewritten in place of the one before, may fit.
    expect(warnings[0]).toMatch(
      new RegExp(
        `^backup: ${second.generation.name} was published, but its record .* could not be written \\(E_NO_SPACE`,
      ),
    );
    for (const line of warnings) expect(line).toMatch(/was published, but .* could not be written \(E_NO_SPACE/);
  });
});
