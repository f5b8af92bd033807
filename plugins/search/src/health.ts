import type { ArticlesService, HealthCheckResult } from "@vellum/core";
import type { EngineStats, SearchEngine } from "./engine/types.js";

export interface SearchHealth extends HealthCheckResult {
  detail: { documents: number; indexed_at: string | null; stale: boolean };
}

/** Stale: the index and the articles disagree on how many there are or on the latest change. */
export async function isStale(stats: EngineStats, articles: ArticlesService | undefined): Promise<boolean> {
  if (stats.state !== "ok") return true;
  if (!articles) return false;
  const [count, latest] = await Promise.all([articles.count(), articles.latestChange()]);
  return count !== stats.documents || (latest ?? null) !== stats.latestChange;
}

/**
 * The search component for `/health`: `unavailable` when the index is missing or broken (search
 * answers degraded), `degraded` when it is stale, `ok` otherwise.
 */
export async function searchHealth(engine: SearchEngine, articles: ArticlesService | undefined): Promise<SearchHealth> {
  const stats = await engine.stats();
  const stale = await isStale(stats, articles);
  const state = stats.state !== "ok" ? "unavailable" : stale ? "degraded" : "ok";
  return {
    name: "search",
    ok: state === "ok",
    state,
    detail: { documents: stats.documents, indexed_at: stats.indexedAt, stale },
  };
}
