import { type ArticlesService, definePlugin, type RouteMeta, type VellumPluginContext } from "@vellum/core";
import { toSearchDocument } from "./document.js";
import { Fts5Engine } from "./engine/fts5/engine.js";
import { removeLeftovers } from "./engine/fts5/generations.js";
import { failureReason, SearchErrors } from "./errors.js";
import { indexStatus, isStale } from "./index-status.js";
import { searchMigrations } from "./migrations/index.js";
import { checkRateLimit, SEARCH_DEFAULTS, SEARCH_SETTINGS, type SearchOptions } from "./options.js";
import { ReindexController } from "./reindex.js";
import { reindexStatusHandler, startReindexHandler } from "./routes/admin.js";
import { relatedHandler, suggestTagsHandler } from "./routes/ai.js";
import { searchHandler } from "./routes/search.js";
import { reindexStatusSchema, relatedSchema, searchSchema, startReindexSchema, suggestTagsSchema } from "./schemas.js";
import type { SearchService } from "./service.js";
import type { SearchTables } from "./tables.js";

/** The articles service when the articles plugin is installed (search works without it, unfilled). */
function articlesOf(ctx: VellumPluginContext<SearchOptions, SearchTables>): () => ArticlesService | undefined {
  return () => ctx.tryInject("articles");
}

function registerMetrics(ctx: VellumPluginContext<SearchOptions, SearchTables>) {
  const queries = ctx.metrics.counter({
    name: "service_search_queries_total",
    help: "Search requests by how they were answered (plan kind, or degraded); never by query",
    labelNames: ["plan"],
  });
  const duration = ctx.metrics.histogram({
    name: "service_search_query_duration_seconds",
    help: "Time to plan and run a search query, by plan kind",
    labelNames: ["plan"],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
  });
  return (plan: string, seconds: number) => {
    queries.inc({ plan });
    duration.observe({ plan }, seconds);
  };
}

/**
 * Full-text search over articles (contract §6): SQLite FTS5 in the application database,
 * indexed inside each article write's transaction, with a non-destructive reindex and the beta
 * `ai` endpoints. Depends on no other plugin: it listens to `article:*` hooks and reads the
 * `articles` service only to rebuild and to detect a stale index.
 */
export const search = definePlugin<SearchOptions, SearchTables>({
  name: "search",
  optionalDependsOn: ["articles"],
  settings: SEARCH_SETTINGS,
  defaults: SEARCH_DEFAULTS,
  checkSettings: checkRateLimit,
  hooks: { "search:indexed": "isolated", "search:removed": "isolated" },
  commands: {
    reindex: { description: "Rebuild the search index beside the live one, then swap; search and writes keep working" },
  },
  setup(ctx) {
    const options = ctx.options;
    ctx.migrations(searchMigrations);
    const engine = new Fts5Engine(ctx.db, {
      onWriteFailure: (error, generation) =>
        ctx.captureError(SearchErrors.indexWriteFailed([generation, failureReason(error)], { cause: error })),
    });
    const articles = articlesOf(ctx);
    const controller = new ReindexController(engine, articles, options.reindexBatchSize);

    // Optional: search runs without the articles plugin (unfilled). A failure here is rolled back
    // to the kernel's savepoint and reported; the article still commits and the index reads as
    // stale until the repair job rebuilds it.
    const onArticles = { optional: true } as const;
    ctx.hooks.hook(
      "article:commit",
      async ({ op, article, trx, context }) => {
        const started = performance.now();
        if (op === "delete") await engine.remove(trx, article.id);
        else await engine.index(trx, toSearchDocument(article));
        context.searchIndexMs = performance.now() - started;
      },
      onArticles,
    );
    // Announced only when the subscriber above finished: after a failure the kernel rolled back,
    // the index has no entry to announce.
    const announce =
      (name: "search:indexed" | "search:removed") =>
      async ({ article, context }: { article: { id: string }; context: Record<string, unknown> }) => {
        const durationMs = context.searchIndexMs;
        if (typeof durationMs !== "number") return;
        await ctx.hooks.callHook(name, { kind: "article", id: article.id, durationMs });
      };
    ctx.hooks.hook("article:afterCreate", announce("search:indexed"), onArticles);
    ctx.hooks.hook("article:afterUpdate", announce("search:indexed"), onArticles);
    ctx.hooks.hook("article:afterDelete", announce("search:removed"), onArticles);
    ctx.healthComponent({ name: "search", readiness: true, check: () => indexStatus(engine, articles()) });

    const limited = (name: string): RouteMeta =>
      options.rateLimit
        ? { rateLimit: { name, limit: options.rateLimit.limit, windowMs: options.rateLimit.windowMs } }
        : {};
    const rateLimited = options.rateLimit !== false;
    const observe = registerMetrics(ctx);
    ctx.router.get(options.path, searchHandler({ engine, observe, report: (error) => ctx.captureError(error) }), {
      ...limited("search"),
      schema: searchSchema(rateLimited),
    });
    const admin = {
      engine,
      controller,
      hasSource: () => articles() !== undefined,
      report: (error: unknown) => ctx.captureError(error, { task: "reindex" }),
    };
    const adminMeta: RouteMeta = { auth: "key", csrf: false, apiKeyHeader: true };
    ctx.router.post(options.reindexPath, startReindexHandler(admin), {
      ...adminMeta,
      schema: startReindexSchema,
      action: { label: "Rebuild the search index", component: "search" },
    });
    ctx.router.get(options.reindexPath, reindexStatusHandler(admin), { ...adminMeta, schema: reindexStatusSchema });
    ctx.router.get(`${options.aiPrefix}/related/:slug`, relatedHandler(engine), {
      feature: "ai",
      ...limited("ai"),
      schema: relatedSchema(rateLimited),
    });
    ctx.router.post(`${options.aiPrefix}/suggest-tags`, suggestTagsHandler(engine), {
      feature: "ai",
      ...limited("ai"),
      schema: suggestTagsSchema(rateLimited),
    });

    const service: SearchService = {
      engine,
      reindex: (opts) => controller.run(opts),
      reindexStatus: () => controller.status(),
      stats: () => engine.stats(),
    };
    ctx.provide("search", service);
    ctx.command("reindex", async (io) => {
      if (!articles()) {
        io.print("reindex: the articles plugin is not installed; there is nothing to index");
        return 1;
      }
      const summary = await controller.run({
        onProgress: (p) => io.progress(p.done, p.total ?? undefined, "reindex"),
      });
      const seconds = (summary.durationMs / 1000).toFixed(1);
      io.print(`reindex: ${summary.documents} documents in ${seconds} s (generation ${summary.generation})`);
      return 0;
    });

    ctx.onStart(async () => {
      await removeLeftovers(ctx.db);
      const source = articles();
      if (!source || (await source.count()) === 0) await engine.ensureIndex();
    });

    if (options.autoRepair) {
      let staleBefore = false;
      ctx.schedule(
        "repair",
        { everyMs: options.repairIntervalMs, jitterMs: options.repairIntervalMs / 10, runImmediately: true },
        async () => {
          const source = articles();
          if (!source || controller.running) return;
          const stats = await engine.stats();
          if (stats.building?.alive) return;
          const stale = await isStale(stats, source);
          const repair = stats.state !== "ok" || (stale && staleBefore);
          staleBefore = stale && !repair;
          if (repair) await controller.run();
        },
      );
    }
  },
});
