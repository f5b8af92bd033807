import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { createTestVellum } from "@vellum/core/testing";
import { writeGeneration } from "@vellum/plugin-backup";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { defaultPlugins } from "../src/index.js";
import {
  binRunner,
  buildDist,
  CHEAP_KDF,
  CHILD_API_KEY,
  childWriteHeaders,
  flipMiddleByte,
  PASSPHRASE,
  portOpen,
  tempDirs,
  waitForOutput,
} from "./backup-support.js";
import { createArticle } from "./support.js";
import { freePort } from "../../cli/test/support.js";

// SERVICE_RESTORE_FROM on a fresh deploy (backup-format.md §3.2 and §5 test 34), with real
// `vellum serve` processes of the built binary: it restores into a missing or empty data dir before
// anything opens it, refuses to start when that fails, and leaves a data dir with anything in it
// alone, so a restart never restores again.

const ARTICLES = "/api/v1/articles";
const dirs = tempDirs("vellum-restore-from-");
const bin = binRunner();

/** Two generations of a source data dir: `older` holds `first-article`, `newer` also `second-article`. */
let older = "";
let newer = "";
/** A directory with a copy of `older` and a corrupted copy of `newer` (same names). */
let mixed = "";
let root = "";
let cwd = "";

beforeAll(async () => {
  buildDist();
  root = dirs.make();
  cwd = join(root, "cwd");
  mkdirSync(cwd);
  const source = join(root, "source", "data");
  const gens = join(root, "gens");
  mkdirSync(gens);
  const write = () => writeGeneration({ dataDir: source, target: gens, passphrase: PASSPHRASE, kdf: CHEAP_KDF });
  const seed = await createTestVellum({ plugins: defaultPlugins(), dataDir: source });
  await createArticle(seed, "first-article");
  await seed.close();
  older = (await write()).path;
  const again = await createTestVellum({ plugins: defaultPlugins(), dataDir: source });
  await createArticle(again, "second-article");
  await again.close();
  newer = (await write()).path; // waits for the next UTC second: a later name
  mixed = join(root, "mixed");
  mkdirSync(mixed);
  copyFileSync(older, join(mixed, basename(older)));
  copyFileSync(newer, join(mixed, basename(newer)));
  flipMiddleByte(join(mixed, basename(newer)));
}, 120_000);

afterEach(() => bin.killAll());
afterAll(async () => {
  await bin.killAll();
  dirs.removeAll();
});

/** A fresh parent dir for one case; its data dir is `<parent>/data` (not created). */
function caseDir(name: string): { parent: string; dataDir: string } {
  const parent = join(root, name);
  mkdirSync(parent);
  return { parent, dataDir: join(parent, "data") };
}

const env = (restoreFrom: string): NodeJS.ProcessEnv => ({
  SERVICE_API_KEY: CHILD_API_KEY,
  SERVICE_BACKUP_PASSPHRASE: PASSPHRASE,
  SERVICE_RESTORE_FROM: restoreFrom,
  SERVICE_LOG_LEVEL: "info",
});

async function articleStatus(url: string, slug: string): Promise<number> {
  const res = await fetch(`${url}${ARTICLES}/${slug}`, { signal: AbortSignal.timeout(10_000) });
  await res.arrayBuffer();
  return res.status;
}

async function waitForStatus(url: string, slug: string, status: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await articleStatus(url, slug)) !== status) {
    if (Date.now() > deadline) throw new Error(`${slug} did not answer ${status} within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("SERVICE_RESTORE_FROM (§5 test 34)", () => {
  it("is ignored, and logged, when the data dir is not empty: nothing changes", async () => {
    const { parent, dataDir } = caseDir("not-empty");
    const seed = await createTestVellum({ plugins: defaultPlugins(), dataDir });
    await createArticle(seed, "already-here");
    await seed.close();
    const before = readdirSync(dataDir).sort();

    const { child, url } = await bin.serve(dataDir, { cwd, env: env(newer) });
    await waitForOutput(child, /SERVICE_RESTORE_FROM ignored: the data dir is not empty/);
    expect(await articleStatus(url, "already-here")).toBe(200);
    expect(await articleStatus(url, "first-article")).toBe(404);
    expect(await articleStatus(url, "second-article")).toBe(404);
    expect(child.output()).not.toMatch(/restored generation/);
    expect((await bin.stop(child)).code).toBe(0);
    expect(existsSync(join(dataDir, ".vellum", "restored-from.json"))).toBe(false);
    expect(readdirSync(dataDir).sort()).toEqual(before);
    expect(readdirSync(parent)).toEqual(["data"]);
  });

  it.each([
    ["an empty data dir", true],
    ["a missing data dir", false],
  ])("with %s and a corrupt generation: exits non-zero without ever listening", async (_label, create) => {
    const { parent, dataDir } = caseDir(create ? "corrupt-empty" : "corrupt-missing");
    if (create) mkdirSync(dataDir);
    const corrupt = join(mixed, basename(newer));
    const port = await freePort();
    const child = bin.start(["serve", "--port", String(port), "--host", "127.0.0.1", "--data-dir", dataDir], {
      cwd,
      env: env(corrupt),
    });
    // The port never opens while it runs, and it exits by itself, non-zero.
    let everOpen = false;
    while (child.process.exitCode === null && child.process.signalCode === null) {
      everOpen ||= await portOpen(port);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const exit = await child.exited;
    expect(exit.code, child.output()).not.toBe(0);
    expect(exit.signal).toBeNull();
    expect(everOpen).toBe(false);
    expect(await portOpen(port)).toBe(false);
    expect(child.output()).not.toMatch(/listening on/);
    expect(child.output()).toMatch(/E_FRAME_AUTH/);
    expect(child.output()).toMatch(/refusing to start/);
    // Nothing was created or left behind: the data dir is still empty (or missing), no staging dir.
    expect(!existsSync(dataDir) || readdirSync(dataDir).length === 0).toBe(true);
    expect(readdirSync(parent).filter((name) => name !== "data")).toEqual([]);
  });

  it("restores a good generation into a missing data dir, serves it, and does not restore again at restart", async () => {
    const { parent, dataDir } = caseDir("good");
    const first = await bin.serve(dataDir, { cwd, env: env(newer) });
    await waitForOutput(first.child, /SERVICE_RESTORE_FROM: restored generation [0-9a-f]{32}/);
    expect(await articleStatus(first.url, "first-article")).toBe(200);
    const res = await fetch(`${first.url}${ARTICLES}/second-article`, { signal: AbortSignal.timeout(10_000) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { title: string }).title).toBe("Title of second-article");
    const marker = readFileSync(join(dataDir, ".vellum", "restored-from.json"), "utf8");
    expect(JSON.parse(marker)).toMatchObject({ generationId: expect.stringMatching(/^[0-9a-f]{32}$/) });

    // A write after the restore, then a restart with the same environment.
    const headers = await childWriteHeaders(first.url);
    const body = { title: "Written after the restore", slug: "after-restore", content: "<p>new</p>" };
    const posted = await fetch(`${first.url}${ARTICLES}`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    expect(posted.status).toBe(202);
    await posted.arrayBuffer();
    expect(await articleStatus(first.url, "after-restore")).toBe(200);
    expect((await bin.stop(first.child)).code).toBe(0);

    const second = await bin.serve(dataDir, { cwd, env: env(newer) });
    await waitForOutput(second.child, /SERVICE_RESTORE_FROM ignored: the data dir is not empty/);
    expect(second.child.output()).not.toMatch(/restored generation/);
    expect(await articleStatus(second.url, "after-restore")).toBe(200);
    expect(await articleStatus(second.url, "second-article")).toBe(200);
    expect(readFileSync(join(dataDir, ".vellum", "restored-from.json"), "utf8")).toBe(marker);
    expect((await bin.stop(second.child)).code).toBe(0);
    // No previous data dir was replaced, and no staging dir is left beside it.
    expect(readdirSync(parent)).toEqual(["data"]);
  });

  it.each([
    ["a missing data dir", false],
    ["an empty data dir", true],
  ])("started twice at once on %s (cluster mode): restores once, and both serve it", async (_label, create) => {
    const { parent, dataDir } = caseDir(create ? "together-empty" : "together-missing");
    if (create) mkdirSync(dataDir);
    const [a, b] = await Promise.all([
      bin.serve(dataDir, { cwd, env: env(newer) }),
      bin.serve(dataDir, { cwd, env: env(newer) }),
    ]);
    for (const { url } of [a, b]) expect(await articleStatus(url, "second-article")).toBe(200);
    const outputs = [a, b].map(({ child }) => child.output());
    expect(outputs.filter((output) => /restored generation/.test(output))).toHaveLength(1);
    expect(outputs.filter((output) => /ignored: the data dir is not empty/.test(output))).toHaveLength(1);
    // A write through one is read through the other: they share one data dir.
    const headers = await childWriteHeaders(a.url);
    const posted = await fetch(`${a.url}${ARTICLES}`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ title: "Written through a", slug: "through-a", content: "<p>a</p>" }),
      signal: AbortSignal.timeout(10_000),
    });
    expect(posted.status).toBe(202);
    await posted.arrayBuffer();
    await waitForStatus(b.url, "through-a", 200);
    for (const { child } of [a, b]) expect((await bin.stop(child)).code).toBe(0);
    expect(readdirSync(parent).filter((name) => name !== "data" && !name.startsWith(".data."))).toEqual([]);
  });

  it("given a directory whose newest generation is corrupt, restores the next older one", async () => {
    const { parent, dataDir } = caseDir("directory");
    const { child, url } = await bin.serve(dataDir, { cwd, env: env(mixed) });
    await waitForOutput(child, /SERVICE_RESTORE_FROM: restored generation/);
    expect(child.output()).toContain(basename(newer));
    expect(child.output()).toMatch(/could not be restored: .*E_FRAME_AUTH/);
    expect(await articleStatus(url, "first-article")).toBe(200);
    expect(await articleStatus(url, "second-article")).toBe(404);
    expect((await bin.stop(child)).code).toBe(0);
    expect(readdirSync(parent)).toEqual(["data"]);
    expect(dirname(dataDir)).toBe(parent);
  });
});
