import { createTestVellum, type TestVellum } from "@vellum/core/testing";
import { search } from "../src/index.js";
import type { SearchOptions } from "../src/options.js";
import type { SearchResponseBody } from "../src/routes/search.js";
import { type ArticleInput, type FixtureArticles, fixtureArticles } from "./fixtures/articles-fixture.js";

export interface Harness {
  t: TestVellum;
  articles: FixtureArticles;
  search(q: string, params?: Record<string, string>): Promise<SearchResponseBody>;
}

export async function boot(
  options: { search?: Partial<SearchOptions>; features?: string[]; dataDir?: string } = {},
): Promise<Harness> {
  const articles = fixtureArticles();
  const t = await createTestVellum({
    plugins: [articles.plugin, search({ rateLimit: false, autoRepair: false, ...options.search })],
    config: { features: options.features ?? [] },
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
  });
  return {
    t,
    articles,
    async search(q, params = {}) {
      const query = new URLSearchParams({ q, ...params });
      const res = await t.fetch(`/api/v1/search?${query}`);
      if (res.status !== 200) throw new Error(`search answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as SearchResponseBody;
    },
  };
}

export const slugs = (body: SearchResponseBody) => body.results.map((r) => r.slug);

export function article(slug: string, title: string, content: string, tags: string[] = []): ArticleInput {
  return { slug, title, content, tags };
}
