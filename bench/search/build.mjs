// Child process: loads the corpus, builds the index, reindexes it, measures the live write path,
// and reports index size and peak memory. Usage: node build.mjs --data-dir <dir> --articles <n>
import { reindex } from "@vellum/plugin-search";
import { sql } from "kysely";
import { article } from "./corpus.mjs";
import { argsOf, benchInstance } from "./instance.mjs";
import { emit, peakRss, summary } from "./stats.mjs";

const LOAD_BATCH = 2_000;
const LIVE_WRITES = 500;
const { dataDir, articles: count } = argsOf(process.argv);
const { vellum, articles } = benchInstance(dataDir);
await vellum.ready();

const progress = (label) => (p) => {
  if (p.done % 20_000 < 200) process.stderr.write(`search: ${label} ${p.done}/${p.total}\n`);
};

let started = performance.now();
for (let i = 0; i < count; i += LOAD_BATCH) {
  const batch = [];
  for (let n = i; n < Math.min(count, i + LOAD_BATCH); n++) batch.push(article(n));
  await articles.load(batch);
}
const loadMs = performance.now() - started;

started = performance.now();
const build = await reindex(vellum, { onProgress: progress("build") });
const buildMs = performance.now() - started;

started = performance.now();
const rebuilt = await reindex(vellum, { onProgress: progress("reindex") });
const reindexMs = performance.now() - started;

// The normal write path: one article per transaction, indexed inside it (then removed again).
const writeMs = [];
const extra = [];
for (let n = count; n < count + LIVE_WRITES; n++) {
  const a = { ...article(n), id: `Z${n}` };
  const t = performance.now();
  await articles.create(a);
  writeMs.push(performance.now() - t);
  extra.push(a);
}
const removeMs = [];
for (const a of extra) {
  const t = performance.now();
  await articles.remove(a);
  removeMs.push(performance.now() - t);
}

const size = await sql`SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name`.execute(vellum.db());
const bytes = (filter) => size.rows.filter((r) => filter(r.name)).reduce((s, r) => s + r.bytes, 0);
const stats = await vellum.service("search").stats();
await vellum.close();
emit({
  articles: count,
  loadMs,
  buildMs,
  reindexMs,
  build,
  rebuilt,
  documents: stats.documents,
  createWithIndexMs: summary(writeMs),
  deleteWithIndexMs: summary(removeMs),
  indexBytes: bytes((name) => name.startsWith("search_")),
  ftsBytes: bytes((name) => /^search_fts_/.test(name)),
  articlesBytes: bytes((name) => name.startsWith("bench_articles") || name.startsWith("sqlite_autoindex_bench")),
  peakRssBytes: await peakRss(),
});
