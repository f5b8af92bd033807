import type { ArticlesService, ComponentReport } from "@vellum/core";
import type { EngineStats, SearchEngine } from "./engine/types.js";

/** Stale: the index and the articles disagree on how many there are or on the latest change. */
export async function isStale(stats: EngineStats, articles: ArticlesService | undefined): Promise<boolean> {
  if (stats.state !== "ok") return true;
  if (!articles) return false;
  const [count, latest] = await Promise.all([articles.count(), articles.latestChange()]);
  return count !== stats.documents || (latest ?? null) !== stats.latestChange;
}

/**
 * The index as a health component: `unavailable` when it is missing or broken (search answers
 * degraded), `degraded` when it is stale, `ok` otherwise. Search queries are never logged.
 */
export async function indexStatus(
  engine: SearchEngine,
  articles: ArticlesService | undefined,
): Promise<ComponentReport> {
  const stats = await engine.stats();
  const stale = await isStale(stats, articles);
  return {
    state: stats.state !== "ok" ? "unavailable" : stale ? "degraded" : "ok",
    detail: { documents: stats.documents, indexed_at: stats.indexedAt, stale },
    ethics: { search_queries_logged: false },
  };
}
