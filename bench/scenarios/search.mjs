import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startServer } from "../lib/server.mjs";
import { runChild } from "../search/child.mjs";
import { timeQueries } from "../search/http-client.mjs";
import { makeQueries } from "../search/queries.mjs";
import { byKind } from "../search/stats.mjs";

const MINUTE = 60_000;
const TARGETS = { inProcessP99: 15, httpP99: 25, typoRecovery: 0.9, buildSeconds: 60, peakRssMb: 400 };

const mb = (bytes) => bytes / 1024 / 1024;
const f1 = (n) => n.toFixed(1);
const pct = (ratio) => `${(ratio * 100).toFixed(1)} %`;
const mark = (ok) => (ok ? "✓" : "✗ over target");
const latencyLine = (label, l) =>
  `${label}: p50 ${f1(l.all.p50)} ms, p95 ${f1(l.all.p95)} ms, p99 ${f1(l.all.p99)} ms` +
  ` (${["word", "phrase", "prefix", "typo"].map((k) => `${k} p99 ${f1(l[k].p99)}`).join(", ")})`;

/**
 * Search at scale (BENCH_SEARCH_ARTICLES, default 100,000 articles of generated text): index build
 * and reindex time, on-disk size, 1,000 mixed queries in-process and over HTTP, typo recovery,
 * peak memory, and MiniSearch on the same corpus and queries.
 * @type {import("./registry.mjs").Scenario}
 */
export default async function searchScenario() {
  const count = Number(process.env.BENCH_SEARCH_ARTICLES) || 100_000;
  const lines = [];
  const failures = [];
  const data = { articles: count };
  const dataDir = await mkdtemp(join(tmpdir(), "vellum-bench-search-"));
  const args = ["--data-dir", dataDir, "--articles", String(count)];
  try {
    process.stderr.write(`search: loading ${count} articles and building the index\n`);
    const build = await runChild("build.mjs", args, 30 * MINUTE);
    data.build = build;
    process.stderr.write("search: 1,000 queries in-process\n");
    const inProcess = await runChild("inprocess.mjs", args, 10 * MINUTE);
    data.inProcess = inProcess;

    process.stderr.write("search: 1,000 queries over HTTP\n");
    const server = await startServer({
      args: (port) => [
        fileURLToPath(new URL("../search/server.mjs", import.meta.url)),
        ...args,
        "--port",
        String(port),
      ],
      readyPath: "/docs/api/errors",
    });
    try {
      await timeQueries(server.url, makeQueries(count, 300, 0xbadc0de));
      const queries = makeQueries(count);
      const { ms, failures: non200 } = await timeQueries(server.url, queries);
      data.http = { latency: byKind(queries, ms), non200, peakRssBytes: server.peakRssBytes() };
    } finally {
      await server.stop();
    }

    process.stderr.write("search: MiniSearch on the same corpus and queries\n");
    try {
      data.minisearch = await runChild("minisearch.mjs", args, 30 * MINUTE);
    } catch (err) {
      failures.push(`MiniSearch: ${err instanceof Error ? err.message : String(err)}`);
    }

    const { http, minisearch: mini } = data;
    const ip = inProcess.latency;
    lines.push(
      `search, ${count} articles: index build ${f1(build.buildMs / 1000)} s ${mark(build.buildMs / 1000 <= TARGETS.buildSeconds)}, ` +
        `reindex (live index replaced) ${f1(build.reindexMs / 1000)} s, loading the articles table ${f1(build.loadMs / 1000)} s`,
      `search index on disk: ${f1(mb(build.indexBytes))} MB (FTS5 ${f1(mb(build.ftsBytes))} MB; the articles table itself ${f1(mb(build.articlesBytes))} MB)`,
      `search write path (article + index in one transaction): create p50 ${f1(build.createWithIndexMs.p50)} ms, p99 ${f1(build.createWithIndexMs.p99)} ms; delete p50 ${f1(build.deleteWithIndexMs.p50)} ms`,
      `${latencyLine("search in-process, limit 20 with snippets", ip)} ${mark(ip.all.p99 <= TARGETS.inProcessP99)}`,
      `${latencyLine("search over HTTP, limit 20 with snippets", http.latency)} ${mark(http.latency.all.p99 <= TARGETS.httpP99)}` +
        (http.non200 ? `, ${http.non200} non-200` : ""),
      `search typo recovery: ${pct(inProcess.typoRecovery.stem)} of ${inProcess.typos} misspelled queries have the intended word (or a form with its stem) in the top hit ${mark(inProcess.typoRecovery.stem >= TARGETS.typoRecovery)}; ${pct(inProcess.typoRecovery.exact)} have that exact word`,
      `search peak RSS: server ${f1(mb(http.peakRssBytes))} MB ${mark(mb(http.peakRssBytes) <= TARGETS.peakRssMb)}, in-process runner ${f1(mb(inProcess.peakRssBytes))} MB, builder ${f1(mb(build.peakRssBytes))} MB`,
      `search plans used: ${Object.entries(inProcess.plans)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")}; queries with no result: ${inProcess.empty}`,
    );
    if (mini) {
      lines.push(
        `MiniSearch, same corpus and queries (in-process, no snippets): build ${f1(mini.buildMs / 1000)} s, ` +
          `${latencyLine("latency", mini.latency)}, typo recovery ${pct(mini.typoRecovery.stem)} (exact word ${pct(mini.typoRecovery.exact)}), peak RSS ${f1(mb(mini.peakRssBytes))} MB`,
        `vs MiniSearch: p99 ${f1(ip.all.p99)} vs ${f1(mini.latency.all.p99)} ms, p50 ${f1(ip.all.p50)} vs ${f1(mini.latency.all.p50)} ms, ` +
          `typo recovery ${pct(inProcess.typoRecovery.stem)} vs ${pct(mini.typoRecovery.stem)}, build ${f1(build.buildMs / 1000)} vs ${f1(mini.buildMs / 1000)} s, ` +
          `peak RSS ${f1(mb(http.peakRssBytes))} vs ${f1(mb(mini.peakRssBytes))} MB`,
      );
    }
  } catch (err) {
    failures.push(`vellum search: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
  return { lines, failures, data };
}
