import { type ArticlesService, checkSlug, json, type PluginRouter, readJsonBody } from "@vellum/core";
import { validationFailed } from "@vellum/core";

export const PURGE_PATH = "/api/v1/cache/purge";

export interface PurgeRouteDeps {
  /** The article's current tags, when an articles service is installed. */
  articles(): ArticlesService | undefined;
  purge(tags: string[]): Promise<void>;
}

/**
 * `POST /api/v1/cache/purge {"slug"}` (key and CSRF, 5 a minute per client IP): purges what the
 * article shows on, as a change of it would (its page, the list, its tags' pages: the articles
 * service's `cacheTags`), here and, when forwarding is on, at the CDN. A slug with no article
 * purges its page only; without the articles plugin there is nothing to purge.
 */
export function registerPurgeRoute(router: PluginRouter, deps: PurgeRouteDeps): void {
  router.post(
    PURGE_PATH,
    async (event) => {
      const { slug: field } = await readJsonBody(event);
      if (field === undefined) throw validationFailed([{ field: "slug", message: "is required" }]);
      const slug = checkSlug(field);
      await deps.purge((await deps.articles()?.cacheTags(slug)) ?? []);
      return json({ purged: true, slug });
    },
    { rateLimit: { name: "cache-purge", limit: 5, windowMs: 60_000 } },
  );
}
