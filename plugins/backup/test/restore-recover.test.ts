import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJournal, recoverRestores, restoreGeneration, restoreNames, RestoreError } from "../src/index.js";
import { kek, PASSPHRASE, writeArchive } from "./support.js";

const NOW = Date.UTC(2026, 1, 3, 12, 0, 0);
const HOUR = 60 * 60 * 1000;

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "vellum-recover-"));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A case directory with `data` as the data dir's name (not created). */
async function caseDir(): Promise<{ dir: string; dest: string }> {
  const dir = await mkdtemp(join(root, "case-"));
  return { dir, dest: join(dir, "data") };
}

/** A staging directory as a crashed restore left it, holding one file, last changed at `mtimeMs`. */
async function staging(dir: string, name: string, mtimeMs = NOW): Promise<string> {
  const path = join(dir, name);
  await mkdir(join(path, "settings"), { recursive: true, mode: 0o700 });
  await writeFile(join(path, "settings", "site.json"), "restored", { mode: 0o600 });
  const seconds = mtimeMs / 1000;
  await utimes(path, seconds, seconds);
  return path;
}

async function journal(dest: string, stagingPath: string, replaced: string | null): Promise<void> {
  const { journal: path } = restoreNames(dest);
  await writeFile(path, JSON.stringify({ phase: "swap", staging: stagingPath, dest, replaced }));
}

const now = () => NOW;

describe("recoverRestores (§3.2 step 10)", () => {
  it("journal present and dest missing (crash after (a), before (b)): rolls forward", async () => {
    const { dir, dest } = await caseDir();
    const replaced = `${dest}.replaced-20260203-115959`;
    await mkdir(replaced);
    await writeFile(join(replaced, "old.txt"), "previous");
    const stage = await staging(dir, ".data.restore-20260203-115959-AbC123");
    await journal(dest, stage, replaced);

    const report = await recoverRestores(dest, { now });
    expect(report).toEqual({ rolledForward: stage, journalDeleted: true, removed: [] });
    expect(await readFile(join(dest, "settings", "site.json"), "utf8")).toBe("restored");
    expect((await readdir(dir)).sort()).toEqual(["data", "data.replaced-20260203-115959"]);
    expect(await readFile(join(replaced, "old.txt"), "utf8")).toBe("previous");
    // Idempotent: nothing more to do.
    expect(await recoverRestores(dest, { now })).toEqual({ rolledForward: null, journalDeleted: false, removed: [] });
  });

  it("journal present and dest exists (crash before (a), or after (b)): deletes the journal only", async () => {
    const { dir, dest } = await caseDir();
    await mkdir(dest);
    await writeFile(join(dest, "live.txt"), "live");
    const stage = await staging(dir, ".data.restore-20260203-115959-xYz789");
    await journal(dest, stage, `${dest}.replaced-20260203-115959`);

    const report = await recoverRestores(dest, { now });
    expect(report).toEqual({ rolledForward: null, journalDeleted: true, removed: [] });
    expect(await readJournal(restoreNames(dest))).toBeUndefined();
    expect(await readFile(join(dest, "live.txt"), "utf8")).toBe("live");
    // The staging directory is young: it stays until it is stale.
    expect((await readdir(dir)).sort()).toEqual([".data.restore-20260203-115959-xYz789", "data"]);
    const later = await recoverRestores(dest, { now: () => NOW + 2 * HOUR });
    expect(later.removed).toEqual([stage]);
    expect(await readdir(dir)).toEqual(["data"]);
  });

  it("removes stale staging dirs and journal temp files (older than 1 h, no journal), nothing else", async () => {
    const { dir, dest } = await caseDir();
    await mkdir(dest);
    const old = await staging(dir, ".data.restore-20260203-090000-aaaaaa", NOW - 2 * HOUR);
    await staging(dir, ".data.restore-20260203-114500-bbbbbb", NOW - 15 * 60 * 1000);
    // Another data dir's staging, an unrelated hidden dir, and a file with a staging-like name.
    await staging(dir, ".data.restore-foo.restore-20260203-090000-cccccc", NOW - 2 * HOUR);
    await staging(dir, ".other.restore-20260203-090000-dddddd", NOW - 2 * HOUR);
    await writeFile(join(dir, ".data.restore-20260203-090000-eeeeee"), "a file, not a staging dir");
    await utimes(join(dir, ".data.restore-20260203-090000-eeeeee"), (NOW - 2 * HOUR) / 1000, (NOW - 2 * HOUR) / 1000);
    const temp = join(dir, ".data.restore-journal.json.tmp-0123456789ab");
    await writeFile(temp, "{");
    await utimes(temp, (NOW - 2 * HOUR) / 1000, (NOW - 2 * HOUR) / 1000);

    const report = await recoverRestores(dest, { now });
    expect(report.removed.sort()).toEqual([old, temp].sort());
    expect((await readdir(dir)).sort()).toEqual([
      ".data.restore-20260203-090000-eeeeee",
      ".data.restore-20260203-114500-bbbbbb",
      ".data.restore-foo.restore-20260203-090000-cccccc",
      ".other.restore-20260203-090000-dddddd",
      "data",
    ]);
  });

  it("a journal that names paths outside this data dir, or a vanished staging dir: E_RECOVERY, nothing changed", async () => {
    const { dir, dest } = await caseDir();
    const outside = await staging(root, ".data.restore-20260203-115959-out000");
    await journal(dest, outside, null);
    const error = await recoverRestores(dest, { now }).catch((e: unknown) => e);
    expect(RestoreError.is(error, "E_RECOVERY")).toBe(true);
    expect((error as RestoreError).exitCode).toBe(4);
    expect(await readdir(dir)).toEqual([".data.restore-journal.json"]);
    await rm(outside, { recursive: true });

    await journal(dest, join(dir, ".data.restore-20260203-115959-gone00"), null);
    const gone = await recoverRestores(dest, { now }).catch((e: unknown) => e);
    expect(RestoreError.is(gone, "E_RECOVERY")).toBe(true);
    expect(await readdir(dir)).toEqual([".data.restore-journal.json"]);

    await writeFile(restoreNames(dest).journal, "not json");
    expect(RestoreError.is(await recoverRestores(dest).catch((e: unknown) => e), "E_RECOVERY")).toBe(true);
  });

  it("restoreGeneration runs recovery first, then restores over the rolled-forward dir", async () => {
    const { dir, dest } = await caseDir();
    const file = join(dir, "gen.vpbk");
    const memory = new Database(":memory:");
    memory.exec("CREATE TABLE t (x); INSERT INTO t VALUES (1)");
    const image = memory.serialize();
    memory.close();
    const { archive } = await writeArchive(async (w) => {
      await w.dir("db");
      await w.sqliteDb(image);
    });
    await writeFile(file, archive);
    const stage = await staging(dir, ".data.restore-20260203-115959-rOlLfw");
    await journal(dest, stage, null);

    const result = await restoreGeneration({ file, dest, passphrase: PASSPHRASE, deriveKek: kek, now });
    expect(result.recovery).toEqual({ rolledForward: stage, journalDeleted: true, removed: [] });
    expect(result.replaced).toBe(`${dest}.replaced-20260203-120000`);
    expect(await readFile(join(result.replaced as string, "settings", "site.json"), "utf8")).toBe("restored");
    expect(await readFile(join(dest, "db", "vellum.sqlite"))).toEqual(image);
    expect((await readdir(dir)).sort()).toEqual(["data", "data.replaced-20260203-120000", "gen.vpbk"]);
  });
});
