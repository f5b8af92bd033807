import { lstat, mkdir, mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recoverRestores, restoreGeneration, restoreNames, type RestoreStep, utcStamp } from "../src/index.js";
import { killAtStep, runChild, treeOf } from "./harness.js";
import { bytes, kek, PASSPHRASE, writeArchive } from "./support.js";

// backup-format.md §5 test 26: a restore SIGKILLed at 20 points, from the staging directory's
// creation to after the swap, then crash recovery (§3.2 step 10) and a fresh restore.

const NOW = Date.UTC(2026, 2, 4, 5, 6, 7);
const HOUR = 60 * 60 * 1000;

type Tree = Record<string, string>;
let root: string;
let cache: string; // the children's transpiled sources
let archive: string;
let oldTree: Tree; // the live data dir before the restore
let restoredTree: Tree; // what a complete restore of the archive leaves in dest
let steps: string[]; // the steps of a complete restore in a child, in order

/**
 * The kill points, as [step, occurrence]. While streaming: the empty staging directory, chunks of
 * the database and of a 200 KB file (a partial file in staging), records in place. After the
 * FINAL frame: the archive complete, post-checks done, the journal durable. Then between 8a and 8b,
 * after 8b, after 8c.
 */
const POINTS: [RestoreStep, number][] = [
  ["staging", 1],
  ["record", 1],
  ["content", 1],
  ["content", 2],
  ["record", 2],
  ["record", 3],
  ["content", 3],
  ["content", 4],
  ["content", 5],
  ["record", 4],
  ["content", 7],
  ["record", 5],
  ["record", 6],
  ["record", 7],
  ["complete", 1],
  ["checked", 1],
  ["journal", 1],
  ["swap-a", 1],
  ["swap-b", 1],
  ["done", 1],
];

/** A real SQLite image, as the writer's `serialize()` gives it. */
function sqliteImage(): Buffer {
  const db = new Database(":memory:");
  db.exec("CREATE TABLE note (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
  const insert = db.prepare("INSERT INTO note (body) VALUES (?)");
  for (let i = 0; i < 2000; i += 1) insert.run(`note ${i} ${"x".repeat(40)}`);
  const image = db.serialize();
  db.close();
  return image;
}

/** The live data dir the restore replaces. */
async function oldDataDir(dest: string): Promise<void> {
  await mkdir(join(dest, "media"), { recursive: true });
  await writeFile(join(dest, "media", "old.bin"), bytes(30_000, 5));
  await writeFile(join(dest, "notes.txt"), "the previous data dir");
  for (const file of ["media/old.bin", "notes.txt"]) await utimes(join(dest, file), 1_600_000_000, 1_600_000_000);
}

/** A case directory (the parent of dest) with the old data dir in it. */
async function caseDir(): Promise<{ dir: string; dest: string }> {
  const dir = await mkdtemp(join(root, "case-"));
  const dest = join(dir, "data");
  await oldDataDir(dest);
  return { dir, dest };
}

function childArgs(dest: string): string[] {
  return ["restore", archive, dest, PASSPHRASE, String(NOW)];
}

/** The tree a restore left in `dest`; the marker's mtime is when it was written, so it is left out. */
async function restoredTreeOf(dest: string): Promise<Tree> {
  const tree = await treeOf(dest);
  const marker = tree[".vellum/restored-from.json"];
  if (marker !== undefined) tree[".vellum/restored-from.json"] = marker.replace(/^(file \S+ \S+) \S+/, "$1");
  return tree;
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "vellum-restore-crash-"));
  archive = join(root, "gen.vpbk");
  const image = sqliteImage();
  const { archive: bytesOut } = await writeArchive(async (w) => {
    await w.dir("db");
    await w.sqliteDb(image, { mtimeMs: NOW - 60_000 });
    await w.dir("media");
    await w.file("media/big.bin", bytes(200_000, 1), { mtimeMs: 1_700_000_000_000 });
    await w.file("media/small.txt", Buffer.from("a small file"), { mtimeMs: 1_700_000_001_000 });
    await w.dir("settings");
    await w.file("settings/site.json", Buffer.from('{"title":"Vellum"}'), { mtimeMs: 1_700_000_002_000 });
  });
  await writeFile(archive, bytesOut);

  // A complete restore in a child: what dest holds after it, and the steps on the way.
  cache = join(root, "ts-cache");
  const { dest } = await caseDir();
  oldTree = await treeOf(dest);
  const { output } = await runChild(childArgs(dest), cache);
  steps = output.split("\n").flatMap((line) => (line.startsWith("step ") ? [line.slice(5)] : []));
  restoredTree = await restoredTreeOf(dest);
  expect(await treeOf(`${dest}.replaced-${utcStamp(NOW)}`)).toEqual(oldTree);
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("restore killed at 20 points (§5 test 26)", () => {
  it("a complete restore passes every kill point, in this order", ({ expect }) => {
    const positions = POINTS.map(([step, n]) => {
      let seen = 0;
      return steps.findIndex((s) => s === step && ++seen === n);
    });
    expect(positions).not.toContain(-1);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(new Set(POINTS.map(([step, n]) => `${step} ${n}`)).size).toBe(20);
  });

  it.concurrent.for(POINTS)("SIGKILL at %s %i", async ([step, n], { expect }) => {
    const { dir, dest } = await caseDir();
    const names = restoreNames(dest);
    const replaced = `${dest}.replaced-${utcStamp(NOW)}`;
    await killAtStep(childArgs(dest), step, n, cache);
    const left = await readdir(dir);
    const staging = left.filter((name) => /^\.data\.restore-\d{8}-\d{6}-/.test(name));

    if (step === "swap-a" || step === "swap-b" || step === "done") {
      // The old data dir is already aside; the staging directory is dest, or becomes it.
      expect(staging).toHaveLength(step === "swap-a" ? 1 : 0);
      expect(await treeOf(replaced)).toEqual(oldTree);
      expect(await exists(dest)).toBe(step !== "swap-a");
      expect(await exists(names.journal)).toBe(step !== "done");
      const report = await recoverRestores(dest);
      expect(report).toEqual({
        rolledForward: step === "swap-a" ? join(dir, staging[0] as string) : null,
        journalDeleted: step !== "done",
        removed: [],
      });
      expect(await restoredTreeOf(dest)).toEqual(restoredTree);
      expect(await treeOf(replaced)).toEqual(oldTree);
      expect((await readdir(dir)).sort()).toEqual(["data", `data.replaced-${utcStamp(NOW)}`]);
      return;
    }

    // Before 8a: the live data dir is untouched; the staging directory (and, once step 7 ran, the
    // journal) is what the crash left.
    expect(await treeOf(dest)).toEqual(oldTree);
    expect(staging).toHaveLength(1);
    expect((await readdir(join(dir, staging[0] as string))).length > 0).toBe(step !== "staging");
    expect(await exists(names.journal)).toBe(step === "journal");
    expect(await exists(replaced)).toBe(false);

    // The next start: a journal with dest present is deleted; the staging directory stays until
    // it is older than 1 h, then goes.
    const young = await recoverRestores(dest);
    expect(young).toEqual({ rolledForward: null, journalDeleted: step === "journal", removed: [] });
    expect(await treeOf(dest)).toEqual(oldTree);
    const stale = await recoverRestores(dest, { now: () => Date.now() + 2 * HOUR });
    expect(stale.removed).toEqual([join(dir, staging[0] as string)]);
    expect(await readdir(dir)).toEqual(["data"]);
    expect(await treeOf(dest)).toEqual(oldTree);

    // And a restore after the crash completes as if nothing had happened.
    const result = await restoreGeneration({
      file: archive,
      dest,
      passphrase: PASSPHRASE,
      deriveKek: kek,
      now: () => NOW,
    });
    expect(result.replaced).toBe(replaced);
    expect(await restoredTreeOf(dest)).toEqual(restoredTree);
    expect(await treeOf(replaced)).toEqual(oldTree);
  });
});
