import { closeSync, openSync, readdirSync, writeSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openVpbk, verifyVpbk } from "../src/format/index.js";
import { LOCK_NAME, writeGeneration, type WriteGenerationOptions } from "../src/generation/index.js";
import { BackupError } from "../src/snapshot/index.js";
import { bytes, kek, PASSPHRASE, TEST_KDF } from "./support.js";

let root: string;
let dataDir: string;
let target: string;
const MARKER = "plaintext-marker-5b1f0e";
const big = bytes(2 * 1024 * 1024 + 123, 11); // streamed (above the small-file size)

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "vellum-generation-"));
  dataDir = join(root, "data");
  target = join(root, "target");
  await mkdir(join(dataDir, "db"), { recursive: true });
  await mkdir(target);
  const db = new Database(join(dataDir, "db", "vellum.sqlite"));
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE note (body TEXT)");
  db.prepare("INSERT INTO note (body) VALUES (?)").run(MARKER);
  db.pragma("user_version = 3");
  db.close();
  await mkdir(join(dataDir, "media", "ab"), { recursive: true });
  await writeFile(join(dataDir, "media", "ab", "small.webp"), `small ${MARKER}`);
  await writeFile(join(dataDir, "media", "big.bin"), big);
  await mkdir(join(dataDir, "settings"));
  await writeFile(join(dataDir, "settings", "api-key"), `key ${MARKER}`);
  await symlink("/etc/passwd", join(dataDir, "media", "passwd"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function options(extra: Partial<WriteGenerationOptions> = {}): WriteGenerationOptions {
  return { dataDir, target, passphrase: PASSPHRASE, kdf: TEST_KDF, deriveKek: kek, ...extra };
}

async function failure(promise: Promise<unknown>): Promise<BackupError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BackupError);
  return error as BackupError;
}

describe("writeGeneration", () => {
  it("writes a generation that verifies and holds the db image, the files and END", async () => {
    const warnings: string[] = [];
    const result = await writeGeneration(options({ warn: (m) => warnings.push(m) }));
    expect(result.name).toMatch(/^vk-\d{8}-\d{6}\.vpbk$/);
    const iso = new Date(result.createdMs).toISOString();
    expect(result.name).toBe(
      `vk-${iso.slice(0, 10).replaceAll("-", "")}-${iso.slice(11, 19).replaceAll(":", "")}.vpbk`,
    );
    expect(result.skipped).toEqual([{ path: "media/passwd", reason: "symlink" }]);
    expect(warnings.join("\n")).toMatch(/media\/passwd/);

    const summary = await verifyVpbk(result.path, { passphrase: PASSPHRASE, deriveKek: kek });
    expect(summary.contentRoot).toBe(result.contentRoot);
    expect(summary.generationId).toBe(result.id);
    expect(summary.createdMs).toBe(result.createdMs);
    expect(summary.archiveBytes).toBe(result.bytes);

    const archive = await openVpbk(result.path, { passphrase: PASSPHRASE, deriveKek: kek });
    const seen: string[] = [];
    const contents = new Map<string, Buffer>();
    let manifest: Record<string, unknown> | undefined;
    let end: Record<string, unknown> | undefined;
    for await (const record of archive.records) {
      if (record.type === "manifest") manifest = record.manifest as Record<string, unknown>;
      else if (record.type === "end") end = record.end as Record<string, unknown>;
      else {
        seen.push(`${record.type} ${record.path}`);
        if (record.type !== "dir") {
          const chunks: Buffer[] = [];
          for await (const chunk of record.content) chunks.push(chunk);
          contents.set(record.path, Buffer.concat(chunks));
        }
      }
    }
    expect(seen).toEqual([
      "dir db",
      "sqlite-db db/vellum.sqlite",
      "dir media",
      "dir media/ab",
      "file media/ab/small.webp",
      "file media/big.bin",
      "dir settings",
      "file settings/api-key",
    ]);
    expect(contents.get("media/big.bin")?.equals(big)).toBe(true);
    expect(contents.get("settings/api-key")?.toString()).toBe(`key ${MARKER}`);
    const image = Buffer.from(contents.get("db/vellum.sqlite") ?? Buffer.alloc(0));
    image[18] = 1;
    image[19] = 1;
    const db = new Database(image);
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    expect(db.prepare("SELECT body FROM note").pluck().get()).toBe(MARKER);
    db.close();

    expect(manifest).toMatchObject({
      format: "vellum-backup",
      formatVersion: 1,
      app: { name: "vellum" },
      createdAt: new Date(result.createdMs).toISOString(),
      host: hostname(),
      dbSchemaVersion: 3,
      snapshot: { method: "sqlite-serialize", t0Ms: result.createdMs },
    });
    expect(typeof manifest?.dataDirId).toBe("string");
    expect(end).toMatchObject({ entries: 8, skipped: [{ path: "media/passwd", reason: "symlink" }] });
    expect(end?.walkStart).toBeGreaterThanOrEqual(result.createdMs);
    expect(end?.walkEnd).toBe(result.sealedMs);

    // No plaintext on disk: the target holds only the generation, whose bytes hold no marker, and
    // the data dir holds only what was there (the database and its WAL companions).
    expect(await readdir(target)).toEqual([result.name]);
    expect((await readFile(result.path)).includes(MARKER)).toBe(false);
    expect((await readdir(join(dataDir, "db"))).filter((n) => !/^vellum\.sqlite(-wal|-shm)?$/.test(n))).toEqual([]);
    expect((await readdir(dataDir)).sort()).toEqual(["db", "media", "settings"]);
  });

  it("gives two generations in the same second names one second apart", async () => {
    const [a, b] = await Promise.all([writeGeneration(options()), writeGeneration(options())]);
    const seconds = [a, b].map((g) => Math.floor(g.createdMs / 1000)).sort();
    expect(seconds[1]).toBe((seconds[0] as number) + 1);
    expect(a.name).not.toBe(b.name);
    expect((await readdir(target)).sort()).toEqual([a.name, b.name].sort());
  });

  it("refuses while the clock is behind the newest generation's label", async () => {
    const first = await writeGeneration(options());
    const error = await failure(writeGeneration(options({ now: () => first.createdMs - 10 * 60_000 })));
    expect(error.code).toBe("E_CLOCK_BEHIND");
  });

  it("is not paused by a stray file named like a future generation: labels come from authentic headers", async () => {
    await writeFile(join(target, "vk-20990101-000000.vpbk"), "not a generation");
    await symlink(join(root, "nowhere"), join(target, "vk-20980101-000000.vpbk"));
    const result = await writeGeneration(options());
    expect(result.name).not.toBe("vk-20990101-000000.vpbk");
    expect((await readdir(target)).sort()).toEqual([result.name, "vk-20980101-000000.vpbk", "vk-20990101-000000.vpbk"]);
  });

  it("refuses a target equal to, inside or containing the data dir (through a symlink too)", async () => {
    await symlink(join(dataDir, "media"), join(root, "via-link"));
    for (const bad of [dataDir, join(dataDir, "media"), root, join(root, "via-link")]) {
      const error = await failure(writeGeneration(options({ target: bad })));
      expect(error.code).toBe("E_TARGET");
    }
    expect(await readdir(join(dataDir, "media"))).not.toContain(LOCK_NAME);
  });

  it("refuses an empty passphrase", async () => {
    expect((await failure(writeGeneration(options({ passphrase: "" })))).code).toBe("E_USAGE");
  });

  it("refuses while another live writer holds the lock, and takes over a stale one", async () => {
    const lock = join(target, LOCK_NAME);
    await writeFile(lock, JSON.stringify({ pid: process.pid, startedMs: Date.now(), host: hostname() }));
    expect((await failure(writeGeneration(options()))).code).toBe("E_LOCKED");
    expect(await readdir(target)).toEqual([LOCK_NAME]);

    // A dead pid: the lock is stale.
    await writeFile(lock, JSON.stringify({ pid: 2 ** 22 + 12_345, startedMs: Date.now(), host: hostname() }));
    const first = await writeGeneration(options());
    expect(await readdir(target)).toEqual([first.name]);

    // A live pid, but older than 2 h: stale too.
    await writeFile(lock, JSON.stringify({ pid: process.pid, startedMs: Date.now() - 3 * 3600_000, host: hostname() }));
    const second = await writeGeneration(options());
    expect((await readdir(target)).sort()).toEqual([first.name, second.name].sort());
  });

  it("fails the generation when a file keeps changing (E_UNSTABLE_FILE) and leaves nothing behind", async () => {
    let n = 0;
    const error = await failure(
      writeGeneration(
        options({
          fileHooks: {
            afterRead: async (path) => {
              if (path === "settings/api-key") await writeFile(join(dataDir, path), `changed ${(n += 1)}`);
            },
          },
        }),
      ),
    );
    expect(error.code).toBe("E_UNSTABLE_FILE");
    expect(error.path).toBe("settings/api-key");
    expect(await readdir(target)).toEqual([]);
  });

  it("publishes nothing when the written file fails its read-after-write check (E_VERIFY)", async () => {
    let damaged = false;
    const error = await failure(
      writeGeneration(
        options({
          // Once the first MiB is out, a byte of the first frame changes on disk behind the writer.
          onProgress: (written) => {
            if (damaged || written < 1024 * 1024) return;
            const partial = readdirSync(target).find((name) => name.includes(".partial-"));
            if (partial === undefined) throw new Error("no partial file while writing");
            const fd = openSync(join(target, partial), "r+");
            try {
              writeSync(fd, Buffer.from([0x5a]), 0, 1, 1000);
            } finally {
              closeSync(fd);
            }
            damaged = true;
          },
        }),
      ),
    );
    expect(damaged).toBe(true);
    expect(error.code).toBe("E_VERIFY");
    expect(error.message).toMatch(/failed its read-after-write check: .*E_FRAME_AUTH/);
    expect(await readdir(target)).toEqual([]);
  });

  it("retries a file that changed once, and fails a large file that changes while copied", async () => {
    let changed = false;
    const ok = await writeGeneration(
      options({
        fileHooks: {
          afterRead: async (path) => {
            if (path === "media/ab/small.webp" && !changed) {
              changed = true;
              await writeFile(join(dataDir, path), "second version");
            }
          },
        },
      }),
    );
    const archive = await openVpbk(ok.path, { passphrase: PASSPHRASE, deriveKek: kek });
    for await (const record of archive.records) {
      if (record.type === "file" && record.path === "media/ab/small.webp") {
        const chunks: Buffer[] = [];
        for await (const chunk of record.content) chunks.push(chunk);
        expect(Buffer.concat(chunks).toString()).toBe("second version");
      }
    }

    const error = await failure(
      writeGeneration(
        options({
          fileHooks: {
            afterRead: async (path, _attempt, pass) => {
              if (path === "media/big.bin" && pass === "copy") {
                const other = Buffer.from(big);
                other[0] = (other[0] as number) ^ 1;
                await writeFile(join(dataDir, path), other);
              }
            },
          },
        }),
      ),
    );
    expect(error.code).toBe("E_UNSTABLE_FILE");
    expect(await readdir(target)).toEqual([ok.name]);
  });

  it("retries a large file that changed before any of its bytes were written (its first read)", async () => {
    const second = bytes(big.length + 4096, 12);
    const checks: number[] = [];
    const result = await writeGeneration(
      options({
        fileHooks: {
          afterRead: async (path, attempt, pass) => {
            if (path !== "media/big.bin" || pass !== "check") return;
            checks.push(attempt);
            if (attempt === 1) await writeFile(join(dataDir, path), second);
          },
        },
      }),
    );
    expect(checks).toEqual([1, 2]);
    const archive = await openVpbk(result.path, { passphrase: PASSPHRASE, deriveKek: kek });
    for await (const record of archive.records) {
      if (record.type === "file" && record.path === "media/big.bin") {
        const chunks: Buffer[] = [];
        for await (const chunk of record.content) chunks.push(chunk);
        expect(Buffer.concat(chunks).equals(second)).toBe(true);
      }
    }
    expect(archive.summary?.fileBytes).toBe(result.fileBytes);
  });

  it("removes *.partial-* files older than 1 h after a generation", async () => {
    const old = join(target, ".vk-20200101-000000.vpbk.partial-abcdef");
    const fresh = join(target, ".vk-20200101-000001.vpbk.partial-abcdef");
    await writeFile(old, "x");
    await writeFile(fresh, "x");
    const past = new Date(Date.now() - 2 * 3600_000);
    await utimes(old, past, past);
    const result = await writeGeneration(options());
    expect((await readdir(target)).sort()).toEqual([fresh.slice(target.length + 1), result.name].sort());
  });
});
