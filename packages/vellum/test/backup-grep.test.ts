import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, watch, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createTestVellum } from "@vellum/core/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { defaultPlugins } from "../src/index.js";
import {
  binRunner,
  buildDist,
  CHILD_API_KEY,
  filesContaining,
  filesUnder,
  generationsIn,
  PASSPHRASE,
  tempDirs,
  writeCheapKdfConfig,
} from "./backup-support.js";
import { ARTICLES } from "./support.js";

// The grep test (backup-format.md §5 test 38): after `vellum backup`, `vellum restore -in F -verify`
// and `vellum drill` (child processes of the built binary, with their own TMPDIR), no plaintext
// marker (a random one in an article's content, another in a file under settings/) appears in any
// file on BACKUP_TARGET, in the temporary directory, or beside the data dir: the drill's scratch
// dir lives there while it runs and must be gone. The markers are in the data dir itself, so the
// scan would find a leak.

const dirs = tempDirs("vellum-backup-grep-");
const bin = binRunner();

beforeAll(() => buildDist(), 120_000);
afterAll(async () => {
  await bin.killAll();
  dirs.removeAll();
});

it("no plaintext marker reaches BACKUP_TARGET, TMPDIR or the data dir's surroundings (§5 test 38)", async () => {
  const root = dirs.make();
  const parent = join(root, "parent");
  const dataDir = join(parent, "data");
  const target = join(root, "target");
  const tmp = join(root, "tmp");
  const cwd = join(root, "cwd");
  for (const dir of [parent, target, tmp, cwd]) mkdirSync(dir);
  writeCheapKdfConfig(cwd);

  const rowMarker = randomBytes(16).toString("hex");
  const fileMarker = randomBytes(16).toString("hex");
  const t = await createTestVellum({ plugins: defaultPlugins(), dataDir });
  const body = { title: "The marker row", slug: "marker-row", content: `<p>row marker ${rowMarker}</p>` };
  expect((await t.fetch(ARTICLES, { method: "POST", json: body, headers: await t.writeHeaders() })).status).toBe(202);
  expect((await t.fetch(`${ARTICLES}/marker-row`)).status).toBe(200); // applied now
  await t.close();
  mkdirSync(join(dataDir, "settings"), { recursive: true });
  writeFileSync(join(dataDir, "settings", "marker.txt"), `file marker ${fileMarker}\n`);
  const markers = [Buffer.from(rowMarker), Buffer.from(fileMarker)];

  // The seed's command forms, each in its own process with TMPDIR pointing at `tmp`.
  const env: NodeJS.ProcessEnv = {
    TMPDIR: tmp,
    SERVICE_DATA_DIR: dataDir,
    BACKUP_TARGET: target,
    SERVICE_BACKUP_PASSPHRASE: PASSPHRASE,
    SERVICE_API_KEY: CHILD_API_KEY,
  };
  const backup = await bin.run(["backup"], { cwd, env });
  expect(backup.code, backup.stderr).toBe(0);
  const [generation] = generationsIn(target);
  expect(generation).toBeDefined();
  expect(backup.stdout).toContain(generation);
  const verify = await bin.run(["restore", "-in", generation ?? "", "-verify"], { cwd, env });
  expect(verify.code, verify.stderr).toBe(0);
  expect(verify.stdout).toMatch(/verified .*generation [0-9a-f]{32}/);
  // The drill restores into a scratch dir beside the data dir: seen appearing there while it runs.
  const appeared = new Set<string>();
  const watcher = watch(parent, (_event, name) => {
    if (name) appeared.add(String(name));
  });
  const drill = await bin.run(["drill"], { cwd, env }).finally(() => watcher.close());
  expect(drill.code, drill.stderr).toBe(0);
  expect([...appeared]).toContainEqual(expect.stringMatching(/^\.data\.drill-/));
  expect(drill.stdout).toMatch(/^drill: generation vk-\S+ restored and checked/m);

  // The markers are in the data dir (the scan can see them)...
  const inDataDir = filesUnder(dataDir);
  for (const marker of markers) expect(filesContaining(inDataDir, marker)).not.toEqual([]);
  // ...and nowhere else: not on the target, not in TMPDIR, not beside the data dir.
  const elsewhere = [
    ...filesUnder(target),
    ...filesUnder(tmp),
    ...filesUnder(parent, (path) => path === dataDir),
    ...filesUnder(cwd),
  ];
  expect(filesUnder(target)).toContain(generation);
  for (const marker of markers) expect(filesContaining(elsewhere, marker)).toEqual([]);
  // The drill's scratch dir (and any restore staging) is gone.
  expect(readdirSync(parent)).toEqual(["data"]);
}, 60_000);
