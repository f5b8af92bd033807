import type { ArticlesService } from "@vellum/core";
import { articleTag, changeTags } from "./cache-tags.js";
import type { ArticleStore } from "./store.js";
import type { Db } from "./tables.js";

const DEFAULT_BATCH = 500;
const MAX_BATCH = 10_000;

/** The read-only `articles` service other plugins inject (search reindex, backup checks). */
export function createArticlesService(db: Db, store: ArticleStore): ArticlesService {
  return {
    getById: (id) => store.byId(db, id),
    getBySlug: (slug) => store.bySlug(db, slug),
    async *iterate(options = {}) {
      const batchSize = Math.min(Math.max(1, Math.floor(options.batchSize ?? DEFAULT_BATCH)), MAX_BATCH);
      let afterId = options.afterId ?? "";
      for (;;) {
        const batch = await store.ascending(db, afterId, batchSize);
        if (batch.length > 0) yield batch;
        if (batch.length < batchSize) return;
        afterId = (batch.at(-1) as { id: string }).id;
      }
    },
    count: () => store.count(db),
    latestChange: () => store.latestChange(db),
    async cacheTags(slug) {
      const article = await store.bySlug(db, slug);
      return article ? changeTags(article) : [articleTag(slug)];
    },
  };
}
