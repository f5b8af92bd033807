import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeFailure } from "../src/failure.js";
import { verifyVpbk } from "../src/format/index.js";
import { writeGeneration, type WriteGenerationOptions } from "../src/generation/index.js";
import { BackupError } from "../src/snapshot/index.js";
import { bytes, kek, minimalDataDir, PASSPHRASE, TEST_KDF, unlock } from "./support.js";
import { mountTmpfs, tmpfsUnavailable, unmountTmpfs } from "./tmpfs.js";

// A backup target that fills up while a generation is written (a tmpfs of 1 MiB, a data dir with
// 2 MiB of incompressible media): the generation fails with E_NO_SPACE naming the target (it
// failed as "E_IO: The operation was aborted", which did not say why), nothing partial is left,
// and the generation already there still verifies.

const MiB = 1024 * 1024;

const mountFailure = tmpfsUnavailable();
if (mountFailure !== undefined) {
  console.warn(`skipping the full backup target test: cannot mount a tmpfs (${mountFailure})`);
}

let target: string;
let root: string;
let dataDir: string;

beforeAll(async () => {
  if (mountFailure !== undefined) return;
  target = mountTmpfs(MiB);
  root = await mkdtemp(join(tmpdir(), "vellum-target-full-"));
  dataDir = join(root, "data");
  await minimalDataDir(dataDir);
});

afterAll(async () => {
  if (mountFailure !== undefined) return;
  unmountTmpfs(target);
  await rm(root, { recursive: true, force: true });
});

const options = (): WriteGenerationOptions => ({
  dataDir,
  target,
  passphrase: PASSPHRASE,
  kdf: TEST_KDF,
  deriveKek: kek,
});

describe.skipIf(mountFailure !== undefined)("a generation written into a full backup target", () => {
  it("fails with E_NO_SPACE naming the target, leaves nothing partial, and keeps the generation there", async () => {
    const first = await writeGeneration(options());
    await mkdir(join(dataDir, "media"), { recursive: true });
    await writeFile(join(dataDir, "media", "large.bin"), bytes(2 * MiB, 7));

    const error = await writeGeneration(options()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BackupError);
    expect((error as BackupError).code).toBe("E_NO_SPACE");
    expect(describeFailure(error)).toMatchObject({
      code: "E_NO_SPACE",
      exitCode: 4,
      message: expect.stringContaining(`the backup target ${target} is full`),
    });
    expect(await readdir(target)).toEqual([first.name]);
    await expect(verifyVpbk(join(target, first.name), unlock())).resolves.toMatchObject({
      generationId: first.id,
    });
  });
});
