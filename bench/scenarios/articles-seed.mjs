import { createHash } from "node:crypto";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { sql } from "kysely";
import { createVellum } from "../../packages/core/dist/index.js";
import { defaultPlugins } from "../../packages/vellum/dist/index.js";
import { startServer } from "../lib/server.mjs";
import { articleBody } from "./articles-data.mjs";

/** Articles in the seeded database; env BENCH_ARTICLES_SEED overrides (quick trial runs). */
export const SEEDED = Number(process.env.BENCH_ARTICLES_SEED) || 100_000;
/** The deep cursor sits this many pages of 100 from the newest article (half way at 100,000). */
export const DEEP_PAGES = Math.floor(SEEDED / 200);
/** The API key of the seed's writes, and of the servers started on it. */
export const SEED_API_KEY = "bench-articles-api-key-0123456789abcdef";
/** Answers 200 once a server on the seed is ready. */
export const READY_PATH = "/api/v1/articles?limit=1";
/** The one-article read: the middle article. */
export const ONE_ARTICLE_PATH = `/api/v1/articles/article-${Math.floor(SEEDED / 2)}`;

const IN_FLIGHT = 512;
const BASE = "http://seed.invalid";
const root = new URL("../../", import.meta.url);

/** Files whose change makes a cached seed unusable: the data generator and every migration. */
async function fingerprint(count) {
  const hash = createHash("sha256").update(String(count));
  const files = [fileURLToPath(new URL("./articles-data.mjs", import.meta.url))];
  for (const dir of [
    "plugins/articles/dist/migrations",
    "plugins/search/dist/migrations",
    "packages/core/dist/queue",
  ]) {
    const path = fileURLToPath(new URL(dir, root));
    for (const name of (await readdir(path, { recursive: true })).sort()) {
      if (name.endsWith(".js")) files.push(join(path, name));
    }
  }
  for (const file of files) hash.update(await readFile(file));
  return hash.digest("hex").slice(0, 16);
}

/**
 * Seeds `count` articles through the plugin's own write path: an in-process Vellum with the
 * default plugins (so search indexes them too, as `vellum serve` would) takes every create through
 * `vellum.fetch` (auth, CSRF, validation, sanitizing, group-committed enqueue) and its queue
 * worker applies them. No sockets, 512 creates in flight; nothing bypasses the plugin. The
 * articles plugin's back-pressure bound is raised for the seed: it enqueues far faster than a
 * worker applies, and would otherwise be refused past 50,000 waiting creates.
 * Returns a cursor `deepPages` pages of 100 deep, for the deep-cursor read.
 */
async function seed({ dataDir, apiKey, count, deepPages }) {
  const started = performance.now();
  const vellum = createVellum({
    dataDir,
    plugins: defaultPlugins(),
    pluginOptions: { articles: { maxQueued: count + 1 } },
    security: { apiKey },
    logLevel: 1,
    accessLog: false,
  });
  await vellum.ready();
  try {
    const { token } = await (await vellum.fetch(new Request(`${BASE}/api/v1/csrf`))).json();
    if (!token) throw new Error("seed: GET /api/v1/csrf gave no token");
    const headers = {
      authorization: `Bearer ${apiKey}`,
      cookie: `svc_csrf=${token}`,
      "x-csrf-token": token,
      "content-type": "application/json",
    };
    let next = 0;
    const worker = async () => {
      while (next < count) {
        const i = next++;
        const body = JSON.stringify(articleBody(`article-${i}`, i));
        const res = await vellum.fetch(new Request(`${BASE}/api/v1/articles`, { method: "POST", headers, body }));
        if (res.status !== 202) throw new Error(`seed: create ${i} answered ${res.status}: ${await res.text()}`);
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    let stats = await vellum.queue().stats();
    while (stats.some((s) => s.queue === "articles" && s.queued > 0)) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      stats = await vellum.queue().stats();
    }
    const dead = stats.find((s) => s.queue === "articles")?.failed ?? 0;
    if (dead > 0) throw new Error(`seed: ${dead} creates ended in the dead-letter queue`);
    let deepCursor = "";
    for (let page = 0; page < deepPages; page++) {
      const query = deepCursor ? `&cursor=${encodeURIComponent(deepCursor)}` : "";
      deepCursor = (await (await vellum.fetch(new Request(`${BASE}/api/v1/articles?limit=100${query}`))).json())
        .next_cursor;
    }
    // The applied jobs are not needed any more (the kernel prunes them after a day anyway).
    await vellum.queue().prune(0);
    await sql`VACUUM`.execute(vellum.db());
    return { seconds: (performance.now() - started) / 1000, deepCursor };
  } finally {
    await vellum.close();
  }
}

/**
 * A data directory seeded with `count` articles, built once and kept in the OS temp dir (keyed by
 * a fingerprint of the data generator and the migrations) so later runs reuse it.
 * @param {{ apiKey: string, count: number, deepPages: number }} options
 * @returns {Promise<{ template: string, deepCursor: string, seedSeconds: number, reused: boolean }>}
 */
export async function seededTemplate({ apiKey, count, deepPages }) {
  const template = join(tmpdir(), "vellum-bench-articles", `${count}-${await fingerprint(count)}`);
  const marker = join(template, "seed.json");
  const cached = await readFile(marker, "utf8").catch(() => undefined);
  if (cached) return { template, ...JSON.parse(cached), reused: true };
  await rm(template, { recursive: true, force: true });
  await mkdir(template, { recursive: true });
  process.stderr.write(`articles: seeding ${count} articles through the write path (cached afterwards)\n`);
  const { seconds, deepCursor } = await seed({ dataDir: template, apiKey, count, deepPages });
  await writeFile(marker, JSON.stringify({ deepCursor, seedSeconds: seconds }));
  return { template, deepCursor, seedSeconds: seconds, reused: false };
}

/** A private copy of the seeded directory for a server that may write to it. */
export async function copyOf(template, into) {
  await cp(template, into, { recursive: true });
  return into;
}

/**
 * Starts a server (`args(port, dataDir)`) on a private copy of the seeded directory, made in a new
 * folder under `parent`; stopping the server removes the copy.
 * @param {string} template
 * @param {string} parent
 * @param {{ args: (port: number, dataDir: string) => string[], readyPath: string, env?: Record<string, string>, launcher?: import("../lib/server.mjs").Launcher }} options
 */
export async function serveCopy(template, parent, { args, readyPath, env, launcher }) {
  const dataDir = await copyOf(template, await mkdtemp(join(parent, "vellum-run-")));
  try {
    const server = await startServer({ args: (port) => args(port, dataDir), readyPath, env, launcher });
    return {
      ...server,
      dataDir,
      async stop() {
        await server.stop();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
}
