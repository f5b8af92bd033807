import type { ArticleRecord } from "@vellum/core";
import type { SearchDocument } from "./engine/types.js";
import { cleanText, htmlToText } from "./text/html-to-text.js";

/** What the index keeps of an article: plain text of the content, cleaned title and tags. */
export function toSearchDocument(article: ArticleRecord): SearchDocument {
  const tags = [...new Set(article.tags.map(cleanText).filter((tag) => tag.length > 0))];
  return {
    id: article.id,
    slug: article.slug,
    title: cleanText(article.title),
    tags,
    body: htmlToText(article.content),
    created_at: article.created_at,
    updated_at: article.updated_at,
  };
}
