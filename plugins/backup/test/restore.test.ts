import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { acquireFileLock } from "@vellum/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkSpace,
  RestoreError,
  restoreExitCode,
  restoreGeneration,
  type RestoreOptions,
  spaceHeadroom,
  utcStamp,
  VpbkError,
} from "../src/index.js";
import { bytes, CREATED_MS, kek, minimalBody, PASSPHRASE, writeArchive } from "./support.js";

const NOW = Date.UTC(2026, 1, 3, 4, 5, 6);
const STAMP = "20260203-040506";

let root: string;
let db: Buffer;
let good: Buffer;

/** The sample tree: what a generation holds, with the mtimes the restore must set. */
const FILES: { path: string; content: () => Buffer; mtimeMs: number }[] = [
  { path: "media/2026/a-b.jpg", content: () => bytes(100_000, 2), mtimeMs: 1_700_000_000_123 },
  { path: "media/2026/ab/big.bin", content: () => bytes(150_000, 3), mtimeMs: 1_700_000_001_000 },
  { path: "media/2026/ab/empty.txt", content: () => Buffer.alloc(0), mtimeMs: 1_700_000_002_000 },
  { path: "settings/site.json", content: () => Buffer.from('{"title":"Vellum"}'), mtimeMs: 1_600_000_000_000 },
];
const DIRS = ["db", "media", "media/2026", "media/2026/ab", "settings"];

/** A real SQLite image in WAL mode, as `serialize()` of the live database gives it. */
async function sqliteImage(dir: string): Promise<Buffer> {
  const live = new Database(join(dir, "live.sqlite"));
  live.pragma("journal_mode = WAL");
  live.exec("CREATE TABLE articles (id INTEGER PRIMARY KEY, title TEXT NOT NULL)");
  const insert = live.prepare("INSERT INTO articles (title) VALUES (?)");
  for (let i = 0; i < 200; i += 1) insert.run(`article ${i}`);
  const image = live.serialize();
  live.close();
  return image;
}

async function sampleArchive(): Promise<Buffer> {
  const { archive } = await writeArchive(async (w) => {
    await w.dir("db");
    await w.sqliteDb(db, { mtimeMs: CREATED_MS - 5 });
    await w.dir("media");
    await w.dir("media/2026");
    await w.file("media/2026/a-b.jpg", FILES[0]!.content(), { mtimeMs: FILES[0]!.mtimeMs, mode: 0o644 });
    await w.dir("media/2026/ab");
    for (const f of FILES.slice(1, 3)) await w.file(f.path, f.content(), { mtimeMs: f.mtimeMs });
    await w.dir("settings");
    await w.file(FILES[3]!.path, FILES[3]!.content(), { mtimeMs: FILES[3]!.mtimeMs });
  });
  return archive;
}

/** Everything under `dir`: type, mode, size, mtime and a content hash, by relative path. */
async function tree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (rel: string) => {
    for (const name of (await readdir(join(dir, rel))).sort()) {
      const path = rel === "" ? name : `${rel}/${name}`;
      const st = await lstat(join(dir, path));
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isDirectory()) {
        out[path] = `dir ${mode}`;
        await walk(path);
      } else if (st.isSymbolicLink()) {
        out[path] = `link ${await readlink(join(dir, path))}`;
      } else {
        const hash = createHash("sha256")
          .update(await readFile(join(dir, path)))
          .digest("hex");
        out[path] = `file ${mode} ${st.size} ${Math.round(st.mtimeMs)} ${hash}`;
      }
    }
  };
  await walk("");
  return out;
}

/** A fresh case directory holding the archive bytes as `gen.vpbk`. */
async function caseDir(archive: Buffer = good): Promise<{ dir: string; file: string; dest: string }> {
  const dir = await mkdtemp(join(root, "case-"));
  const file = join(dir, "gen.vpbk");
  await writeFile(file, archive);
  return { dir, file, dest: join(dir, "data") };
}

/** An existing data dir with some content of its own. */
async function oldDataDir(dest: string): Promise<void> {
  await mkdir(join(dest, "media"), { recursive: true, mode: 0o755 });
  await writeFile(join(dest, "media", "old.txt"), "the previous data dir");
  await writeFile(join(dest, "notes.txt"), "kept as it was");
}

function options(file: string, dest: string, extra: Partial<RestoreOptions> = {}): RestoreOptions {
  return { file, dest, passphrase: PASSPHRASE, deriveKek: kek, now: () => NOW, ...extra };
}

async function failure(run: Promise<unknown>): Promise<VpbkError | RestoreError> {
  try {
    await run;
  } catch (error) {
    if (error instanceof VpbkError || error instanceof RestoreError) return error;
    throw error;
  }
  throw new Error("expected the restore to fail");
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "vellum-restore-"));
  db = await sqliteImage(root);
  good = await sampleArchive();
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("restoreGeneration: round trip", () => {
  it("restores into a fresh dest: files, modes, mtimes, the database and the marker", async () => {
    const { dir, file, dest } = await caseDir();
    const lines: string[] = [];
    const result = await restoreGeneration(options(file, dest, { log: (line) => lines.push(line) }));

    expect(result.dest).toBe(dest);
    expect(result.replaced).toBeNull();
    expect(result.createdAt).toBe(new Date(CREATED_MS).toISOString());
    expect(result.generationId).toMatch(/^[0-9a-f]{32}$/);
    expect(lines.at(-2)).toBe(`restored generation ${result.generationId} (created ${result.createdAt}) into ${dest}`);
    expect(lines.at(-1)).toBe("no previous data dir");

    // Beside dest: the archive and dest, no staging directory, no journal.
    expect((await readdir(dir)).sort()).toEqual(["data", "gen.vpbk"]);

    const restored = await tree(dest);
    for (const d of [...DIRS, ".vellum"]) expect(restored[d]).toBe("dir 700");
    for (const f of FILES) {
      const content = f.content();
      const hash = createHash("sha256").update(content).digest("hex");
      expect(restored[f.path]).toBe(`file 600 ${content.length} ${f.mtimeMs} ${hash}`);
    }
    // The database: the same bytes, no -wal or -shm left, integrity ok, the rows there.
    expect(await readFile(join(dest, "db/vellum.sqlite"))).toEqual(db);
    expect(Object.keys(restored).filter((p) => p.startsWith("db/"))).toEqual(["db/vellum.sqlite"]);
    expect(restored["db/vellum.sqlite"]).toMatch(/^file 600 /);
    const check = new Database(join(dest, "db/vellum.sqlite"), { readonly: true });
    expect(check.pragma("integrity_check", { simple: true })).toBe("ok");
    expect(check.prepare("SELECT count(*) AS n FROM articles").get()).toEqual({ n: 200 });
    check.close();

    const marker = JSON.parse(await readFile(join(dest, ".vellum/restored-from.json"), "utf8")) as unknown;
    expect(marker).toEqual({
      generationId: result.generationId,
      createdAt: result.createdAt,
      restoredAt: new Date(NOW).toISOString(),
      file,
      contentRoot: result.summary.contentRoot,
    });
    expect(restored[".vellum/restored-from.json"]).toMatch(/^file 600 /);
    expect(Object.keys(restored).sort()).toEqual(
      [...DIRS, ".vellum", ".vellum/restored-from.json", "db/vellum.sqlite", ...FILES.map((f) => f.path)].sort(),
    );
  });

  it("keeps an existing dest as <dest>.replaced-<stamp>, then -1, and returns its path", async () => {
    const { dir, file, dest } = await caseDir();
    await oldDataDir(dest);
    const before = await tree(dest);

    const first = await restoreGeneration(options(file, dest));
    expect(first.replaced).toBe(`${dest}.replaced-${STAMP}`);
    expect(await tree(first.replaced as string)).toEqual(before);
    expect(await readFile(join(dest, "settings/site.json"), "utf8")).toBe('{"title":"Vellum"}');

    // Same second again: the name is taken, so -1; nothing is replaced.
    const firstRestore = await tree(dest);
    const second = await restoreGeneration(options(file, dest));
    expect(second.replaced).toBe(`${dest}.replaced-${STAMP}-1`);
    expect(await tree(second.replaced as string)).toEqual(firstRestore);
    expect(await tree(first.replaced as string)).toEqual(before);
    expect((await readdir(dir)).sort()).toEqual([
      "data",
      `data.replaced-${STAMP}`,
      `data.replaced-${STAMP}-1`,
      "gen.vpbk",
    ]);
  });

  it("unlocks with the previous passphrase after a rotation; a wrong one is exit 3", async () => {
    const { file, dest } = await caseDir();
    const wrong = await failure(restoreGeneration(options(file, dest, { passphrase: "not the passphrase at all" })));
    expect(wrong.code).toBe("E_UNLOCK");
    expect(wrong.exitCode).toBe(3);
    const result = await restoreGeneration(
      options(file, dest, { passphrase: "the new passphrase, rotated", previousPassphrase: PASSPHRASE }),
    );
    expect(result.summary.unlockedWith).toBe("previousPassphrase");
  });
});

describe("restoreGeneration: failures before the swap leave dest untouched", () => {
  async function refused(archive: Buffer, extra: Partial<RestoreOptions> = {}) {
    const { dir, file, dest } = await caseDir(archive);
    await oldDataDir(dest);
    const before = await tree(dir);
    const error = await failure(restoreGeneration(options(file, dest, extra)));
    // Byte for byte (and mode and mtime) the same; no staging dir, journal or replaced dir.
    expect(await tree(dir)).toEqual(before);
    return error;
  }

  it("a byte flipped mid-file: integrity failure, exit 1", async () => {
    const tampered = Buffer.from(good);
    const at = Math.floor(tampered.length / 2);
    tampered[at] = (tampered[at] as number) ^ 0x01;
    const error = await refused(tampered);
    expect(error).toBeInstanceOf(VpbkError);
    expect(error.code).toBe("E_FRAME_AUTH");
    expect(error.exitCode).toBe(1);
  });

  it("a truncated archive: integrity failure, exit 1", async () => {
    for (const length of [good.length - 1, Math.floor(good.length * 0.75)]) {
      const error = await refused(good.subarray(0, length));
      expect(error).toBeInstanceOf(VpbkError);
      expect(error.exitCode).toBe(1);
    }
  });

  it("a database that fails integrity_check: E_DB_INTEGRITY, exit 1", async () => {
    const { archive } = await writeArchive((w) => minimalBody(w, 8192));
    const error = await refused(archive);
    expect(error.code).toBe("E_DB_INTEGRITY");
    expect(error.exitCode).toBe(1);
  });

  it("a database the caller's check refuses (newer migrations): E_DB_VERSION, exit 5", async () => {
    const error = await refused(good, {
      checkDb: (opened) => {
        expect(opened.prepare("SELECT count(*) AS n FROM articles").get()).toEqual({ n: 200 });
        throw new Error("migrations newer than this binary");
      },
    });
    expect(error.code).toBe("E_DB_VERSION");
    expect(error.exitCode).toBe(5);
  });

  it("not enough space: E_NO_SPACE, exit 4, before any content", async () => {
    const error = await refused(good, { freeBytes: async () => good.length + spaceHeadroom(good.length) - 1 });
    expect(error.code).toBe("E_NO_SPACE");
    expect(error.exitCode).toBe(4);
    await expect(checkSpace(root, good.length, async () => good.length + 64 * 1024 * 1024)).resolves.toBeUndefined();
    expect(spaceHeadroom(10 * 1024 ** 3)).toBe(Math.ceil(10 * 1024 ** 3 * 0.05));
  });
});

describe("restoreGeneration: preconditions (exit 5, nothing written)", () => {
  it("dest is a symlink", async () => {
    const { dir, file, dest } = await caseDir();
    const real = join(dir, "real");
    await oldDataDir(real);
    await symlink(real, dest);
    const before = await tree(dir);
    const error = await failure(restoreGeneration(options(file, dest)));
    expect(error.code).toBe("E_PRECONDITION");
    expect(error.exitCode).toBe(5);
    expect(restoreExitCode(error)).toBe(5);
    expect(await tree(dir)).toEqual(before);
  });

  it("a live Vellum holds <dest>/.vellum.lock", async () => {
    const { dir, file, dest } = await caseDir();
    await oldDataDir(dest);
    await writeFile(join(dest, ".vellum.lock"), JSON.stringify({ pid: process.pid, startedAt: NOW }));
    const before = await tree(dir);
    const error = await failure(restoreGeneration(options(file, dest)));
    expect(error.code).toBe("E_LOCKED");
    expect(error.exitCode).toBe(5);
    expect(error.message).toContain("stop the service first");
    expect(await tree(dir)).toEqual(before);
  });

  it("a process's own lock file holds <dest> while the process runs, whatever pid its name or .vellum.lock gives", async () => {
    const { dir, file, dest } = await caseDir();
    await oldDataDir(dest);
    // Both pids are of processes gone here, as a serving container's are to a restore in another
    // container: only the lock the operating system holds for the running process tells.
    const dead = spawnSync(process.execPath, ["-e", ""]).pid;
    await writeFile(join(dest, ".vellum.lock"), JSON.stringify({ pid: dead, startedAt: NOW }));
    const serving = await acquireFileLock(join(dest, `.vellum.lock.${dead}.01M8SERVING`));
    try {
      const before = await tree(dir);
      const error = await failure(restoreGeneration(options(file, dest)));
      expect(error.code).toBe("E_LOCKED");
      expect(error.message).toContain(`a running Vellum (pid ${dead}) holds the data dir`);
      expect(await tree(dir)).toEqual(before);
    } finally {
      serving.release();
    }
    // The lock file a process that crashed left behind is free: it keeps nothing out.
    await writeFile(join(dest, `.vellum.lock.${dead}.01M8CRASHED`), "");
    const result = await restoreGeneration(options(file, dest));
    expect(result.replaced).toBe(`${dest}.replaced-${STAMP}`);
  });

  it("a lock that cannot be understood is refused; a stale lock (dead pid) is not", async () => {
    const { dir, file, dest } = await caseDir();
    await oldDataDir(dest);
    await writeFile(join(dest, ".vellum.lock"), "???");
    const before = await tree(dir);
    expect((await failure(restoreGeneration(options(file, dest)))).code).toBe("E_LOCKED");
    expect(await tree(dir)).toEqual(before);

    const dead = spawnSync(process.execPath, ["-e", ""]).pid;
    await writeFile(join(dest, ".vellum.lock"), `${dead}\n`);
    const lines: string[] = [];
    const result = await restoreGeneration(options(file, dest, { log: (line) => lines.push(line) }));
    expect(result.replaced).toBe(`${dest}.replaced-${STAMP}`);
    expect(lines[0]).toContain(`stale lock (pid ${dead}`);
  });

  it("the parent of dest is missing, or dest is a file", async () => {
    const { dir, file } = await caseDir();
    const before = await tree(dir);
    const missing = await failure(restoreGeneration(options(file, join(dir, "nope", "data"))));
    expect(missing.code).toBe("E_PRECONDITION");
    await writeFile(join(dir, "plain"), "x");
    const notDir = await failure(restoreGeneration(options(file, join(dir, "plain"))));
    expect(notDir.code).toBe("E_PRECONDITION");
    expect(await tree(dir)).toEqual({ ...before, plain: expect.stringMatching(/^file /) as unknown as string });
  });

  it("names the staging and replaced directories in UTC", () => {
    expect(utcStamp(NOW)).toBe(STAMP);
    expect(utcStamp(Date.UTC(2026, 11, 31, 23, 59, 59, 999))).toBe("20261231-235959");
  });
});
