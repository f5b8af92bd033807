import type { ArticlesService } from "@vellum/core";
import type { MediaDb } from "./tables.js";

/** What a cleanup removed. */
export interface CleanupResult {
  removed: number;
  bytes_freed: number;
}

/** Every stored file name that appears in some article's content (`/media/<file>`, relative or absolute). */
async function referencedFiles(articles: ArticlesService): Promise<Set<string>> {
  const referenced = new Set<string>();
  const pattern = /\/media\/([0-9A-HJKMNP-TV-Z]{26}\.(?:webp|pdf))/g;
  for await (const batch of articles.iterate()) {
    for (const article of batch) {
      for (const match of article.content.matchAll(pattern)) referenced.add(match[1] as string);
    }
  }
  return referenced;
}

/**
 * The media items older than `olderThanMs` that no article's content refers to. Without the
 * articles plugin nothing can refer to media, and nothing is called an orphan: removing every
 * upload would be the wrong guess.
 */
export async function findOrphans(
  db: MediaDb,
  articles: ArticlesService | undefined,
  olderThanMs: number,
): Promise<Array<{ id: string; file: string; stored_bytes: number }>> {
  if (!articles) return [];
  const cutoff = new Date(Date.now() - olderThanMs).toISOString();
  const candidates = await db
    .selectFrom("media_items")
    .select(["id", "file", "stored_bytes"])
    .where("created_at", "<", cutoff)
    .execute();
  if (candidates.length === 0) return [];
  const referenced = await referencedFiles(articles);
  return candidates.filter((item) => !referenced.has(item.file));
}
