import { mkdir, mkdtemp, readdir, rm, stat, statfs, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RestoreError, restoreGeneration, type RestoreOptions, type RestoreStep, VpbkError } from "../src/index.js";
import { treeOf } from "./harness.js";
import { bytes, kek, PASSPHRASE, writeArchive } from "./support.js";
import { mountTmpfs, tmpfsUnavailable, unmountTmpfs } from "./tmpfs.js";

// backup-format.md §5 test 25: a restore onto a real filesystem too small for the generation (a
// tmpfs sized to half its data). The space pre-flight refuses it (exit 4) before any content is
// written; with the pre-flight bypassed, the stream hits ENOSPC (exit 4), the staging directory
// is removed and the live data dir is byte for byte what it was.

const MiB = 1024 * 1024;
const FILES = 4; // media files of 1 MiB: the generation holds about 4 MiB of data
const TMPFS_BYTES = (FILES * MiB) / 2;
const NOW = Date.UTC(2026, 3, 5, 6, 7, 8);

// Whether this process may mount at all, probed now so the tests can be skipped; the tmpfs the
// tests use is mounted in beforeAll, which runs only when one of them runs.
const mountFailure = tmpfsUnavailable();
if (mountFailure !== undefined) {
  console.warn(`skipping the disk-full restore tests: cannot mount a tmpfs (${mountFailure})`);
}

let mountPoint: string;
let dest: string; // the live data dir, on the tmpfs
let root: string; // outside the tmpfs: the archive
let file: string;

beforeAll(async () => {
  mountPoint = mountTmpfs(TMPFS_BYTES);
  dest = join(mountPoint, "data");
  root = await mkdtemp(join(tmpdir(), "vellum-disk-full-archive-"));
  file = join(root, "gen.vpbk");
  const db = new Database(":memory:");
  db.exec("CREATE TABLE note (body TEXT NOT NULL)");
  db.prepare("INSERT INTO note (body) VALUES (?)").run("restored");
  const image = db.serialize();
  db.close();
  const { archive } = await writeArchive(async (w) => {
    await w.dir("db");
    await w.sqliteDb(image);
    await w.dir("media");
    for (let i = 0; i < FILES; i += 1) await w.file(`media/${i}.bin`, bytes(MiB, i), { mtimeMs: NOW });
  });
  await writeFile(file, archive);
  // The live data dir, on the small filesystem.
  await mkdir(join(dest, "media"), { recursive: true });
  await writeFile(join(dest, "media", "live.bin"), bytes(100_000, 99));
  await writeFile(join(dest, "notes.txt"), "the live data dir");
  for (const path of ["media/live.bin", "notes.txt"]) await utimes(join(dest, path), 1_600_000_000, 1_600_000_000);
});

afterAll(async () => {
  unmountTmpfs(mountPoint);
  await rm(root, { recursive: true, force: true });
});

/** The bytes an unprivileged process may still write on the tmpfs. */
async function free(): Promise<number> {
  const fs = await statfs(mountPoint);
  return fs.bavail * fs.bsize;
}

/** Runs a restore into `dest`; returns the error it failed with and the steps it passed. */
async function failedRestore(extra: Partial<RestoreOptions> = {}) {
  const steps: RestoreStep[] = [];
  const error = await restoreGeneration({
    file,
    dest,
    passphrase: PASSPHRASE,
    deriveKek: kek,
    now: () => NOW,
    onStep: (step) => steps.push(step),
    ...extra,
  }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RestoreError);
  return { error: error as RestoreError, steps };
}

describe("restore onto a filesystem with half the room it needs (§5 test 25)", () => {
  it.skipIf(mountFailure !== undefined)("the tmpfs holds half the generation's data", async () => {
    const { size } = await stat(file);
    expect(size).toBeGreaterThan(FILES * MiB);
    const fs = await statfs(mountPoint);
    expect(fs.blocks * fs.bsize).toBe(TMPFS_BYTES);
    expect(await free()).toBeLessThan(size / 2);
  });

  it.skipIf(mountFailure !== undefined)("the space pre-flight refuses with exit 4 and writes nothing", async () => {
    const before = await treeOf(mountPoint);
    const freeBefore = await free();
    const { error, steps } = await failedRestore();
    expect(error.code).toBe("E_NO_SPACE");
    expect(error.exitCode).toBe(4);
    expect(error.message).toMatch(/not enough space/);
    // Refused right after the staging directory was made: no record, no content.
    expect(steps).toEqual(["staging"]);
    expect(await treeOf(mountPoint)).toEqual(before);
    expect(await readdir(mountPoint)).toEqual(["data"]);
    expect(await free()).toBe(freeBefore);
  });

  it.skipIf(mountFailure !== undefined)(
    "with the pre-flight bypassed, ENOSPC mid-stream is exit 4, staging is removed, the live dir is untouched",
    async () => {
      const before = await treeOf(mountPoint);
      const freeBefore = await free();
      const { error, steps } = await failedRestore({ freeBytes: async () => Number.MAX_SAFE_INTEGER });
      expect(error.code).toBe("E_NO_SPACE");
      expect(error.exitCode).toBe(4);
      expect((error.cause as { code?: string }).code).toBe("ENOSPC");
      expect(error.cause).not.toBeInstanceOf(VpbkError);
      // It failed mid-stream: content was written, the archive never completed.
      expect(steps.filter((step) => step === "content").length).toBeGreaterThan(1);
      expect(steps).not.toContain("complete");
      expect(await treeOf(mountPoint)).toEqual(before);
      expect(await readdir(mountPoint)).toEqual(["data"]);
      expect(await free()).toBe(freeBefore);
    },
  );
});
