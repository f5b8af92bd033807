import { definePlugin } from "@vellum/core";
import { ArticleApplier } from "./apply.js";
import { Backpressure } from "./backpressure.js";
import { type CursorCodec, createCursorCodec } from "./cursor.js";
import { CreateIntake } from "./intake.js";
import { articlesMigrations } from "./migrations/index.js";
import { ARTICLES_SETTINGS, type ArticlesOptions, backoff } from "./options.js";
import { registerReadRoutes } from "./routes/read.js";
import { registerWriteRoutes } from "./routes/write.js";
import { createSanitizer } from "./sanitize.js";
import { createArticlesService } from "./service.js";
import { ArticleStore } from "./store.js";
import type { ArticlesTables } from "./tables.js";

/**
 * Articles (contract §5): routes, the queued create path with group commit, the tables, the
 * `article:*` hooks (declared here, with their kinds) and the read-only `articles` service.
 */
export const articles = definePlugin<ArticlesOptions, ArticlesTables>({
  name: "articles",
  settings: ARTICLES_SETTINGS,
  hooks: {
    "article:commit": "commit",
    "article:afterCreate": "isolated",
    "article:afterUpdate": "isolated",
    "article:afterDelete": "isolated",
  },
  setup(ctx) {
    const options = ctx.options;
    ctx.migrations(articlesMigrations);

    const db = ctx.db;
    const store = new ArticleStore(db);
    const queue = ctx.queue();
    const deps = { db, store, queue };
    const lag = ctx.metrics.histogram({
      name: "service_articles_apply_lag_seconds",
      help: "Seconds from accepting a create (its 202) to applying it",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    });
    const applier = new ArticleApplier({ ...deps, write: ctx.write, onApplied: (seconds) => lag.observe(seconds) });
    queue.process((job, w) => applier.applyQueued(job, w), {
      batchSize: options.batchSize,
      maxAttempts: options.maxAttempts,
      backoffMs: backoff(options.retryBaseMs),
      appliedAfterPrune: async (id) => (await store.byId(db, id)) !== undefined,
    });

    let codec: CursorCodec | undefined;
    ctx.onStart(async () => {
      codec = createCursorCodec(options.cursorSecret ?? (await ctx.secret("cursor-secret")));
    });
    const cursor = () => {
      if (!codec) throw new Error("articles: list cursors are available once the instance has started");
      return codec;
    };

    const refusals = ctx.metrics.counter({
      name: "service_articles_create_refusals_total",
      help: "Creates refused with 503 because the articles queue held maxQueued waiting jobs",
    });
    const backpressure = new Backpressure(queue, options.maxQueued, () => refusals.inc());
    const sanitize = createSanitizer({ mediaPrefix: options.mediaPrefix });
    registerReadRoutes(ctx.router, { prefix: options.prefix, db, store, applier, cursor });
    const intake = new CreateIntake(deps, ctx.write);
    registerWriteRoutes(ctx.router, { prefix: options.prefix, applier, intake, backpressure, sanitize });
    ctx.provide("articles", createArticlesService(db, store));
  },
});
