import { copyFile, mkdir, mkdtemp, open, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, it } from "vitest";
import {
  HEADER_BYTES,
  isPartialName,
  listGenerations,
  LOCK_NAME,
  parseHeader,
  unlockHeader,
  verifyVpbk,
  VpbkError,
  writeGeneration,
  type WriteGenerationOptions,
} from "../src/index.js";
import { killAtStep, runChild } from "./harness.js";
import { bytes, kek, PASSPHRASE, TEST_KDF, unlock } from "./support.js";

// backup-format.md §5 test 27: a backup SIGKILLed while it writes its generation. Nothing is
// published, the previous generation stays the newest, the `.partial-*` file stays until the next
// successful generation finds it older than 1 h, and the next generation has its own data key.

const HOUR = 60 * 60 * 1000;
const GENERATION = /^vk-\d{8}-\d{6}\.vpbk$/;

let root: string;
let cache: string; // the children's transpiled sources
let dataDir: string;
let previous: { name: string; path: string; id: string; dataKey: Buffer };

/**
 * The kill points, as [step, occurrence, what the partial file holds by then]. The file copy reads
 * media/a.bin, media/b.bin (over 1 MiB: read once to check, once to copy), media/c.txt and
 * settings/site.json.
 */
const POINTS: [string, number, string][] = [
  ["partial", 1, "the temporary file was just created"],
  ["read", 1, "the database record written, the first file read"],
  ["read", 2, "a large file checked, not yet copied"],
  ["read", 3, "a large file copied"],
  ["read", 5, "the last file read"],
  ["sealed", 1, "the generation written and fsynced, not yet published"],
];

function options(target: string, extra: Partial<WriteGenerationOptions> = {}): WriteGenerationOptions {
  return { dataDir, target, passphrase: PASSPHRASE, kdf: TEST_KDF, deriveKek: kek, ...extra };
}

/** The id and data key of the generation whose header `path` starts with. */
async function headerKeys(path: string): Promise<{ id: string; dataKey: Buffer }> {
  const handle = await open(path, "r");
  try {
    const head = Buffer.alloc(HEADER_BYTES);
    await handle.read(head, 0, HEADER_BYTES, 0);
    const header = parseHeader(head);
    const { keys } = await unlockHeader(header, unlock());
    return { id: header.generationId, dataKey: keys.dataKey };
  } finally {
    await handle.close();
  }
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "vellum-backup-crash-"));
  cache = join(root, "ts-cache");
  dataDir = join(root, "data");
  await mkdir(join(dataDir, "db"), { recursive: true });
  const db = new Database(join(dataDir, "db", "vellum.sqlite"));
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE note (body TEXT NOT NULL)");
  const insert = db.prepare("INSERT INTO note (body) VALUES (?)");
  for (let i = 0; i < 3000; i += 1) insert.run(`note ${i} ${"y".repeat(60)}`);
  db.close();
  await mkdir(join(dataDir, "media"));
  await writeFile(join(dataDir, "media", "a.bin"), bytes(300_000, 1));
  await writeFile(join(dataDir, "media", "b.bin"), bytes(1_500_000, 2));
  await writeFile(join(dataDir, "media", "c.txt"), "a small file");
  await mkdir(join(dataDir, "settings"));
  await writeFile(join(dataDir, "settings", "site.json"), '{"title":"Vellum"}');

  // The previous generation, written by a child that runs to its end.
  const template = join(root, "template");
  await mkdir(template);
  await runChild(["backup", dataDir, template, PASSPHRASE], cache);
  const [name] = await readdir(template);
  const path = join(template, name as string);
  previous = { name: name as string, path, ...(await headerKeys(path)) };
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("backup killed while writing (§5 test 27)", () => {
  it("the previous generation is a complete, published one", async ({ expect }) => {
    expect(previous.name).toMatch(GENERATION);
    expect((await verifyVpbk(previous.path, unlock())).generationId).toBe(previous.id);
  });

  it.concurrent.for(POINTS)("SIGKILL at %s %i (%s)", async ([step, n], { expect }) => {
    const target = await mkdtemp(join(root, "target-"));
    await copyFile(previous.path, join(target, previous.name));
    const killed = await killAtStep(["backup", dataDir, target, PASSPHRASE], step, n, cache);

    // Nothing published: the previous generation is still the only one, and the newest.
    const left = await readdir(target);
    expect(left.filter((name) => GENERATION.test(name))).toEqual([previous.name]);
    expect((await listGenerations(target)).generations[0]?.name).toBe(previous.name);
    const partials = left.filter(isPartialName);
    expect(partials).toHaveLength(1);
    const partial = join(target, partials[0] as string);
    // The dead writer's lock is left behind.
    expect(JSON.parse(await readFile(join(target, LOCK_NAME), "utf8"))).toMatchObject({ pid: killed.pid });

    // The partial file is never a generation by its name; until it was sealed it is not one by
    // its content either.
    const check = await verifyVpbk(partial, unlock()).then(
      () => "complete",
      (error: unknown) => (error instanceof VpbkError ? error.code : String(error)),
    );
    if (step === "sealed") expect(check).toBe("complete");
    else expect(["E_SHORT", "E_NO_FINAL", "E_TRUNCATED", "E_RECORD_SIZE"]).toContain(check);
    const dead = (await stat(partial)).size >= HEADER_BYTES ? await headerKeys(partial) : undefined;
    if (step !== "partial") expect(dead).toBeDefined();

    // The next run takes over the stale lock and writes a new generation with a new data key; the
    // partial file, younger than 1 h, stays.
    const next = await writeGeneration(options(target));
    expect((await listGenerations(target)).generations[0]?.name).toBe(next.name);
    expect((await readdir(target)).sort()).toEqual([previous.name, next.name, partials[0]].sort());
    const nextKeys = await headerKeys(next.path);
    for (const other of [previous, dead]) {
      if (other === undefined) continue;
      expect(next.id).not.toBe(other.id);
      expect(nextKeys.dataKey.equals(other.dataKey)).toBe(false);
    }
    if (dead !== undefined) expect(dead.dataKey.equals(previous.dataKey)).toBe(false);

    // A successful generation an hour later removes it.
    const later = await writeGeneration(options(target, { now: () => Date.now() + 2 * HOUR }));
    expect((await readdir(target)).sort()).toEqual([previous.name, next.name, later.name].sort());
  });
});
