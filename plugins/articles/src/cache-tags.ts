import type { ArticleRecord, H3Event } from "@vellum/core";

/**
 * The cache tags of article responses (contract §6), sent as `Cache-Tag` and `Surrogate-Key` by a
 * response cache and named again in the events of every change, so that a change purges exactly
 * the responses that showed it: `article:<slug>` one article's page, `articles` the unfiltered
 * list pages, `tag:<tag>` one tag's pages. Tags are percent-encoded, so a tag with a space or a
 * comma stays one tag in `Cache-Tag` (comma-separated) and `Surrogate-Key` (space-separated).
 */
export const articleTag = (slug: string): string => `article:${slug}`;
export const LIST_TAG = "articles";
export const tagTag = (tag: string): string => `tag:${encodeURIComponent(tag)}`;

/** Every response a change shows on: the article's page, the list and its tags' pages, before and after. */
export function changeTags(article: ArticleRecord, previous?: ArticleRecord): string[] {
  const tags = new Set([articleTag(article.slug), LIST_TAG]);
  for (const tag of article.tags) tags.add(tagTag(tag));
  if (previous) {
    tags.add(articleTag(previous.slug));
    for (const tag of previous.tags) tags.add(tagTag(tag));
  }
  return [...tags];
}

/** A list page shows the list, or one tag's articles (the tag was checked by the handler). */
export function listPageTags(event: H3Event): string[] {
  const tag = event.url.searchParams.get("tag");
  return [tag === null ? LIST_TAG : tagTag(tag.trim())];
}
