import { cp, mkdir, mkdtemp, open, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEADER_BYTES, openVpbk, verifyVpbk, VpbkError } from "../src/format/index.js";
import { generationName, type GenerationResult, writeGeneration } from "../src/generation/index.js";
import { listGenerations, parseAtTime, type PointInTime, selectAt } from "../src/policy/index.js";
import { BackupError } from "../src/snapshot/index.js";
import { kek, PASSPHRASE, TEST_KDF, unlock } from "./support.js";

const HOUR = 60 * 60 * 1000;
const MINUTE = 60 * 1000;
const START = Date.UTC(2026, 2, 1, 0, 0, 0);

describe("parseAtTime", () => {
  it("reads RFC 3339 with Z or a numeric offset", () => {
    expect(parseAtTime("2026-03-01T10:00:00Z")).toBe(Date.UTC(2026, 2, 1, 10));
    expect(parseAtTime("2026-03-01t10:00:00z")).toBe(Date.UTC(2026, 2, 1, 10));
    expect(parseAtTime("2026-03-01 12:30:00+02:30")).toBe(Date.UTC(2026, 2, 1, 10));
    expect(parseAtTime("2026-03-01T04:00:00-06:00")).toBe(Date.UTC(2026, 2, 1, 10));
    expect(parseAtTime("2026-03-01T10:00:00.5Z")).toBe(Date.UTC(2026, 2, 1, 10, 0, 0, 500));
    // Finer than a millisecond is truncated: "at or before" stays exact on whole-ms times.
    expect(parseAtTime("2026-03-01T10:00:00.123999999Z")).toBe(Date.UTC(2026, 2, 1, 10, 0, 0, 123));
    expect(parseAtTime("2024-02-29T00:00:00Z")).toBe(Date.UTC(2024, 1, 29));
    expect(parseAtTime("0050-01-01T00:00:00Z")).toBe(new Date("0050-01-01T00:00:00Z").getTime());
  });

  it("rejects a time without an offset as ambiguous (§5 test 33)", () => {
    for (const text of ["2026-03-01T10:00:00", "2026-03-01 10:00:00.250"]) {
      let error: unknown;
      try {
        parseAtTime(text);
      } catch (e) {
        error = e;
      }
      expect(BackupError.is(error, "E_USAGE")).toBe(true);
      expect((error as BackupError).exitCode).toBe(2);
      expect((error as BackupError).message).toMatch(/ambiguous: give an offset or Z/);
    }
  });

  it("rejects malformed and impossible times", () => {
    for (const text of [
      "",
      "yesterday",
      "2026-03-01",
      "2026-3-1T10:00:00Z",
      "2026-03-01T10:00Z",
      "2026-02-29T00:00:00Z",
      "2026-04-31T00:00:00Z",
      "2026-13-01T00:00:00Z",
      "2026-00-01T00:00:00Z",
      "2026-03-01T24:00:00Z",
      "2026-03-01T10:60:00Z",
      "2026-03-01T10:00:60Z",
      "2026-03-01T10:00:00+24:00",
      "2026-03-01T10:00:00+0200",
      "2026-03-01T10:00:00.Z",
    ]) {
      expect(() => parseAtTime(text), text).toThrow(BackupError);
    }
  });
});

describe("selectAt on real generations (§4 PITR, §5 tests 14 and 33)", () => {
  let root: string;
  let dataDir: string;
  let gens: string;
  /** The oldest generation, renamed to a newer name afterwards (§5 test 14). */
  let old: GenerationResult;
  let a: GenerationResult;
  let b: GenerationResult;
  /** media/a.txt was rewritten during c's walk, 30 min after c's T0. */
  let c: GenerationResult;
  let renamedName: string;

  /** Writes a generation at about `createdMs`; the walk takes `walkMs` (and `change` runs in it). */
  async function writeAt(createdMs: number, walkMs: number, change?: () => Promise<void>): Promise<GenerationResult> {
    let offset = createdMs - Date.now();
    let walked = false;
    return writeGeneration({
      dataDir,
      target: gens,
      passphrase: PASSPHRASE,
      kdf: TEST_KDF,
      deriveKek: kek,
      now: () => Date.now() + offset,
      fileHooks: {
        afterRead: async (path) => {
          if (path !== "media/a.txt" || walked) return;
          walked = true;
          offset += walkMs;
          await change?.();
        },
      },
    });
  }

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "vellum-pitr-"));
    dataDir = join(root, "data");
    gens = join(root, "gens");
    await mkdir(join(dataDir, "db"), { recursive: true });
    await mkdir(join(dataDir, "media"));
    await mkdir(gens);
    const db = new Database(join(dataDir, "db", "vellum.sqlite"));
    db.exec("CREATE TABLE t (x)");
    db.close();
    await writeFile(join(dataDir, "media", "a.txt"), "version 1");

    old = await writeAt(START - 24 * HOUR, 1000);
    a = await writeAt(START, 2000);
    b = await writeAt(START + HOUR, 10 * MINUTE);
    c = await writeAt(START + 2 * HOUR, 30 * MINUTE, () => writeFile(join(dataDir, "media", "a.txt"), "version 2"));
    renamedName = generationName(START + 90 * MINUTE);
    await rename(old.path, join(gens, renamedName));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /** selectAt with the real verifier; what it verified and warned is collected. */
  async function select(dir: string, atMs: number, how = unlock()) {
    const verified: string[] = [];
    const warnings: string[] = [];
    const run = selectAt(dir, atMs, {
      unlock: how,
      verify: async (path) => {
        verified.push(path.slice(dir.length + 1));
        await verifyVpbk(path, how);
      },
      warn: (line) => warnings.push(line),
      now: START + 3 * HOUR,
    });
    const result = await run.then(
      (value): { ok: true; value: PointInTime } => ({ ok: true, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    return { result, verified, warnings };
  }

  async function chosen(dir: string, atMs: number) {
    const { result, verified, warnings } = await select(dir, atMs);
    if (!result.ok) throw result.error;
    return { ...result.value, verified, warnings };
  }

  async function refused(dir: string, atMs: number, how = unlock()) {
    const { result, warnings, verified } = await select(dir, atMs, how);
    expect(result.ok).toBe(false);
    return { error: (result as { error: unknown }).error, warnings, verified };
  }

  /** A copy of the generations to damage. */
  async function copy(): Promise<string> {
    const dir = await mkdtemp(join(root, "copy-"));
    await cp(gens, dir, { recursive: true });
    return dir;
  }

  async function flip(path: string, offset: number): Promise<void> {
    const handle = await open(path, "r+");
    try {
      const byte = Buffer.alloc(1);
      await handle.read(byte, 0, 1, offset);
      byte[0] = (byte[0] as number) ^ 0x40;
      await handle.write(byte, 0, 1, offset);
    } finally {
      await handle.close();
    }
  }

  it("set up the generations it needs", async () => {
    expect(b.sealedMs - b.createdMs).toBeGreaterThanOrEqual(10 * MINUTE);
    expect(c.sealedMs - c.createdMs).toBeGreaterThanOrEqual(30 * MINUTE);
    const listing = await listGenerations(gens);
    expect(listing.generations.map((g) => [g.name, g.nameMatches])).toEqual([
      [c.name, true],
      [b.name, true],
      [a.name, true],
      [renamedName, false],
    ]);
    // c holds the state written 30 min after its T0.
    const archive = await openVpbk(c.path, unlock());
    for await (const record of archive.records) {
      if (record.type === "file") {
        const chunks: Buffer[] = [];
        for await (const chunk of record.content) chunks.push(chunk);
        expect(Buffer.concat(chunks).toString()).toBe("version 2");
      }
    }
  });

  it("selects a generation when T equals its sealed_ms exactly", async () => {
    const got = await chosen(gens, b.sealedMs);
    expect(got.generation.name).toBe(b.name);
    expect(got.generation.id).toBe(b.id);
    expect(got.sealedMs).toBe(b.sealedMs);
    expect(got.verified).toEqual([b.name]);
    // The renamed old generation (created long before T) is excluded and reported.
    expect(got.rejected).toEqual([{ name: renamedName, code: "E_NAME_TIME", reason: expect.any(String) }]);
    expect(got.warnings.join("\n")).toMatch(new RegExp(`excluded ${renamedName}.*E_NAME_TIME`));
  });

  it("takes the previous generation when T lies between created_ms and sealed_ms", async () => {
    for (const at of [b.createdMs, b.createdMs + 5 * MINUTE, b.sealedMs - 1]) {
      const got = await chosen(gens, at);
      expect(got.generation.name).toBe(a.name);
      expect(got.sealedMs).toBe(a.sealedMs);
      expect(got.rejected.map((r) => [r.name, r.code])).toEqual([
        [renamedName, "E_NAME_TIME"],
        [b.name, "E_SEALED_AFTER"],
      ]);
      expect(got.verified).toEqual([a.name]);
    }
  });

  it("does not choose a generation holding a file modified during the walk after T", async () => {
    const got = await chosen(gens, c.createdMs + 10 * MINUTE);
    expect(got.generation.name).toBe(b.name);
    expect(got.rejected.map((r) => [r.name, r.code])).toEqual([
      [renamedName, "E_NAME_TIME"],
      [c.name, "E_SEALED_AFTER"],
    ]);
    expect((await chosen(gens, c.sealedMs)).generation.name).toBe(c.name);
  });

  it("refuses a T before the earliest generation with E_NO_GENERATION (exit 5)", async () => {
    for (const at of [a.createdMs - 1, old.createdMs, old.createdMs - 1]) {
      const { error } = await refused(gens, at);
      expect(BackupError.is(error, "E_NO_GENERATION")).toBe(true);
      expect((error as BackupError).exitCode).toBe(5);
      expect((error as BackupError).message).toMatch(
        new RegExp(
          `^no generation at or before ${new Date(at).toISOString()} \\(earliest is ${new Date(a.createdMs).toISOString()}\\)`,
        ),
      );
    }
    const empty = await mkdtemp(join(root, "empty-"));
    const { error } = await refused(empty, START);
    expect((error as BackupError).message).toBe(
      `no generation at or before ${new Date(START).toISOString()} (earliest is none)`,
    );
  });

  it("falls back to an earlier generation when the chosen one is corrupted, never to a later one", async () => {
    const dir = await copy();
    await flip(join(dir, b.name), HEADER_BYTES + 40); // inside the first DATA frame
    const got = await chosen(dir, c.createdMs + 10 * MINUTE);
    expect(got.generation.name).toBe(a.name);
    expect(got.verified).toEqual([b.name, a.name]);
    expect(got.rejected.map((r) => [r.name, r.code])).toEqual([
      [renamedName, "E_NAME_TIME"],
      [c.name, "E_SEALED_AFTER"],
      [b.name, "E_FRAME_AUTH"],
    ]);
    expect(got.warnings.join("\n")).toMatch(new RegExp(`${b.name} FAILED its checks \\(E_FRAME_AUTH: .*frame 0`));
  });

  it("falls back when the chosen one's FINAL frame is damaged, and refuses when nothing earlier is left", async () => {
    const dir = await copy();
    await flip(join(dir, b.name), (await stat(join(dir, b.name))).size - 20); // inside the FINAL frame
    const got = await chosen(dir, b.sealedMs);
    expect(got.generation.name).toBe(a.name);
    expect(got.verified).toEqual([a.name]);
    expect(got.rejected.at(-1)?.code).toBe("E_FRAME_AUTH");

    await flip(join(dir, a.name), HEADER_BYTES + 40);
    const { error, verified, warnings } = await refused(dir, b.sealedMs);
    expect(BackupError.is(error, "E_NO_GENERATION")).toBe(true);
    expect((error as BackupError).message).toMatch(/2 candidate\(s\) were passed over/);
    expect(verified).toEqual([a.name]);
    expect(warnings.filter((w) => w.includes("FAILED"))).toHaveLength(2);
  });

  it("reports a wrong passphrase as an unlock failure (exit 3), not a missing generation", async () => {
    const { error } = await refused(gens, c.sealedMs, unlock("not the passphrase at all"));
    expect(VpbkError.is(error, "E_UNLOCK")).toBe(true);
    expect((error as VpbkError).exitCode).toBe(3);
  });

  it("warns about a T in the future and takes the newest generation", async () => {
    const got = await chosen(gens, START + 10 * HOUR);
    expect(got.generation.name).toBe(c.name);
    expect(got.warnings[0]).toMatch(/in the future/);
  });
});
