import { checkSlug, intQuery, type PluginRouter, pathParam, rawJson, thenNow } from "@vellum/core";
import type { ArticleApplier } from "../apply.js";
import { articleTag, listPageTags } from "../cache-tags.js";
import type { CursorCodec } from "../cursor.js";
import { ArticleErrors } from "../errors.js";
import type { ArticleStore } from "../store.js";
import type { Db } from "../tables.js";
import { parseTagQuery } from "../validation.js";
import { getSchema, listSchema } from "./schemas.js";

export interface ReadRouteDeps {
  prefix: string;
  db: Db;
  store: ArticleStore;
  applier: ArticleApplier;
  cursor(): CursorCodec;
}

/** The id of a summary in the feed's JSON text (one parse per page, for the cursor). */
const summaryId = (doc: string) => (JSON.parse(doc) as { id: string }).id;

/** `GET <prefix>` (newest first, keyset pages, tag filter) and `GET <prefix>/:slug`. */
export function registerReadRoutes(router: PluginRouter, deps: ReadRouteDeps): void {
  const { prefix, db, store, applier } = deps;

  // Both reads answer synchronously when the connection is free (`PreparedQuery.rowsNow`): no
  // promise is made between the request and its reply.
  router.get(
    prefix,
    (event) => {
      const limit = intQuery(event, "limit", { min: 1, max: 100, fallback: 20 });
      const tag = parseTagQuery(event.url.searchParams.get("tag"));
      const cursor = event.url.searchParams.get("cursor");
      const beforeId = cursor === null ? undefined : deps.cursor().decode(cursor, tag);
      return thenNow(store.page(db, { limit: limit + 1, beforeId, tag }), (docs) => {
        const page = docs.slice(0, limit);
        const last = page.at(-1);
        const next_cursor = docs.length > limit && last ? deps.cursor().encode(summaryId(last), tag) : null;
        return rawJson(`{"articles":[${page.join(",")}],"next_cursor":${JSON.stringify(next_cursor)}}`);
      });
    },
    { cacheTags: listPageTags, schema: listSchema },
  );

  /** An article not found at first: a create of its slug may still be queued. */
  async function queuedArticle(slug: string) {
    // Apply it now, unless it failed before (then the worker's backoff decides when it runs
    // again). If it fails now, the queue retries it and reports the failure on the job; a read
    // only answers what exists.
    await applier.ensureApplied(slug, true).catch(() => undefined);
    const article = await store.bySlugJson(db, slug);
    if (article === undefined) throw ArticleErrors.notFound();
    return rawJson(article);
  }

  router.get(
    `${prefix}/:slug`,
    (event) => {
      const slug = checkSlug(pathParam(event, "slug"));
      return thenNow(store.bySlugJson(db, slug), (article) =>
        article === undefined ? queuedArticle(slug) : rawJson(article),
      );
    },
    { cacheTags: (event) => [articleTag(pathParam(event, "slug"))], schema: getSchema },
  );
}
