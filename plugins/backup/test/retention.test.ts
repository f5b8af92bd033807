import { copyFile, mkdir, mkdtemp, readdir, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generationName, type GenerationResult, writeGeneration } from "../src/generation/index.js";
import {
  applyRetention,
  DEFAULT_KEEP_MS,
  type GenerationInfo,
  listGenerations,
  planRetention,
} from "../src/policy/index.js";
import { BackupError } from "../src/snapshot/index.js";
import { kek, PASSPHRASE, TEST_KDF } from "./support.js";

const DAY = 24 * 60 * 60 * 1000;
const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);

/** A plain GenerationInfo `ageMs` before NOW (valid name unless `nameMatches` is false). */
function info(ageMs: number, nameMatches = true): GenerationInfo {
  const createdMs = NOW - ageMs;
  const name = nameMatches ? generationName(createdMs) : `vk-renamed-${createdMs}.vpbk`;
  return { path: `/backups/${name}`, name, id: createdMs.toString(16), createdMs, bytes: 1000, nameMatches };
}

const names = (list: GenerationInfo[]) => list.map((g) => g.name);

describe("planRetention (§4, §5 test 32)", () => {
  it("keeps the newest 24 of 30 generations aged 31–40 days and deletes 6", () => {
    const all = Array.from({ length: 30 }, (_, i) => info(31 * DAY + i * 0.3 * DAY));
    const plan = planRetention(all, { now: NOW });
    expect(names(plan.keep)).toEqual(names(all.slice(0, 24)));
    expect(names(plan.remove)).toEqual(names(all.slice(24)));
    expect(plan.suspicious).toEqual([]);
    expect(plan.futureDated).toEqual([]);
  });

  it("keeps all of 5 generations that are all older than 30 days", () => {
    const all = Array.from({ length: 5 }, (_, i) => info(100 * DAY + i * DAY));
    const plan = planRetention(all, { now: NOW });
    expect(plan.keep).toHaveLength(5);
    expect(plan.remove).toEqual([]);
  });

  it("keeps all of 9,000 generations within 30 days, whatever their order", () => {
    const all = Array.from({ length: 9000 }, (_, i) => info(i * 4.5 * 60_000 + 1));
    const shuffled = [...all].sort((a, b) => (a.id.slice(-3) < b.id.slice(-3) ? -1 : 1));
    const plan = planRetention(shuffled, { now: NOW });
    expect(plan.keep).toHaveLength(9000);
    expect(plan.remove).toEqual([]);
    expect(names(plan.keep)).toEqual(names(all));
  });

  it("deletes only when rank > keepCount AND age > keepMs (both boundaries inclusive of keeping)", () => {
    const exactly = info(DEFAULT_KEEP_MS);
    const older = info(DEFAULT_KEEP_MS + 1);
    const newer = Array.from({ length: 24 }, (_, i) => info(i * 1000));
    const plan = planRetention([...newer, exactly, older], { now: NOW });
    expect(names(plan.keep)).toEqual(names([...newer, exactly]));
    expect(names(plan.remove)).toEqual([older.name]);

    // Rank 24 exactly and very old: kept.
    const old = Array.from({ length: 24 }, (_, i) => info(400 * DAY + i));
    expect(planRetention(old, { now: NOW }).remove).toEqual([]);
    expect(names(planRetention(old, { now: NOW, keepCount: 23 }).remove)).toEqual([old[23]?.name]);
    expect(planRetention(old, { now: NOW, keepCount: 1, keepMs: 500 * DAY }).remove).toEqual([]);
  });

  it("keeps a future-dated generation, counts it toward the 24 and reports it", () => {
    const future = info(-3 * DAY);
    const old = Array.from({ length: 30 }, (_, i) => info(31 * DAY + i * DAY));
    const plan = planRetention([...old, future], { now: NOW });
    expect(names(plan.futureDated)).toEqual([future.name]);
    expect(names(plan.keep)).toEqual(names([future, ...old.slice(0, 23)]));
    expect(names(plan.remove)).toEqual(names(old.slice(23)));
  });

  it("keeps a name/header mismatch, reports it and does not rank it", () => {
    const renamed = info(90 * DAY, false);
    const old = Array.from({ length: 30 }, (_, i) => info(31 * DAY + i * DAY));
    const plan = planRetention([renamed, ...old], { now: NOW });
    expect(names(plan.suspicious)).toEqual([renamed.name]);
    expect(names(plan.keep)).toEqual(names([...old.slice(0, 24), renamed]));
    expect(names(plan.remove)).toEqual(names(old.slice(24)));
  });

  it("never deletes the newest fully verified generation, even behind many failed newer ones", () => {
    const old = Array.from({ length: 30 }, (_, i) => info(31 * DAY + i * DAY));
    const verified = old[27] as GenerationInfo;
    const plan = planRetention(old, { now: NOW, protect: verified.name });
    expect(names(plan.keep)).toEqual(names([...old.slice(0, 24), verified]));
    expect(names(plan.remove)).toEqual(names([...old.slice(24, 27), ...old.slice(28)]));
  });

  it("refuses nonsense options", () => {
    for (const bad of [{ keepCount: 0 }, { keepCount: 1.5 }, { keepMs: -1 }, { keepMs: Number.NaN }]) {
      expect(() => planRetention([], { now: NOW, ...bad })).toThrow(BackupError);
    }
    expect(() => planRetention([], { now: Number.NaN })).toThrow(/wall clock/);
  });
});

describe("listGenerations and applyRetention on real generations (§5 tests 14, 32)", () => {
  let root: string;
  let dataDir: string;
  let target: string;
  let old: GenerationResult;
  let g: GenerationResult[];
  let renamedName: string;

  /** Writes a generation labelled about `createdMs` (the writer's clock is shifted there). */
  async function writeAt(createdMs: number): Promise<GenerationResult> {
    const offset = createdMs - Date.now();
    return writeGeneration({
      dataDir,
      target,
      passphrase: PASSPHRASE,
      kdf: TEST_KDF,
      deriveKek: kek,
      now: () => Date.now() + offset,
    });
  }

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "vellum-retention-"));
    dataDir = join(root, "data");
    target = join(root, "target");
    await mkdir(join(dataDir, "db"), { recursive: true });
    await mkdir(join(dataDir, "media"));
    await mkdir(target);
    const db = new Database(join(dataDir, "db", "vellum.sqlite"));
    db.exec("CREATE TABLE t (x)");
    db.close();
    await writeFile(join(dataDir, "media", "a.txt"), "a");

    old = await writeAt(NOW - 45 * DAY);
    g = [];
    for (const age of [40, 39, 38, 2]) g.push(await writeAt(NOW - age * DAY));
    // §5 test 14: the oldest authentic generation renamed to a newer name.
    renamedName = generationName(NOW - DAY);
    await rename(old.path, join(target, renamedName));

    // Things that are not generations, or not readable ones.
    await writeFile(join(target, "README.txt"), "not ours");
    await mkdir(join(target, "vk-dir.vpbk"));
    await symlink(g[3]?.path as string, join(target, generationName(NOW)));
    await writeFile(join(target, "vk-20250101-000000.vpbk"), "garbage, not a header".repeat(20));
    await writeFile(join(target, "vk-short.vpbk"), "short");
    await writeFile(join(target, ".vk-20260601-120000.vpbk.partial-abc123"), "partial");
    await writeFile(join(target, ".vellum-backup.lock"), "{}");
    await copyFile(g[3]?.path as string, join(target, "vk-copy.vpbk"));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("lists generations from their headers, newest first, and sorts out the rest", async () => {
    const listing = await listGenerations(target);
    const [g1, g2, g3, g4] = g as [GenerationResult, GenerationResult, GenerationResult, GenerationResult];
    expect(listing.generations.map((x) => [x.name, x.id, x.createdMs, x.bytes, x.nameMatches])).toEqual([
      ["vk-copy.vpbk", g4.id, g4.createdMs, g4.bytes, false],
      [g4.name, g4.id, g4.createdMs, g4.bytes, true],
      [g3.name, g3.id, g3.createdMs, g3.bytes, true],
      [g2.name, g2.id, g2.createdMs, g2.bytes, true],
      [g1.name, g1.id, g1.createdMs, g1.bytes, true],
      [renamedName, old.id, old.createdMs, old.bytes, false],
    ]);
    expect(listing.generations[1]?.path).toBe(g4.path);
    expect(listing.foreign).toEqual(["README.txt", generationName(NOW), "vk-dir.vpbk"]);
    expect(listing.unreadable.map((u) => [u.name, u.reason.slice(0, 8)])).toEqual([
      ["vk-20250101-000000.vpbk", "E_MAGIC:"],
      ["vk-short.vpbk", "E_SHORT:"],
    ]);
    expect(listing.partials.map((p) => [p.name, p.bytes])).toEqual([[".vk-20260601-120000.vpbk.partial-abc123", 7]]);
  });

  it("refuses a directory it cannot read", async () => {
    await expect(listGenerations(join(root, "missing"))).rejects.toMatchObject({ code: "E_TARGET" });
  });

  it("does not remove a planned file replaced by another generation", async () => {
    const dir = await mkdtemp(join(root, "swap-"));
    const [g1, g2, g3] = g as [GenerationResult, GenerationResult, GenerationResult];
    await copyFile(g3.path, join(dir, g3.name));
    await copyFile(g1.path, join(dir, g1.name));
    const plan = planRetention((await listGenerations(dir)).generations, { now: NOW, keepCount: 1 });
    expect(names(plan.remove)).toEqual([g1.name]);
    await copyFile(g2.path, join(dir, g1.name)); // another generation under the planned name
    expect(await applyRetention(dir, plan)).toEqual([]);
    expect((await readdir(dir)).sort()).toEqual([g1.name, g3.name].sort());
  });

  it("removes only the planned generations, never a renamed one, and leaves the rest alone", async () => {
    const before = (await readdir(target)).sort();
    const { generations } = await listGenerations(target);
    expect(planRetention(generations, { now: NOW }).remove).toEqual([]);

    const plan = planRetention(generations, { now: NOW, keepCount: 2 });
    const [g1, g2, g3, g4] = g as [GenerationResult, GenerationResult, GenerationResult, GenerationResult];
    expect(names(plan.suspicious)).toEqual(["vk-copy.vpbk", renamedName]);
    expect(names(plan.remove)).toEqual([g2.name, g1.name]);

    // g1 is swapped for a symlink to g3 after planning: not removed, not followed.
    await rm(g1.path);
    await symlink(g3.path, g1.path);
    expect(await applyRetention(target, plan)).toEqual([g2.name]);
    expect((await readdir(target)).sort()).toEqual(before.filter((n) => n !== g2.name));
    const after = await listGenerations(target);
    expect(names(after.generations)).toEqual(["vk-copy.vpbk", g4.name, g3.name, renamedName]);
    expect(after.foreign).toContain(g1.name);
  });
});
