import {
  type ArticlesService,
  checkSlug,
  json,
  type PluginRouter,
  type RouteSchema,
  readJsonBody,
  Type,
  validationFailed,
} from "@vellum/core";

export const PURGE_PATH = "/api/v1/cache/purge";

export interface PurgeRouteDeps {
  /** The article's current tags, when an articles service is installed. */
  articles(): ArticlesService | undefined;
  purge(tags: string[]): Promise<void>;
}

/**
 * What the route accepts and answers. `slug` is required but of any type here: the handler checks
 * it, so that a value that is not a slug (a number or null included) is the contract's
 * `invalid_slug`, not `validation_failed`, which is kept for a missing slug.
 */
const purgeSchema: RouteSchema = {
  summary: "Purges an article's cached responses: its page, the list and its tags' pages",
  description:
    "In every process on the database and, when CDN forwarding is on, at the CDN. A slug with no article purges " +
    "its page only; without the articles plugin nothing is purged. Rate limited to 5 a minute per client IP.",
  tags: ["cache"],
  body: Type.Object({
    slug: Type.Unknown({
      description: "The article's slug: a string matching `^[a-z0-9_-]{1,200}$` (else 400 `invalid_slug`)",
      examples: ["hello-world"],
    }),
  }),
  response: {
    200: {
      description: "Purged",
      body: Type.Object({ purged: Type.Literal(true), slug: Type.String() }),
    },
    400: { description: "`invalid_slug`: not a slug; `validation_failed`: no slug" },
    429: { description: "More than 5 purges a minute from this client", headers: { "Retry-After": "Seconds to wait" } },
  },
};

/**
 * `POST /api/v1/cache/purge {"slug"}` (key and CSRF, 5 a minute per client IP): purges what the
 * article shows on, as a change of it would (its page, the list, its tags' pages: the articles
 * service's `cacheTags`), in every process on the database and, when forwarding is on, at the CDN.
 * A slug with no article purges its page only; without the articles plugin there is nothing to purge.
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
    { rateLimit: { name: "cache-purge", limit: 5, windowMs: 60_000 }, schema: purgeSchema },
  );
}
