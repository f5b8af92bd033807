import type { PluginQueue } from "@vellum/core";
import type { ArticleStore } from "./store.js";
import type { ArticlesDb, Db } from "./tables.js";

export interface ClaimDeps {
  db: Db;
  store: ArticleStore;
  queue: PluginQueue<ArticlesDb>;
}

/**
 * Frees the slug claimed by create `id` when that create ended in the dead-letter queue (or its
 * job is gone), so a new create or a rename may take the slug; a later replay of the dead create
 * then finds no claim and does nothing. Returns whether a claim was freed.
 */
export async function releaseDeadClaim(deps: ClaimDeps, id: string): Promise<boolean> {
  const job = await deps.queue.get(id);
  if (job && job.status !== "failed") return false;
  return deps.store.release(deps.db, id);
}
