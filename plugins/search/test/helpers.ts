import { definePlugin, type KernelInfo, type QueryListener, type RegisteredComponent } from "@vellum/core";
import { createTestVellum, type TestVellum } from "@vellum/core/testing";
import type Database from "better-sqlite3";
import { search } from "../src/index.js";
import type { SearchOptions } from "../src/options.js";
import type { SearchResponseBody } from "../src/routes/search.js";
import { type ArticleInput, type FixtureArticles, fixtureArticles } from "./fixtures/articles-fixture.js";

export interface Harness {
  t: TestVellum;
  articles: FixtureArticles;
  search(q: string, params?: Record<string, string>): Promise<SearchResponseBody>;
  /** A registered health component, as the health plugin finds it (`ctx.kernel.components()`). */
  component(name: string): RegisteredComponent;
}

/** A plugin that keeps what the kernel tells plugins about itself (the components registered). */
export function kernelProbe() {
  let kernel: KernelInfo | undefined;
  const plugin = definePlugin({
    name: "kernel-probe",
    setup(ctx) {
      kernel = ctx.kernel;
    },
  })();
  return {
    plugin,
    component(name: string): RegisteredComponent {
      const found = kernel?.components().find((c) => c.name === name);
      if (!found) throw new Error(`no health component ${name} is registered`);
      return found;
    },
  };
}

export async function boot(
  options: { search?: Partial<SearchOptions>; features?: string[]; dataDir?: string; onQuery?: QueryListener } = {},
): Promise<Harness> {
  const articles = fixtureArticles();
  const probe = kernelProbe();
  const t = await createTestVellum({
    plugins: [articles.plugin, search({ rateLimit: false, autoRepair: false, ...options.search }), probe.plugin],
    config: {
      features: options.features ?? [],
      ...(options.onQuery ? { database: { onQuery: options.onQuery } } : {}),
    },
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
    component: probe.component,
  };
}

export const slugs = (body: SearchResponseBody) => body.results.map((r) => r.slug);

export function article(slug: string, title: string, content: string, tags: string[] = []): ArticleInput {
  return { slug, title, content, tags };
}

/** Files a fresh build in `search_generations` through `raw`, another process's connection; returns its generation. */
export function insertFreshBuild(raw: Database.Database): number {
  const now = new Date().toISOString();
  const row = raw
    .prepare(
      `INSERT INTO search_generations (state, layout, started_at, heartbeat_at)
      VALUES ('building', 1, ?, ?) RETURNING generation`,
    )
    .get(now, now) as { generation: number };
  return row.generation;
}
